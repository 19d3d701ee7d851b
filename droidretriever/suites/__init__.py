"""The paper's evaluation tasks as data: one YAML file per task under ``study1/`` and ``study2/``.

    from droidretriever.suites import load_suite
    for task in load_suite():
        task.id, task.query, task.apps, task.page_mode, task.scoring_points, task.paths

Each task names the apps it needs (by launcher label), the page mode and
access type from the paper, the scoring points exactly as the virtual phones
render them, and per app a scripted path from launch to the screens that show
them (the task-coverage test plays these paths; benchmarks reuse the tasks).
``subtask_for(task, app, package)`` turns one app of a task into the sub-task a
planner would give the copilot. ``load_recorded_goals()`` reads the goals in words
written for the task sequences a person recorded on real apps (``real_apps/``).
"""

from __future__ import annotations

from droidretriever.suites.errors import SuiteError
from droidretriever.suites.recorded import (
    RECORDED_GOALS,
    RecordedGoal,
    load_recorded_goals,
    recorded_subtask,
)
from droidretriever.suites.subtasks import subtask_for
from droidretriever.suites.task import (
    SUITES_DIR,
    Access,
    Study,
    SuiteTask,
    load_suite,
    load_task,
)

__all__ = [
    "RECORDED_GOALS",
    "SUITES_DIR",
    "Access",
    "RecordedGoal",
    "Study",
    "SuiteError",
    "SuiteTask",
    "load_recorded_goals",
    "load_suite",
    "load_task",
    "recorded_subtask",
    "subtask_for",
]
