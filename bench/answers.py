"""The paper's questions end to end with no model: ``python -m bench.answers`` (area "answers").

Each Study 1 and Study 2 task whose apps the virtual phones have is asked as a person
would ask it: its query text goes to the ``retrieve`` flow (rule decomposer, copilot
with route memory / skills / explorer, extractive synthesis), on fresh phones set to
the task's simulated day. A task's score is the share of its scoring points (the
paper's, in the task files) that the report contains, word for word after
normalising spaces and Markdown escapes; a point the report shows only paraphrased
does not count, so this is a lower bound of what a grader would give. Whether the
plan chose the task's apps is reported beside it.

Everything is real and local, as in ``bench.flows``: redis-server, SeaweedFS S3, a
temporary Prefect server, virtual phones in their own process (zero latency: this
measures answers, not speed), one worker process per phone. Route memory starts
empty and learns as the run goes, as it would for a person asking these in turn.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from bench.flows import bench_services
from bench.results import create_figure, save_plot, write_section
from device_farm.registry import DeviceRegistry
from device_farm.sim import SimControlClient, load_catalog
from droidretriever.config import load_settings
from droidretriever.errors import DroidRetrieverError
from droidretriever.models import SubTaskStatus, new_id
from droidretriever.suites import Study, SuiteTask, load_suite

__all__ = ["TaskAnswer", "answer_task", "main", "score_report"]

_PAUSE_TIMEOUT_S = "5"  # login walls: nobody is there to log in; the report names the app


class TaskAnswer(BaseModel):
    """How one task's question was answered."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str
    study: Study
    apps_wanted: tuple[str, ...]
    apps_planned: tuple[str, ...]
    statuses: tuple[str, ...]
    points_found: int
    points_total: int
    wall_s: float
    error: str = ""

    @property
    def coverage(self) -> float:
        return self.points_found / self.points_total


def _normalise(text: str) -> str:
    return re.sub(r"\s+", "", text.replace("\\", "")).casefold()


def score_report(markdown: str, points: tuple[str, ...]) -> int:
    """How many scoring points the report contains (spaces and Markdown escapes ignored)."""
    body = _normalise(markdown)
    return sum(1 for point in points if _normalise(point) in body)


def answer_task(task: SuiteTask, control: SimControlClient) -> TaskAnswer:
    """Ask ``task``'s question on fresh phones set to its day; score the report."""
    from flows.models import RetrieveRequest
    from flows.retrieve import retrieve

    control.reset("boot")
    control.set_day(task.day)
    started = time.perf_counter()
    try:
        outcome = retrieve(RetrieveRequest(text=task.query, run_id=new_id("run")))
    except DroidRetrieverError as exc:
        return TaskAnswer(task_id=task.id, study=task.study, apps_wanted=task.apps, apps_planned=(),
                          statuses=(), points_found=0, points_total=len(task.scoring_points),
                          wall_s=time.perf_counter() - started, error=str(exc)[:120])
    wall = time.perf_counter() - started
    report = outcome.report
    return TaskAnswer(
        task_id=task.id, study=task.study, apps_wanted=task.apps,
        apps_planned=tuple(a.app_label for a in report.apps),
        statuses=tuple(a.status.value for a in report.apps),
        points_found=score_report(report.markdown, task.scoring_points),
        points_total=len(task.scoring_points), wall_s=wall,
    )


def _plot(answers: list[TaskAnswer]) -> str:
    figure = create_figure(7.0, 0.22 * len(answers) + 1.2)
    axes = figure.subplots()
    labels = [a.task_id.removeprefix("s2_").removeprefix("s1_") for a in answers]
    colours = ["#2e7d32" if a.coverage == 1 else "#f9a825" if a.coverage > 0 else "#c62828"
               for a in answers]
    axes.barh(range(len(answers)), [a.coverage * 100 for a in answers], color=colours)
    axes.set_yticks(range(len(answers)), labels, fontsize=7)
    axes.invert_yaxis()
    axes.set_xlim(0, 100)
    axes.set_xlabel("scoring points in the report (%)")
    axes.set_title("The paper's questions, no model: share of scoring points per task", fontsize=9)
    return save_plot("answers", "coverage", figure,
                     "Bar chart: share of each task's scoring points found in its no-model report")


