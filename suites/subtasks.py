"""A suite task's app as the sub-task a planner would give the copilot.

Benchmarks and tests navigate a suite task app by app without a planner:
the query is the goal, the task's page mode is kept, and the search term is
the text the task's scripted path types for that app (a planner's search
term, as the paper's decomposer would write it). The app's package comes
from the caller, who knows which phones and app catalog it runs on.
"""

from __future__ import annotations

from core.models import StepKind, SubTask
from suites.errors import SuiteError
from suites.task import SuiteTask

__all__ = ["subtask_for"]


def subtask_for(task: SuiteTask, app: str, package: str) -> SubTask:
    """The sub-task for ``app`` (a launcher label of ``task``) installed as ``package``.

    Its id is ``<task id>-<last part of the package>``, so it is the same in
    every run of the benchmark (captures and routes are keyed by it).
    """
    if app not in task.paths:
        raise SuiteError(f"{task.id} does not use the app {app!r}",
                         hint=f"use one of its apps: {', '.join(task.apps)}")
    term = next((s.text for s in task.paths[app] if s.kind is StepKind.INPUT), None)
    return SubTask(id=f"{task.id}-{package.rsplit('.', 1)[-1]}", app_label=app, package=package,
                   goal=task.query, search_term=term, page_mode=task.page_mode)
