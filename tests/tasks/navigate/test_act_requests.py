"""A request to act, run end to end on a virtual phone: planned as one, paused where the act is
done (its button never pressed), and reported "not done", never "completed"."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from core.config import BudgetSettings
from core.models import (
    ActKind,
    InstalledApp,
    Plan,
    Query,
    RiskCategory,
    SubTaskResult,
    SubTaskStatus,
    Tap,
    Trace,
    new_id,
)
from device_farm.adb_driver import AdbDriver
from device_farm.sim import SimServer
from inference.memory import RouteMemory
from inference.perception import Perceiver
from inference.rules.decomposer import decompose_by_rules
from storage import FakeObjectStore, RunEventPublisher
from tasks.control import RedisControlChannel
from tasks.navigate import Copilot, NavigateRequest, ObjectStoreBlobs, navigate_subtask
from tasks.run_steps import collect_app_statuses, collect_captures
from tasks.synthesis import publish_report, render_report_terminal, synthesize_report

CHINA_MOBILE = InstalledApp(package="com.greenpoint.android.mc10086.activity", label="China Mobile")
NOT_DONE = "not done: the agent does not top up; the page is open for you"


@pytest.fixture()
def copilot(catalog_phone: tuple[SimServer, AdbDriver], perceiver: Perceiver,
            redis_url: str) -> Iterator[Copilot]:
    """A copilot with no models (rules, skills, explorer) on a fresh phone of the catalog."""
    server, driver = catalog_phone
    server.control.reset("boot")
    client = redis.Redis.from_url(redis_url)
    store = FakeObjectStore()
    try:
        yield Copilot(driver=driver, perceiver=perceiver, store=store, budgets=BudgetSettings(),
                      events=RunEventPublisher(client, store), control=RedisControlChannel(client),
                      memory=RouteMemory(ObjectStoreBlobs(store)), pause_poll_s=0.1)
    finally:
        client.close()


def _report(plan: Plan, results: list[SubTaskResult], store: FakeObjectStore) -> tuple[str, str]:
    """The run's report.md as stored, and the report as the CLI prints it."""
    captures = collect_captures(results)
    report = synthesize_report(run_id=new_id("run"), query=plan.query, captures=captures,
                               apps=collect_app_statuses(plan, results), store=store, threshold=0.8)
    files = publish_report(report, captures, store)
    return store.get_bytes(files.markdown_key).decode(), render_report_terminal(report)


@pytest.mark.parametrize("question", ["给我的手机充值50元", "Top up my phone by 50 yuan"])
def test_a_request_to_top_up_pauses_where_it_is_done_and_is_never_reported_completed(
        copilot: Copilot, catalog_phone: tuple[SimServer, AdbDriver], question: str) -> None:
    # Before, the run read the app's first page, captured the top-up records and reported the app
    # "completed" with its balance, never saying that the product does not pay.
    plan = decompose_by_rules(Query(text=question, apps=("China Mobile",)), [CHINA_MOBILE])
    assert plan.act_request is not None and plan.act_request.kind is ActKind.TOP_UP
    (task,) = plan.subtasks
    run_id = new_id("run")
    paused = navigate_subtask(copilot, NavigateRequest(run_id=run_id, subtask=task))
    assert paused.status is SubTaskStatus.NEEDS_USER, paused.reason
    assert paused.risk_category is RiskCategory.PAYMENT
    assert '"充值" is where to top up: the agent does not top up' in paused.reason
    # The agent pressed nothing of the act: the phone is on the page with its button, for the person.
    assert not any(isinstance(s.action, Tap) and "充值" in s.action.reason for s in paused.trace.steps)
    _, driver = catalog_phone
    assert driver.observe().activity.endswith("HomeActivity")
    assert isinstance(copilot.store, FakeObjectStore)

    markdown, terminal = _report(plan, [paused], copilot.store)
    assert f"- **China Mobile**: {NOT_DONE}" in markdown, markdown
    assert "completed" not in markdown.casefold()
    assert terminal.startswith(f"> **China Mobile: {NOT_DONE.replace('not done: ', 'not done:** ', 1)}")

    # The person went on from the pause: the sub-task ends there, and the report still says not done.
    resumed = navigate_subtask(copilot, NavigateRequest(run_id=run_id, subtask=task, resumed=1))
    assert resumed.status is SubTaskStatus.COMPLETED and resumed.reason == "a person took over where to top up"
    assert not resumed.trace.steps
    markdown, _ = _report(plan, [resumed], copilot.store)
    assert f"- **China Mobile**: {NOT_DONE}" in markdown and "completed" not in markdown.casefold()


def test_a_request_whose_page_is_not_reached_says_so_and_is_not_done_either() -> None:
    plan = decompose_by_rules(Query(text="Top up my phone by 50 yuan", apps=("China Mobile",)), [CHINA_MOBILE])
    (task,) = plan.subtasks
    failed = SubTaskResult(subtask_id=task.id, status=SubTaskStatus.FAILED, trace=Trace(subtask_id=task.id),
                           reason="step budget of 15 spent")
    (app,) = collect_app_statuses(plan, [failed])
    assert app.status is SubTaskStatus.NOT_DONE
    assert app.reason == ("the agent does not top up; it did not reach the page to top up "
                          "(step budget of 15 spent)")
    # A sign-in on the way is a pause too, but not where the act is done.
    signing_in = failed.model_copy(update={"status": SubTaskStatus.NEEDS_USER, "risk_category": RiskCategory.LOGIN,
                                           "reason": "a sign-in wall"})
    (app,) = collect_app_statuses(plan, [signing_in])
    assert app.status is SubTaskStatus.NOT_DONE
    assert app.reason == "the agent does not top up; it did not reach the page to top up (a sign-in wall)"
