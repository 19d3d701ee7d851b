"""What `droidretriever ask` shows while a run goes: the plan, and for a request to act, one line
saying the agent does not do it."""

from __future__ import annotations

from rich.console import Console

from core.models import InstalledApp, ModelFallback, Query, RunEvent, RunEventKind
from droidretriever.cli.ask import _Progress
from inference.rules.decomposer import decompose_by_rules

CHINA_MOBILE = InstalledApp(package="com.greenpoint.android.mc10086.activity", label="China Mobile")


def _shown(progress: _Progress) -> str:
    console = Console(record=True, width=400, color_system=None)
    console.print(progress.render())
    return console.export_text()


def _planned(question: str) -> _Progress:
    plan = decompose_by_rules(Query(text=question, apps=("China Mobile",)), [CHINA_MOBILE])
    progress = _Progress("run-1")
    progress.apply(RunEvent(run_id="run-1", kind=RunEventKind.PLAN_READY, plan=plan,
                            message="1 sub-task(s) in 1 app(s), by rules"))
    return progress


def test_the_plan_of_a_request_to_act_shows_its_one_line_notice() -> None:
    shown = _shown(_planned("Top up my phone by 50 yuan"))
    notice = [line for line in shown.splitlines() if line.startswith("A request to top up")]
    assert notice == ["A request to top up: the agent never pays, orders, books, sends, transfers, posts or "
                      "deletes in your name, so it does not top up; it opens where to top up and pauses "
                      "there for you."], shown
    assert "run run-1: 1 sub-task(s) in 1 app(s), by rules" in shown


def test_the_plan_of_a_question_shows_no_notice() -> None:
    shown = _shown(_planned("我手机话费还剩多少？"))
    assert "A request to" not in shown and "run run-1" in shown


def test_model_fallbacks_are_counted_by_the_events_role_not_their_wording() -> None:
    progress = _Progress("run-1")
    for role, message in (("evaluator", "the evaluator's model failed (timeout)"),
                          ("evaluator", "a differently worded sentence"),
                          ("synthesizer", "the report is the extractive summary")):
        progress.apply(RunEvent(run_id="run-1", kind=RunEventKind.MODEL_FALLBACK, message=message,
                                fallback=ModelFallback(role=role, reason="timeout")))
    assert progress.fallbacks == {"evaluator": 2, "synthesizer": 1}
    assert "model fallbacks to the rules: evaluator 2, synthesizer 1" in _shown(progress)