def _row(answer: TaskAnswer) -> str:
    planned = ", ".join(answer.apps_planned) or "-"
    plan_ok = "yes" if set(answer.apps_planned) == set(answer.apps_wanted) else "no"
    outcome = answer.error or ", ".join(answer.statuses)
    return (f"| {answer.task_id} | {', '.join(answer.apps_wanted)} | {planned} | {plan_ok} | {outcome} "
            f"| {answer.points_found}/{answer.points_total} | {answer.wall_s:.1f} |")


def main(argv: list[str] | None = None) -> None:
    """Ask every task's question, then write the "answers" block of docs/benchmarks.md."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", default="", help="Only task ids containing this text.")
    args = parser.parse_args(argv)
    catalog = load_catalog()
    tasks = [t for t in load_suite() if t.study in (Study.STUDY1, Study.STUDY2)
             and all(catalog.find_label(a) is not None for a in t.apps) and args.only in t.id]
    os.environ["DROIDRETRIEVER_BUDGETS__PAUSE_TIMEOUT_S"] = _PAUSE_TIMEOUT_S
    answers: list[TaskAnswer] = []
    with tempfile.TemporaryDirectory() as tmp, bench_services(Path(tmp), 3, "zero") as serials:
        port = int(DeviceRegistry.from_settings(load_settings()).info(serials[0]).adb_port)
        control = SimControlClient("127.0.0.1", port)
        for task in tasks:
            answer = answer_task(task, control)
            answers.append(answer)
            print(_row(answer), flush=True)
    complete = sum(1 for a in answers if a.coverage == 1)
    some = sum(1 for a in answers if a.coverage > 0)
    planned = sum(1 for a in answers if set(a.apps_planned) == set(a.apps_wanted))
    found = sum(a.points_found for a in answers)
    total = sum(a.points_total for a in answers)
    completed = sum(1 for a in answers for s in a.statuses if s == SubTaskStatus.COMPLETED.value)
    subtasks = sum(len(a.statuses) for a in answers)
    body = f"""
{len(answers)} tasks of the paper's Study 1 and Study 2 (those whose apps the virtual phones
have), each asked with its own query text, no model configured: the rule decomposer plans,
route memory / skills / the explorer navigate, the extractive synthesis writes the report.

| measure | result |
|---|---|
| tasks whose report holds every scoring point | {complete}/{len(answers)} |
| tasks whose report holds at least one | {some}/{len(answers)} |
| scoring points found, all tasks | {found}/{total} ({found / max(total, 1):.0%}) |
| plans that chose exactly the task's apps | {planned}/{len(answers)} |
| app sub-tasks completed | {completed}/{subtasks} |
| wall time per task | median {statistics.median(a.wall_s for a in answers):.1f} s |

{_plot(answers)}

| task | apps (task) | apps (plan) | plan = task | outcome | points | s |
|---|---|---|---|---|---|---|
{chr(10).join(_row(a) for a in answers)}

A point counts only when the report contains it word for word (spaces and Markdown escapes
ignored): a point the report shows in other words, or split across lines, is not counted, so
the share is a lower bound of a grader's. The extractive report quotes, it does not
translate or summarise: questions asked in English about Chinese pages score by what the
pages show. Login walls end their app as `needs_user` after {_PAUSE_TIMEOUT_S} s here (nobody is there
to log in). Route memory starts empty and learns as the tasks go, as for a person asking
them in turn.
"""
    path = write_section("answers", "The paper's questions end to end, no model",
                         "python -m bench.answers", body)
    print(body)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
