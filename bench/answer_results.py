"""The results of ``bench.answers``: one record per task, a summary per suite, the docs section.

Suites are summed over their tasks (micro averages): the share of scoring
points is all points stated over all points; accuracy is all points stated over
all points and wrong values stated; redundancy is all claims tied to no point
over all claims. The per-task tables and the plot show where each figure came from,
except for the suites in :data:`AGGREGATE_ONLY_SUITES`: a held-out test set is
reported only as its summary column, since a task's id, row or bar would tell
its question to the people whose work it measures.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from bench.answer_audit import FieldKind, PauseSite, TypedInput
from bench.results import create_figure, save_plot, write_section
from core.models import LineSpan, SubTaskStatus
from device_farm.sim import Catalog
from suites import ReportScore

__all__ = ["AGGREGATE_ONLY_SUITES", "SuiteSummary", "TaskAnswer", "is_aggregate_only", "summarize",
           "write_answers_section"]

_TITLES = {"paper": "the paper's 35", "general": "general (ours)", "heldout": "held out (measured only)"}
# Suites whose written results never name a task: no per-task rows, plot bars or audit rows.
AGGREGATE_ONLY_SUITES: frozenset[str] = frozenset({"heldout"})


def is_aggregate_only(suite: str) -> bool:
    """Whether ``suite`` (or a pass of it, "heldout · map") is published as aggregates only."""
    return suite.split(" ", 1)[0] in AGGREGATE_ONLY_SUITES


class TaskAnswer(BaseModel):
    """How one task's question was answered, scored and audited."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str
    suite: str
    apps_wanted: tuple[str, ...]
    apps_planned: tuple[str, ...] = ()
    statuses: dict[str, str] = {}  # app label -> sub-task status
    pauses_expected: tuple[str, ...] = ()
    score: ReportScore
    old_rule_found: int = 0  # points anywhere in the report, page dumps included (the old rule)
    wall_s: float
    typed: tuple[TypedInput, ...] = ()
    pause_sites: tuple[PauseSite, ...] = ()
    error: str = ""
    report: str = ""  # the report's Markdown, to read or score again
    page_dumps: tuple[LineSpan, ...] = ()

    @property
    def apps_right(self) -> bool:
        return set(self.apps_planned) == set(self.apps_wanted)

    @property
    def pauses_seen(self) -> tuple[str, ...]:
        return tuple(a for a, s in self.statuses.items() if s == SubTaskStatus.NEEDS_USER.value)

    @property
    def pauses_right(self) -> bool:
        return set(self.pauses_seen) == set(self.pauses_expected)


