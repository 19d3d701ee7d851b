"""The answers benchmark measures the product's own plan, and audits typed fields and pause screens."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bench.answer_audit import FieldKind, PauseSite, SimTruth, TypedInput, audit_inputs
from bench.answer_results import TaskAnswer, summarize, write_answers_section
from bench.answers import SUITE_CHOICES, _row, main, old_rule_points
from core.models import Input, LineSpan, Preview, RunEvent, RunEventKind, StepRecord, Tap
from device_farm.sim import load_catalog
from suites import score_report

ROOT = Path(__file__).resolve().parents[2]
UBER, AMAP, ALIPAY = "com.ubercab.eats", "com.autonavi.minimap", "com.eg.android.AlipayGphone"


@pytest.fixture(scope="module")
def truth() -> SimTruth:
    return SimTruth(load_catalog())


def test_measuring_answers_never_reads_the_scripted_paths() -> None:
    """The plan must be the product's own: no search term may come from a task's path."""
    files = ["bench/answers.py", "bench/answer_results.py", "bench/answer_audit.py",
             "suites/scoring.py", "suites/quantities.py"]
    for name in files:
        tree = ast.parse((ROOT / name).read_text(encoding="utf-8"))
        reads = [n.lineno for n in ast.walk(tree)
                 if (isinstance(n, ast.Attribute) and n.attr in ("paths", "subtask_for"))
                 or (isinstance(n, ast.Name) and n.id == "subtask_for")]
        assert not reads, f"{name} reads the scripted paths at lines {reads}"


def _events(subtask: str, *steps: tuple[str, Input | Tap]) -> list[RunEvent]:
    events: list[RunEvent] = []
    for number, (instruction, action) in enumerate(steps, 1):
        events.append(RunEvent(run_id="r", kind=RunEventKind.PREVIEW, subtask_id=subtask,
                               preview=Preview(step=number, action=action, instruction=instruction)))
        events.append(RunEvent(run_id="r", kind=RunEventKind.STEP, subtask_id=subtask,
                               step=StepRecord(step=number, subtask_id=subtask, action=action)))
    return events


def test_typing_into_a_sign_in_field_is_a_form_input(truth: SimTruth) -> None:
    events = _events(
        "uber-1",
        ("Enter [Crumbl] in [Enter phone number or email] and submit", Input(text="Crumbl", target="e1")),
        # The next try finds the field showing the text typed before: still the same form field.
        ("Enter [Crumbl] in [Crumbl] and submit", Input(text="Crumbl", target="e1")),
        ("Enter [Crumbl] in [Search Uber Eats] and submit", Input(text="Crumbl", target="e2")),
    )
    typed = audit_inputs(events, truth, {"uber-1": UBER})
    assert [(t.field, t.kind) for t in typed] == [
        ("Enter phone number or email", FieldKind.FORM), ("", FieldKind.FORM),
        ("Search Uber Eats", FieldKind.SEARCH)]


def test_an_input_without_a_target_takes_the_field_tapped_before(truth: SimTruth) -> None:
    events = _events("amap-1", ("Tap [搜索地点、公交、地铁]", Tap(target="e1")),
                     ("Enter [上海]", Input(text="上海")))
    assert [t.kind for t in audit_inputs(events, truth, {"amap-1": AMAP})] == [FieldKind.SEARCH]
    assert [t.kind for t in audit_inputs(_events("amap-1", ("Enter [上海]", Input(text="上海"))),
                                         truth, {"amap-1": AMAP})] == [FieldKind.UNKNOWN]


def test_a_pause_on_a_page_that_links_to_payment_is_not_on_a_risky_screen(truth: SimTruth) -> None:
    settings = truth.pause_site(ALIPAY, "payment", "com.alipay.mobile.payee.ui.PaySettingActivity", True)
    assert settings.screens == ("pay_settings",) and settings.risky is False
    pay_code = truth.pause_site(ALIPAY, "payment",
                                "com.alipay.mobile.onsitepay9.payer.OspTabHostActivity", True)
    assert pay_code.risky is True
    # Uber Eats' home is a sign-in wall while the app is logged out, and a feed once it is not.
    assert truth.pause_site(UBER, "login", "com.ubercab.eats.app.EatsMainActivity", False).risky is True
    assert truth.pause_site(UBER, "login", "com.ubercab.eats.app.EatsMainActivity", True).risky is False
    assert truth.pause_site(UBER, "login", "com.example.Nowhere", True).risky is None


def test_suite_summary_and_the_old_rule_side_by_side() -> None:
    markdown = "- G7301 [c1(G7301)]\n\nWhat the captured pages say:\n- G7311 [c1(G7311)]\n"
    score = score_report(markdown, ["G7301", "G7311"], page_dumps=[LineSpan(start=3, end=4)])
    answer = TaskAnswer(task_id="g_x", suite="general", apps_wanted=("12306",), apps_planned=("12306",),
                        statuses={"12306": "completed"}, score=score,
                        old_rule_found=old_rule_points(markdown, ("G7301", "G7311")), wall_s=2.0)
    summary = summarize("general", [answer])
    assert (summary.found, summary.points, summary.fully_answered) == (1, 2, 0)
    assert (summary.old_rule_found, summary.old_rule_full) == (2, 1)  # the dump counted before
    assert summary.apps_right == 1 and summary.pauses_right == 1


def _answer(task_id: str, suite: str, *, points: int = 2, pause: bool = False) -> TaskAnswer:
    score = score_report("- V1 [c1(V1)]\n", [f"V{i}" for i in range(1, points + 1)], ["W1"])
    sites = (PauseSite(package=UBER, reason=f"login wall of {task_id}", activity="a", risky=False),) if pause else ()
    return TaskAnswer(task_id=task_id, suite=suite, apps_wanted=("Uber Eats",), apps_planned=("Uber Eats",),
                      statuses={"Uber Eats": "needs_user" if pause else "completed"},
                      pauses_expected=("Uber Eats",) if pause else (), score=score, wall_s=1.0,
                      typed=(TypedInput(package=UBER, field=f"hint of {task_id}", kind=FieldKind.FORM),),
                      pause_sites=sites)


@pytest.fixture
def docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """docs/benchmarks.md and its images written (as with --write) under ``tmp_path`` instead of
    the repository."""
    page = tmp_path / "docs" / "benchmarks.md"
    monkeypatch.setattr("bench.results.BENCHMARKS_MD", page)
    monkeypatch.setattr("bench.results.WRITE_DOCS", True)
    monkeypatch.setattr("sys.argv", ["bench.answers"])
    return page


def test_the_held_out_suite_is_written_only_as_its_summary_column(docs: Path) -> None:
    answers = [_answer("g_visible_task", "general"), _answer("h_secret_one", "heldout", pause=True),
               _answer("h_secret_two", "heldout", points=3)]
    text = write_answers_section(answers, "python -m bench.answers --suite all", 60.0, load_catalog()).read_text()
    assert "| measure | general (ours) | held out (measured only) |" in text
    assert "| questions | 1 | 2 |" in text and "**2/5 (40%)**" in text  # the held-out figures are there
    assert "g_visible_task" in text and "hint of g_visible_task" in text  # other suites keep their rows
    assert "h_secret" not in text and "secret_" not in text  # no row, bar, typed field or pause names one
    assert "2 questions, reported only in the summary table above" in text
    assert (docs.parent / "images" / "bench-answers-coverage.png").exists()


def test_a_held_out_run_alone_writes_no_plot_and_never_names_a_task(docs: Path) -> None:
    answer = _answer("h_secret_one", "heldout", pause=True)
    text = write_answers_section([answer], "python -m bench.answers --suite heldout", 60.0,
                                 load_catalog()).read_text()
    assert "held out (measured only)" in text and "secret" not in text and "![" not in text
    assert "secret" not in _row(answer) and "Uber Eats" not in _row(answer)
    assert "g_visible" in _row(_answer("g_visible", "general"))


def test_the_held_out_suite_is_measured_whole() -> None:
    assert SUITE_CHOICES["heldout"] == ("heldout",) and "heldout" not in SUITE_CHOICES["all"]
    with pytest.raises(SystemExit):
        main(["--suite", "heldout", "--only", "alipay"])
