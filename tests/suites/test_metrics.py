"""The paper's run metrics of one task: decomposition, navigation, steps, interventions, tokens."""

from __future__ import annotations

from core.models import (
    Bounds,
    Capture,
    ModelCall,
    PageMode,
    Plan,
    Query,
    StepRecord,
    SubTask,
    SubTaskResult,
    SubTaskStatus,
    TokenLedger,
    TokenUsage,
    Trace,
    UIElement,
)
from suites import SuiteTask
from suites.metrics import (
    measure_task,
    navigated_apps,
    plan_apps_right,
    plan_mode_right,
)

TASK = SuiteTask.model_validate({
    "id": "g_demo_prices", "study": "general", "query": "Big Mac price on Meituan and Ele.me?",
    "apps": ["Meituan", "Ele.me"], "page_mode": "focused", "access": "open_web",
    "scoring_points": ["¥25.5", "¥26"], "tolerances": {"¥26": "±0.5"},
    "paths": {"Meituan": [{"open_app": "Meituan"}], "Ele.me": [{"open_app": "Ele.me"}]},
})


def _subtask(app: str, sid: str, mode: PageMode = PageMode.FOCUSED) -> SubTask:
    return SubTask(id=sid, app_label=app, package=f"pkg.{sid}", goal="price", page_mode=mode)


def _plan(*subtasks: SubTask) -> Plan:
    return Plan(query=Query(text=TASK.query), subtasks=subtasks, decomposer="rules")


def _capture(sid: str, *texts: str) -> Capture:
    elements = tuple(UIElement(id=f"e{i}", text=t, bounds=Bounds(left=0, top=i * 10, right=100, bottom=i * 10 + 9))
                     for i, t in enumerate(texts))
    return Capture(id=f"{sid}-c", run_id="run-1", subtask_id=sid, package=f"pkg.{sid}",
                   image_key="k", width=100, height=100, elements=elements)


def _result(sid: str, status: SubTaskStatus, *texts: str, steps: int = 2,
            person: int = 0, exposed: int = 0) -> SubTaskResult:
    records = tuple(StepRecord(step=i, subtask_id=sid, intervention=i < person, exposed_elements=exposed)
                    for i in range(steps))
    captures = (_capture(sid, *texts),) if texts else ()
    return SubTaskResult(subtask_id=sid, status=status, captures=captures,
                         trace=Trace(subtask_id=sid, steps=records))


def test_app_level_decomposition_wants_exactly_the_tasks_apps() -> None:
    assert plan_apps_right(TASK, _plan(_subtask("Meituan", "m"), _subtask("Ele.me", "e")))
    assert not plan_apps_right(TASK, _plan(_subtask("Meituan", "m")))
    assert not plan_apps_right(TASK, _plan(_subtask("Meituan", "m"), _subtask("Ele.me", "e"),
                                           _subtask("JD", "j")))
    assert not plan_apps_right(TASK, None)


def test_page_mode_decomposition_checks_every_sub_task_of_a_task_app() -> None:
    assert plan_mode_right(TASK, _plan(_subtask("Meituan", "m"), _subtask("JD", "j", PageMode.LIST_VIEW)))
    assert not plan_mode_right(TASK, _plan(_subtask("Meituan", "m"),
                                           _subtask("Ele.me", "e", PageMode.LIST_VIEW)))
    assert not plan_mode_right(TASK, _plan(_subtask("JD", "j")))  # no task app planned


def test_an_app_is_navigated_when_a_completed_sub_task_captured_one_of_the_points() -> None:
    plan = _plan(_subtask("Meituan", "m"), _subtask("Ele.me", "e"))
    results = [_result("m", SubTaskStatus.COMPLETED, "巨无霸", "25.50元"),  # the value, another spelling
               _result("e", SubTaskStatus.COMPLETED, "巨无霸 ¥19")]
    assert navigated_apps(TASK, plan, results) == ("Meituan",)
    within = [_result("e", SubTaskStatus.COMPLETED, "¥26.4")]  # within ±0.5 of ¥26
    assert navigated_apps(TASK, plan, within) == ("Ele.me",)
    failed = [_result("m", SubTaskStatus.FAILED, "¥25.5")]  # captured, but the sub-task failed
    assert navigated_apps(TASK, plan, failed) == ()


def test_steps_interventions_and_tokens_per_role_text_and_image_apart() -> None:
    plan = _plan(_subtask("Meituan", "m"), _subtask("Ele.me", "e"))
    results = [_result("m", SubTaskStatus.COMPLETED, "¥25.5", steps=3, person=2, exposed=40),
               _result("e", SubTaskStatus.NEEDS_USER, steps=1)]
    ledger = TokenLedger.of([
        ModelCall(role="navigator", model="qwen", usage=TokenUsage(prompt=900, image=600, completion=40, calls=1)),
        ModelCall(role="navigator", model="qwen", usage=TokenUsage(prompt=100, completion=10, calls=1, failed=1)),
        ModelCall(role="decomposer", model="qwen", usage=TokenUsage(prompt=300, completion=50, calls=1)),
    ])
    metrics = measure_task(TASK, plan, results, tokens=ledger, wall_s=4.5)
    assert (metrics.steps, metrics.intervention_steps, metrics.paused) == (4, 2, True)
    assert metrics.intervention_rate == 0.5
    assert metrics.statuses == {"Meituan": "completed", "Ele.me": "needs_user"}
    assert metrics.navigation == 0.5 and metrics.apps_right and metrics.mode_right
    assert metrics.points_captured == 2  # ¥25.5 on the page is also within ±0.5 of ¥26
    assert metrics.exposed_elements == 120 and metrics.wall_s == 4.5
    by_role = {t.role: t for t in metrics.tokens}
    assert [t.role for t in metrics.tokens] == ["decomposer", "navigator"]
    navigator = by_role["navigator"]
    assert (navigator.calls, navigator.failed, navigator.text_tokens, navigator.image_tokens,
            navigator.completion_tokens) == (2, 1, 400, 600, 50)
    assert metrics.model_calls == 3


def test_a_run_without_plan_or_steps_measures_zero_not_an_error() -> None:
    metrics = measure_task(TASK, None, [])
    assert (metrics.apps_right, metrics.mode_right, metrics.navigation) == (False, False, 0.0)
    assert metrics.intervention_rate is None and not metrics.paused and metrics.model_calls == 0
    told = measure_task(TASK, None, [], paused=True)
    assert told.paused