class SuiteSummary(BaseModel):
    """One suite's figures, summed over its tasks."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    suite: str
    tasks: int
    points: int
    found: int
    wrong: int
    fully_answered: int
    claims: int
    redundant_claims: int
    open_points: int  # tasks that expect no pause: nobody answers pauses in this benchmark
    open_found: int
    apps_right: int
    pauses_right: int
    typed: int
    typed_form: int
    typed_unknown: int
    pauses: int
    pauses_not_risky: int
    wall_median_s: float
    wall_total_s: float
    old_rule_found: int
    old_rule_full: int

    @property
    def share(self) -> float:
        return self.found / self.points if self.points else 0.0

    @property
    def open_share(self) -> float:
        return self.open_found / self.open_points if self.open_points else 0.0

    @property
    def accuracy(self) -> float | None:
        stated = self.found + self.wrong
        return self.found / stated if stated else None

    @property
    def redundancy(self) -> float | None:
        return self.redundant_claims / self.claims if self.claims else None


def summarize(suite: str, answers: Sequence[TaskAnswer]) -> SuiteSummary:
    """The suite's figures from its tasks' answers."""
    mine = [a for a in answers if a.suite == suite]
    open_tasks = [a for a in mine if not a.pauses_expected]
    typed = [t for a in mine for t in a.typed]
    sites = [s for a in mine for s in a.pause_sites]
    walls = [a.wall_s for a in mine] or [0.0]
    return SuiteSummary(
        suite=suite, tasks=len(mine), points=sum(a.score.points_total for a in mine),
        found=sum(len(a.score.found) for a in mine), wrong=sum(len(a.score.wrong) for a in mine),
        fully_answered=sum(1 for a in mine if a.score.fully_answered),
        claims=sum(a.score.claims for a in mine), redundant_claims=sum(a.score.redundant_claims for a in mine),
        open_points=sum(a.score.points_total for a in open_tasks),
        open_found=sum(len(a.score.found) for a in open_tasks),
        apps_right=sum(1 for a in mine if a.apps_right), pauses_right=sum(1 for a in mine if a.pauses_right),
        typed=len(typed), typed_form=sum(1 for t in typed if t.kind is FieldKind.FORM),
        typed_unknown=sum(1 for t in typed if t.kind is FieldKind.UNKNOWN),
        pauses=len(sites), pauses_not_risky=sum(1 for s in sites if s.risky is False),
        wall_median_s=statistics.median(walls), wall_total_s=sum(walls),
        old_rule_found=sum(a.old_rule_found for a in mine),
        old_rule_full=sum(1 for a in mine if a.old_rule_found == a.score.points_total),
    )


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _summary_table(summaries: Sequence[SuiteSummary]) -> str:
    def row(label: str, cells: list[str]) -> str:
        return f"| {label} | " + " | ".join(cells) + " |"

    s = summaries
    lines = ["| measure | " + " | ".join(_TITLES.get(x.suite, x.suite) for x in s) + " |",
             "|---|" + "---|" * len(s),
             row("questions", [str(x.tasks) for x in s]),
             row("**scoring points stated as answers**",
                 [f"**{x.found}/{x.points} ({_percent(x.share)})**" for x in s]),
             row("... in questions that expect no login wall",
                 [f"{x.open_found}/{x.open_points} ({_percent(x.open_share)})" for x in s]),
             row("**questions fully answered** (every point, no wrong value)",
                 [f"**{x.fully_answered}/{x.tasks}**" for x in s]),
             row("accuracy (points stated / points and wrong values stated)",
                 [f"{_percent(x.accuracy)} ({x.wrong} wrong)" for x in s]),
             row("redundancy (claims tied to no point)",
                 [f"{_percent(x.redundancy)} ({x.redundant_claims}/{x.claims})" for x in s]),
             row("apps right (the plan chose exactly the task's apps)", [f"{x.apps_right}/{x.tasks}" for x in s]),
             row("pauses right (apps that paused = apps expected to)", [f"{x.pauses_right}/{x.tasks}" for x in s]),
             row("inputs typed into a field that is not the app's search field",
                 [f"{x.typed_form} of {x.typed} ({x.typed_unknown} unknown)" for x in s]),
             row("pauses on a screen that is not itself risky", [f"{x.pauses_not_risky} of {x.pauses}" for x in s]),
             row("wall time per question", [f"median {x.wall_median_s:.1f} s, total {x.wall_total_s:.0f} s"
                                            for x in s]),
             row("old rule (any substring of the whole report)",
                 [f"{x.old_rule_full}/{x.tasks} full, {x.old_rule_found}/{x.points} "
                  f"({x.old_rule_found / max(x.points, 1):.0%})" for x in s])]
    return "\n".join(lines)


def _task_table(answers: Sequence[TaskAnswer]) -> str:
    lines = ["| task | apps (task) | apps (plan) | outcome | pause expected / seen | points | wrong | "
             "claims (untied) | s |", "|---|---|---|---|---|---|---|---|---|"]
    for a in answers:
        outcome = a.error or ", ".join(f"{app}: {status}" for app, status in a.statuses.items()) or "-"
        plan = ", ".join(a.apps_planned) or "-"
        plan_mark = "" if a.apps_right else " ✗"
        pauses = f"{', '.join(a.pauses_expected) or '-'} / {', '.join(a.pauses_seen) or '-'}"
        pauses += "" if a.pauses_right else " ✗"
        full = " ✓" if a.score.fully_answered else ""
        lines.append(
            f"| {a.task_id} | {', '.join(a.apps_wanted)} | {plan}{plan_mark} | {outcome} | {pauses} "
            f"| {len(a.score.found)}/{a.score.points_total}{full} | {', '.join(a.score.wrong) or '-'} "
            f"| {a.score.claims} ({a.score.redundant_claims}) | {a.wall_s:.1f} |")
    return "\n".join(lines)


def _audit_tables(answers: Sequence[TaskAnswer], catalog: Catalog) -> str:
    def label(package: str) -> str:
        spec = catalog.get(package)
        return spec.label if spec else package or "?"

    typed = [(a.task_id, t) for a in answers for t in a.typed if t.kind is not FieldKind.SEARCH]
    sites = [(a.task_id, s) for a in answers for s in a.pause_sites]
    lines = ["Inputs typed into a field that is not the app's search field (the field's hint; the "
             "typed text is not shown):", ""]
    if typed:
        lines += ["| task | app | field | kind |", "|---|---|---|---|"]
        lines += [f"| {task} | {label(t.package)} | {t.field or '(not known)'} | {t.kind.value} |"
                  for task, t in typed]
    else:
        lines.append("none.")
    lines += ["", "Pauses, and the screen the phone showed while each waited:", ""]
    if sites:
        lines += ["| task | app | screen | itself risky | why it paused |", "|---|---|---|---|---|"]
        risky = {True: "yes", False: "**no**", None: "app not in front"}
        lines += [f"| {task} | {label(s.package)} | {', '.join(s.screens) or s.activity or '-'} "
                  f"| {risky[s.risky]} | {s.reason.replace('|', '/')[:90]} |" for task, s in sites]
    else:
        lines.append("none.")
    return "\n".join(lines)


def _plot(answers: Sequence[TaskAnswer], suites: Sequence[str]) -> str:
    figure = create_figure(9.0, 0.12 * max(len([a for a in answers if a.suite == s]) for s in suites) + 1.4)
    panels = figure.subplots(1, len(suites), squeeze=False)[0]
    for axes, suite in zip(panels, suites, strict=True):
        mine = [a for a in answers if a.suite == suite]
        colours = ["#2e7d32" if a.score.fully_answered else "#f9a825" if a.score.found else "#c62828"
                   for a in mine]
        positions = range(len(mine))
        axes.barh(positions, [100] * len(mine), color="#eeeeee")  # the scale: an empty row is 0 of 100
        axes.barh(positions, [a.score.coverage * 100 for a in mine], color=colours)
        wrong = [(i, a.score.coverage * 100) for i, a in enumerate(mine) if a.score.wrong]
        if wrong:
            axes.scatter([x + 3 for _, x in wrong], [i for i, _ in wrong], marker="x", color="#c62828",
                         s=18, label="states a wrong value")
            axes.legend(fontsize=7, loc="lower right")
        axes.set_yticks(list(positions), [a.task_id.split("_", 1)[1] for a in mine], fontsize=6)
        axes.invert_yaxis()
        axes.set_xlim(0, 110)
        axes.set_xlabel("scoring points stated as answers (%)", fontsize=8)
        axes.set_title(_TITLES.get(suite, suite), fontsize=9)
    figure.suptitle("No model: share of each question's scoring points stated in a cited answer "
                    "(green: fully answered)", fontsize=9)
    # A hundred labels of anti-aliased text: a 64-colour palette keeps the PNG under 50 KB.
    line = save_plot("answers", "coverage", figure,
                     "Bar charts per suite: share of each question's scoring points its report states "
                     "as a cited answer; crosses mark reports that state a wrong value", colors=64)
    return line


def _suite_order(answers: Sequence[TaskAnswer]) -> list[str]:
    """The suites of ``answers``: the known ones in their usual order, then any other by name."""
    present = {a.suite for a in answers}
    return [s for s in _TITLES if s in present] + sorted(present - set(_TITLES))


def _withheld_note(suite: str, answers: Sequence[TaskAnswer]) -> str:
    count = sum(1 for a in answers if a.suite == suite)
    return (f"{count} questions, reported only in the summary table above: per-task rows would tell "
            f"the questions (`suites/{suite.split(' ', 1)[0]}/README.md`).")


def write_answers_section(answers: Sequence[TaskAnswer], command: str, total_s: float, catalog: Catalog) -> Path:
    """Write the "answers" block of docs/benchmarks.md from this run's answers (the "heldout"
    block when every suite asked is aggregate-only: a held-out run never replaces the suites').

    Suites in :data:`AGGREGATE_ONLY_SUITES` get their summary column and nothing that names a task.
    """
    suites = _suite_order(answers)
    summaries = [summarize(s, answers) for s in suites]
    detailed = [s for s in suites if not is_aggregate_only(s)]
    shown = [a for a in answers if a.suite in detailed]
    plot = _plot(shown, detailed) if detailed else ""
    body = f"""
