"""A goal that asks the agent to sign in or up is the person's: whether or not the tries find the
app's page for it, the sub-task hands the phone over (needs_user), never fails."""

from __future__ import annotations

import pytest

from core.config import BudgetSettings
from core.models import PageMode, RiskCategory, SubTask, SubTaskStatus, new_id
from device_farm.adb_driver import AdbDriver
from device_farm.sim import SimServer
from inference.perception import Perceiver
from inference.rules.never_tap import goal_act
from storage import FakeObjectStore
from tasks.navigate import Copilot, NavigateRequest, navigate_subtask

SETTINGS = "com.android.settings"  # a phone's settings: no account to sign in to


@pytest.mark.parametrize("goal", ["Sign in to the app", "Create an Example account", "In Mail: log in",
                                  "Register for the app", "登录我的账号", "로그인", "アカウント作成"])
def test_a_goal_asking_to_sign_in_or_up_names_the_persons_act(goal: str) -> None:
    act = goal_act(goal)
    assert act is not None and act.category is RiskCategory.LOGIN


@pytest.mark.parametrize("goal", ["How do I sign out of the app?", "In Mail: when did I last log in?",
                                  "What did I pay last month?", "Which account is signed in?", "注册时间是哪天?"])
def test_a_goal_asking_about_signing_in_names_no_act(goal: str) -> None:
    assert goal_act(goal) is None


def _run(phone: tuple[SimServer, AdbDriver], perceiver: Perceiver, goal: str) -> tuple[SubTaskStatus, str]:
    server, driver = phone
    server.control.reset("boot")
    copilot = Copilot(driver=driver, perceiver=perceiver, store=FakeObjectStore(),
                      budgets=BudgetSettings(steps_per_subtask=6, retries=1, swipes_per_capture=0))
    subtask = SubTask(id="s1", app_label="Settings", package=SETTINGS, page_mode=PageMode.FOCUSED, goal=goal)
    result = navigate_subtask(copilot, NavigateRequest(run_id=new_id("run"), subtask=subtask))
    return result.status, result.reason


def test_a_sign_in_goal_in_an_app_without_its_page_is_handed_over(
        catalog_phone: tuple[SimServer, AdbDriver], perceiver: Perceiver) -> None:
    status, reason = _run(catalog_phone, perceiver, "Sign in to Settings")
    assert status is SubTaskStatus.NEEDS_USER, reason
    assert "the person's to do" in reason


def test_a_question_that_finds_nothing_still_fails(catalog_phone: tuple[SimServer, AdbDriver],
                                                    perceiver: Perceiver) -> None:
    status, reason = _run(catalog_phone, perceiver, "Which warp drive calibration does this phone use?")
    assert status is not SubTaskStatus.NEEDS_USER, reason
