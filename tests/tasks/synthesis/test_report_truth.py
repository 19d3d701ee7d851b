"""A stopped run's report says so: a partial banner, each app as it ended ("stopped", never
"completed"), no answer from a screen a person saved outside the app (the home screen), and
what people did, with time and phone."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.config import load_settings
from core.models import (
    Plan,
    Query,
    RunEvent,
    RunEventKind,
    StepRecord,
    SubTask,
    SubTaskResult,
    SubTaskStatus,
    Trace,
)
from droidretriever.testing import draw_capture, menu_card
from storage import FakeObjectStore
from tasks.run_steps import report_run
from tasks.synthesis import list_interventions, render_report_terminal

SHOP = SubTask(id="shop-1", app_label="Meituan", package="com.sankuai.meituan",
               goal="Big Mac price", search_term="Big Mac")
SETTINGS_APP = SubTask(id="set-1", app_label="Settings", package="com.android.settings",
                       goal="Which permissions does Meituan have?")
PLAN = Plan(query=Query(text="Big Mac price and Meituan's permissions"),
            subtasks=(SHOP, SETTINGS_APP), decomposer="rules")
AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def _events() -> list[RunEvent]:
    def at(second: int) -> datetime:
        return AT.replace(second=second)

    tap = StepRecord(step=1, subtask_id="shop-1", policy="user", intervention=True)
    return [
        RunEvent(run_id="run-t", kind=RunEventKind.STEP, seq=1, at=at(1), subtask_id="shop-1",
                 message="copilot step", step=StepRecord(step=1, subtask_id="shop-1")),
        RunEvent(run_id="run-t", kind=RunEventKind.CONTROL, seq=2, at=at(2), subtask_id="shop-1",
                 actor="browser 3f2a", serial="emulator-5554", message="took over emulator-5554"),
        RunEvent(run_id="run-t", kind=RunEventKind.STEP, seq=3, at=at(3), subtask_id="shop-1",
                 actor="browser 3f2a", message="text entered, 14 characters", step=tap),
        RunEvent(run_id="run-t", kind=RunEventKind.STEP, seq=3, at=at(3), subtask_id="shop-1",
                 actor="browser 3f2a", message="text entered, 14 characters", step=tap),  # twice
        RunEvent(run_id="run-t", kind=RunEventKind.CONTROL, seq=4, at=at(4), actor="browser 3f2a",
                 serial="emulator-5556", message="paused the copilot on emulator-5556"),
        RunEvent(run_id="run-t", kind=RunEventKind.CONTROL, seq=5, at=at(5), actor="browser 3f2a",
                 message="asked to stop and report"),
    ]


def _results(store: FakeObjectStore) -> list[SubTaskResult]:
    shop = draw_capture("cap-shop-1", SHOP.package, [menu_card(300, "Big Mac Meal", "¥25.5")],
                        title="Meituan · McDonald's")
    home = draw_capture("cap-set-1-user", SETTINGS_APP.package,
                        [menu_card(200, "Chrome", "Gmail", "Meituan")], title="Home screen")
    home_capture = home.capture.model_copy(update={"screen_package": "com.android.launcher3",
                                                   "subtask_id": "set-1"})
    for drawn in (shop, home):
        store.put_bytes(drawn.capture.image_key, drawn.png, "image/png")
    return [
        SubTaskResult(subtask_id="shop-1", status=SubTaskStatus.COMPLETED, captures=(shop.capture,),
                      trace=Trace(subtask_id="shop-1"), device="emulator-5554"),
        SubTaskResult(subtask_id="set-1", status=SubTaskStatus.STOPPED, captures=(home_capture,),
                      trace=Trace(subtask_id="set-1"), device="emulator-5556",
                      reason="stopped by a person before a page of Settings was captured"),
    ]


def test_a_stopped_run_reports_partial_with_what_people_did(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DROIDRETRIEVER_LLM__SYNTHESIZER__BASE_URL", raising=False)
    store = FakeObjectStore()
    files = report_run(load_settings(), store, run_id="run-t", plan=PLAN, results=_results(store),
                       stopped=True, events=_events())
    report = files.report

    assert {a.app_label: a.status for a in report.apps} == {
        "Meituan": SubTaskStatus.COMPLETED, "Settings": SubTaskStatus.STOPPED}
    assert "Settings" in report.partial and "Meituan" not in report.partial
    # The home screen a person saved is shown, never cited: every citation is Meituan's page.
    assert report.citations and {c.capture_id for c in report.citations} == {"cap-shop-1"}
    assert "Chrome" not in report.markdown

    people = [(i.at.second, i.serial, i.app_label, i.what) for i in report.interventions]
    assert people == [(2, "emulator-5554", "Meituan", "took over emulator-5554"),
                      (3, "emulator-5554", "Meituan", "text entered, 14 characters"),
                      (4, "emulator-5556", "Settings", "paused the copilot on emulator-5556"),
                      (5, None, "", "asked to stop and report")]

    markdown = store.get_bytes(files.markdown_key).decode()
    assert "> **Partial report:** a person stopped the run before Settings finished" in markdown
    assert "- **Settings**: stopped (stopped by a person before a page of Settings" in markdown
    assert "## People stepped in" in markdown
    assert "- 03:04:03 UTC · emulator-5554 (Meituan) · browser 3f2a: text entered, 14 characters" \
        in markdown
    page = store.get_bytes(files.html_key).decode()
    assert 'id="partial"' in page and "People stepped in" in page
    assert "Settings: stopped" in page and "Settings: completed" not in page
    terminal = render_report_terminal(report)
    assert terminal.startswith("> **Partial report:**") and "People stepped in" in terminal


def test_only_a_persons_acts_are_interventions() -> None:
    found = list_interventions(_events(), {"shop-1": "Meituan"}, {"shop-1": "emulator-5554"})
    assert [i.what for i in found] == ["took over emulator-5554", "text entered, 14 characters",
                                       "paused the copilot on emulator-5556",
                                       "asked to stop and report"]  # the copilot's step is not one
    assert all(i.actor == "browser 3f2a" for i in found)