The suites asked side by side in one run ({total_s / 60:.0f} min), no model configured: the rule
decomposer plans (its own plan: no search term comes from the suites' scripted paths), route
memory (empty at the start) / skills / the explorer navigate, the extractive synthesis writes
the report. Phones are reset before each question to its starting state (its simulated day, its
signed-out apps logged out). Nobody answers pauses: a login wall ends its app as `needs_user`
after 5 s, so questions that expect one score only what their other apps found.

Scoring (`suites/scoring.py`): a scoring point counts only where the report states
it as an answer, in a claim (a sentence, list item or table row carrying a citation), never in
the lines the extractive writer copies from a page when nothing matches the question
(`Report.page_dumps`); a value the task lists as wrong (another record, one the question's filter
excludes) stated in a claim counts against accuracy; values compare across spellings and units
(`15小时12分` = `15 h 12 min`, `¥25.5` = `25.50元`). Coverage, accuracy and redundancy are the
paper's Study 1 metrics.

{_summary_table(summaries)}

{plot}
"""
    for suite in suites:
        rows = (_withheld_note(suite, answers) if is_aggregate_only(suite)
                else _task_table([a for a in answers if a.suite == suite]))
        body += f"\n### {_TITLES.get(suite, suite)}\n\n{rows}\n"
    if not detailed:
        return write_section("heldout", "Held-out questions end to end, no model (aggregates only)", command, body)
    body += f"\n### What the runs did on the phones\n\n{_audit_tables(shown, catalog)}\n"
    return write_section("answers", "Questions end to end, no model, scored honestly", command, body)
