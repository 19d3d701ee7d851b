"""Benchmark suites as data: one YAML file per task, a folder per study, suites loaded by name.

    from suites import load_suite, score_task_report
    for task in load_suite("general"):        # or "paper", "examples"; none: paper + examples
        task.id, task.query, task.apps, task.page_mode, task.scoring_points, task.wrong_points
    score_task_report(task, report).coverage  # .accuracy, .redundancy, .fully_answered

Each task names the apps it needs (by launcher label), the page mode and
access type, the scoring points exactly as the virtual phones render them,
values a report must not state as the answer, and per app a scripted path from
launch to the screens that show them (the task-coverage test plays these
paths). Scoring (:mod:`suites.scoring`) counts a point only in
a cited claim of the report's answer.

``suites.subtasks.subtask_for(task, app, package)`` turns one
app of a task into the sub-task a planner would give the copilot, with the
search term of the scripted path: for navigation tests and benchmarks only,
never for a run that measures answers (the plan must be the product's own), so
it is not exported here and an import-linter contract keeps it out of
``bench.answers`` and the scoring.
``resolve_suite("paper-study2" | "smoke" | "./my-suite/")`` is how a benchmark run
names a suite (:mod:`suites.catalog`).
``load_recorded_goals()`` reads the goals in words written for the task
sequences a person recorded on real apps (``real_apps/``).
"""

from __future__ import annotations

from suites.catalog import BENCH_SUITES, Suite, load_suite_folder, resolve_suite
from suites.errors import SuiteError
from suites.recorded import (
    RECORDED_GOALS,
    AppSplit,
    RecordedGoal,
    load_app_split,
    load_recorded_goals,
    recorded_subtask,
)
from suites.scoring import ReportScore, score_report, score_task_report
from suites.task import (
    SUITES,
    SUITES_DIR,
    Access,
    Study,
    SuiteTask,
    load_suite,
    load_task,
)

__all__ = [
    "BENCH_SUITES",
    "RECORDED_GOALS",
    "SUITES",
    "SUITES_DIR",
    "Access",
    "AppSplit",
    "RecordedGoal",
    "ReportScore",
    "Study",
    "Suite",
    "SuiteError",
    "SuiteTask",
    "load_app_split",
    "load_recorded_goals",
    "load_suite",
    "load_suite_folder",
    "load_task",
    "recorded_subtask",
    "resolve_suite",
    "score_report",
    "score_task_report",
]
