"""A try that runs out of steps ends the sub-task ``budget_exhausted`` (a typed end, not a reason's words)."""

from __future__ import annotations

from core.config import BudgetSettings
from core.models import PageMode, SubTask, SubTaskStatus, new_id
from device_farm.adb_driver import AdbDriver
from device_farm.sim import SimServer
from inference.perception import Perceiver
from storage import FakeObjectStore
from tasks.navigate import Copilot, NavigateRequest, navigate_subtask

SETTINGS = "com.android.settings"


def _navigate(phone: tuple[SimServer, AdbDriver], perceiver: Perceiver, steps: int) -> tuple[SubTaskStatus, str]:
    server, driver = phone
    server.control.reset("boot")
    copilot = Copilot(driver=driver, perceiver=perceiver, store=FakeObjectStore(),
                      budgets=BudgetSettings(steps_per_subtask=steps, retries=1, swipes_per_capture=0))
    subtask = SubTask(id="s1", app_label="Settings", package=SETTINGS, page_mode=PageMode.FOCUSED,
                      goal="Which apps may use the camera?")
    result = navigate_subtask(copilot, NavigateRequest(run_id=new_id("run"), subtask=subtask))
    return result.status, result.reason


def test_a_spent_step_budget_ends_budget_exhausted(catalog_phone: tuple[SimServer, AdbDriver],
                                                    perceiver: Perceiver) -> None:
    status, reason = _navigate(catalog_phone, perceiver, steps=1)
    assert status is SubTaskStatus.BUDGET_EXHAUSTED, reason
    assert "step budget of 1 spent" in reason
