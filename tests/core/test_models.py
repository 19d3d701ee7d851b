"""The shared models survive JSON (Celery messages, Prefect parameters, the API) and refuse nonsense."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, TypeAdapter, ValidationError

from core.models import (
    Action,
    AppStatus,
    Back,
    Bounds,
    Capture,
    CaptureSource,
    Citation,
    Edge,
    ElementSource,
    Evaluation,
    Finish,
    Input,
    LongPress,
    OpenApp,
    PageMode,
    PageType,
    Plan,
    Point,
    Preview,
    Query,
    Report,
    RiskCategory,
    RunEvent,
    RunEventKind,
    RunManifest,
    RunStatus,
    Screen,
    Scroll,
    ScrollDirection,
    StepRecord,
    StepTimings,
    SubTask,
    SubTaskResult,
    SubTaskStatus,
    Swipe,
    Tap,
    TokenUsage,
    Trace,
    UIElement,
    Wait,
)

BOX = Bounds(left=10, top=20, right=110, bottom=80)
PRICE = UIElement(id="e1", class_name="android.widget.TextView", text="¥22.9", bounds=BOX,
                  clickable=True, source=ElementSource.HIERARCHY)
QUERY = Query(text="Is a Big Mac cheaper on Meituan or Ele.me?", apps=("Meituan", "Ele.me"))
MEITUAN = SubTask(id="meituan-1", app_label="Meituan", package="com.sankuai.meituan",
                  goal="Search Big Mac", search_term="Big Mac", page_mode=PageMode.FOCUSED)
ELEME = SubTask(id="eleme-1", app_label="Ele.me", package="me.ele", goal="Search Big Mac",
                search_term="巨无霸", page_mode=PageMode.LIST_VIEW)
PLAN = Plan(query=QUERY, subtasks=(MEITUAN, ELEME),
            edges=(Edge(source="meituan-1", target="eleme-1", info="the store's name"),),
            decomposer="rules", notes=("no model configured",))
ACTIONS: tuple[Action, ...] = (
    Tap(target="e1", reason="open the store"),
    Tap(point=Point(x=5, y=6)),
    LongPress(target="e1", duration_ms=900),
    Input(text="麦当劳 Big Mac", target="e2", submit=True),
    Scroll(direction=ScrollDirection.DOWN, fraction=0.67),
    Swipe(start=Point(x=540, y=1800), end=Point(x=540, y=600), duration_ms=300),
    Back(),
    OpenApp(package="me.ele"),
    Wait(seconds=1.5),
    Finish(reason="target page reached"),
)
EVALUATION = Evaluation(complete=False, risk=True, risk_category=RiskCategory.PAYMENT,
                        page_type=PageType.DETAILS, reason="order confirmation", evaluator="rules")
CAPTURE = Capture(id="eleme-1-a1-c1", run_id="run-1", subtask_id="eleme-1", package="me.ele",
                  image_key="runs/run-1/captures/eleme-1-a1-c1.png", frame_keys=("f0", "f1"),
                  width=1080, height=5000, elements=(PRICE,), source=CaptureSource.USER)
STEP = StepRecord(step=3, subtask_id="eleme-1", screen_key="runs/run-1/screens/3.png",
                  action=ACTIONS[3], policy="skills", evaluation=EVALUATION,
                  timings=StepTimings(observe_ms=24.5, perceive_ms=1.2, decide_ms=0.4, act_ms=3.0),
                  tokens=TokenUsage(prompt=590, completion=40, calls=1), intervention=True)
RESULT = SubTaskResult(subtask_id="eleme-1", status=SubTaskStatus.NEEDS_USER, captures=(CAPTURE,),
                       trace=Trace(subtask_id="eleme-1", steps=(STEP,)), facts=("Big Mac ¥22.9",),
                       reason="payment screen", risk_category=RiskCategory.PAYMENT,
                       device="emulator-5554", attempt=2)
REPORT = Report(run_id="run-1", query=QUERY, markdown="Cheapest: ¥22.9 [eleme-1-a1-c1(¥22.9)]",
                citations=(Citation(capture_id="eleme-1-a1-c1", quote="¥22.9", grounded=True,
                                    box=BOX, score=1.0, element_id="e1"),),
                apps=(AppStatus(app_label="Ele.me", package="me.ele",
                                status=SubTaskStatus.COMPLETED),),
                synthesizer="extractive (no model configured)")

EXAMPLES: tuple[BaseModel, ...] = (
    PLAN,
    Screen(device="emulator-5554", package="me.ele", activity=".Main", width=1080, height=2340,
           elements=(PRICE,), screenshot_key="k", fingerprint="abc"),
    Preview(step=3, action=ACTIONS[0], instruction="Tap [麦当劳]", box=BOX, policy="skills"),
    CAPTURE,
    RESULT,
    REPORT,
    RunEvent(run_id="run-1", kind=RunEventKind.SUBTASK_FINISHED, seq=7, subtask_id="eleme-1",
             message="needs_user", result=RESULT),
    RunEvent(run_id="run-1", kind=RunEventKind.PLAN_READY, plan=PLAN),
    RunManifest(run_id="run-1", query=QUERY, status=RunStatus.PAUSED, plan=PLAN,
                subtasks={"eleme-1": SubTaskStatus.NEEDS_USER}, capture_ids=("eleme-1-a1-c1",)),
)


@pytest.mark.parametrize("model", EXAMPLES, ids=lambda m: type(m).__name__)
def test_every_core_model_round_trips_through_json(model: BaseModel) -> None:
    again = type(model).model_validate_json(model.model_dump_json())
    assert again == model


def test_actions_are_a_discriminated_union_on_kind() -> None:
    adapter: TypeAdapter[list[Action]] = TypeAdapter(list[Action])
    decoded = adapter.validate_json(adapter.dump_json(list(ACTIONS)))
    assert decoded == list(ACTIONS)
    assert [a.kind for a in decoded] == [
        "tap", "tap", "long_press", "input", "scroll", "swipe", "back", "open_app", "wait", "finish"
    ]
    with pytest.raises(ValidationError, match="tag"):
        adapter.validate_python([{"kind": "pay", "target": "e9"}])


def test_models_are_frozen() -> None:
    with pytest.raises(ValidationError):
        PRICE.text = "¥0.01"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("spelling", "mode"),
    [("Multi-page", PageMode.MULTI_PAGE), ("list-view", PageMode.LIST_VIEW),
     ("list", PageMode.LIST_VIEW), ("Focused", PageMode.FOCUSED)],
)
def test_page_mode_accepts_the_papers_spellings(spelling: str, mode: PageMode) -> None:
    assert PageMode.parse(spelling) is mode


def test_invalid_values_are_refused_with_a_reason() -> None:
    with pytest.raises(ValueError, match="focused, list_view or multi_page"):
        PageMode.parse("carousel")
    with pytest.raises(ValidationError, match="cycle"):
        Plan(query=QUERY, subtasks=(MEITUAN, ELEME), decomposer="rules",
             edges=(Edge(source="meituan-1", target="eleme-1", info="x"),
                    Edge(source="eleme-1", target="meituan-1", info="y")))
    with pytest.raises(ValidationError, match="unknown sub-task"):
        Plan(query=QUERY, subtasks=(MEITUAN,), decomposer="rules",
             edges=(Edge(source="meituan-1", target="nowhere", info="x"),))
    with pytest.raises(ValidationError, match="target element id or a point"):
        Tap()
    with pytest.raises(ValidationError, match="risk category"):
        Evaluation(complete=False, risk=True)
    with pytest.raises(ValidationError, match="question is empty"):
        Query(text="   ")
    with pytest.raises(ValidationError, match="inverted"):
        Bounds(left=10, top=0, right=5, bottom=5)


def test_plan_order_and_bounds_helpers() -> None:
    assert [s.id for s in PLAN.topological_order()] == ["meituan-1", "eleme-1"]
    assert PLAN.upstream("eleme-1")[0].info == "the store's name"
    assert Bounds.parse("[10,20][110,80]") == BOX and BOX.to_uiautomator() == "[10,20][110,80]"
    assert BOX.center == Point(x=60, y=50) and BOX.contains(BOX.center)
    assert BOX.iou(BOX.shifted(dy=30)) == pytest.approx(3000 / 9000)
    assert RESULT.trace.tokens == TokenUsage(prompt=590, completion=40, calls=1)
    assert REPORT.unverified == ()
