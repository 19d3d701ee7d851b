"""A benchmark task's run measured the way the papers measure it: pure functions, no I/O.

    metrics = measure_task(task, plan, results, tokens=ledger, wall_s=12.3)
    metrics.apps_right, metrics.mode_right          decomposition (app level, page mode)
    metrics.navigated / metrics.apps_wanted          navigation: target reached and captured
    metrics.points_captured                          scoring points on the captured pages
    metrics.steps, metrics.intervention_steps        steps; steps a person took
    metrics.paused                                   task-level intervention: any pause
    metrics.model_calls, metrics.tokens              per role; text and image tokens apart
    metrics.exposed_elements                         CORE's exposure: elements sent to a cloud model

Definitions (DroidRetriever paper, Study 2; CORE for exposure):

- **app-level decomposition** is right when the plan's apps are exactly the task's
  apps; **page-mode decomposition** is right when every planned sub-task of a task
  app has the task's page mode.
- **navigation**: an app of the task is navigated when one of its sub-tasks
  completed and its captures hold at least one of the task's scoring points (the
  target page was reached and captured), by the scorer's matcher.
- **interventions**: task level, the task paused for a person at least once; step
  level, steps marked ``intervention`` over all steps.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from core.models import (
    Capture,
    Plan,
    StepRecord,
    SubTaskResult,
    SubTaskStatus,
    TokenLedger,
    TokenUsage,
)
from suites.scoring import PointMatcher
from suites.task import SuiteTask

__all__ = [
    "RoleTokens",
    "TaskMetrics",
    "capture_text",
    "captured_points",
    "measure_task",
    "navigated_apps",
    "plan_apps_right",
    "plan_mode_right",
    "role_tokens",
]


class RoleTokens(BaseModel):
    """One model role's cost in a task: requests and tokens, text and image apart."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: str
    calls: int = 0
    failed: int = 0
    text_tokens: int = 0  # prompt tokens that are not image tokens
    image_tokens: int = 0
    completion_tokens: int = 0


class TaskMetrics(BaseModel):
    """Everything measured of one task's run, besides its report's score."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    apps_wanted: tuple[str, ...]
    apps_planned: tuple[str, ...] = ()
    apps_right: bool = False
    mode_right: bool = False
    navigated: tuple[str, ...] = ()  # task apps whose target page was reached and captured
    points_captured: int = 0  # scoring points on the captured pages (what a writer could state)
    steps: int = 0
    intervention_steps: int = 0
    paused: bool = False  # a person was asked at least once
    statuses: dict[str, str] = Field(default_factory=dict)  # app -> its last sub-task's status
    tokens: tuple[RoleTokens, ...] = ()
    exposed_elements: int = 0  # screen elements sent to a cloud model, over every step
    wall_s: float = 0.0

    @property
    def navigation(self) -> float:
        return len(self.navigated) / len(self.apps_wanted) if self.apps_wanted else 0.0

    @property
    def model_calls(self) -> int:
        return sum(t.calls for t in self.tokens)

    @property
    def intervention_rate(self) -> float | None:
        """Step level: intervention steps / all steps (None without steps)."""
        return self.intervention_steps / self.steps if self.steps else None


def plan_apps_right(task: SuiteTask, plan: Plan | None) -> bool:
    """The plan chose exactly the task's apps."""
    return plan is not None and {s.app_label for s in plan.subtasks} == set(task.apps)


def plan_mode_right(task: SuiteTask, plan: Plan | None) -> bool:
    """Every planned sub-task of a task app has the task's page mode (and there is one)."""
    if plan is None:
        return False
    ours = [s for s in plan.subtasks if s.app_label in task.apps]
    return bool(ours) and all(s.page_mode is task.page_mode for s in ours)


def capture_text(capture: Capture) -> str:
    """What a capture shows, one element per line (text, else its description)."""
    return "\n".join(e.text or e.content_desc for e in capture.elements if e.text or e.content_desc)


def navigated_apps(task: SuiteTask, plan: Plan | None, results: Sequence[SubTaskResult]) -> tuple[str, ...]:
    """Task apps with a completed sub-task whose captures hold one of the task's points."""
    if plan is None:
        return ()
    app_of = {s.id: s.app_label for s in plan.subtasks}
    matchers = [PointMatcher(p, task.tolerances.get(p)) for p in dict.fromkeys(task.scoring_points)]
    reached: list[str] = []
    for app in task.apps:
        for result in results:
            if app_of.get(result.subtask_id) != app or result.status is not SubTaskStatus.COMPLETED:
                continue
            lines = [line for c in result.captures for line in capture_text(c).splitlines()]
            if any(m.matches(line) for m in matchers for line in lines):
                reached.append(app)
                break
    return tuple(reached)


def captured_points(task: SuiteTask, results: Sequence[SubTaskResult]) -> int:
    """Scoring points on the pages the run captured (a point listed k times: k lines)."""
    lines = [line for r in results for c in r.captures for line in capture_text(c).splitlines()]
    total = 0
    for point in dict.fromkeys(task.scoring_points):
        matcher = PointMatcher(point, task.tolerances.get(point))
        total += min(task.scoring_points.count(point), sum(1 for line in lines if matcher.matches(line)))
    return total


def role_tokens(ledger: TokenLedger) -> tuple[RoleTokens, ...]:
    """The ledger per role, sorted by role, text and image tokens apart."""
    return tuple(_one_role(role, usage) for role, usage in sorted(ledger.roles.items()))


def _one_role(role: str, usage: TokenUsage) -> RoleTokens:
    return RoleTokens(role=role, calls=usage.calls, failed=usage.failed, text_tokens=usage.text,
                      image_tokens=usage.image, completion_tokens=usage.completion)


def measure_task(task: SuiteTask, plan: Plan | None, results: Sequence[SubTaskResult], *,
                 tokens: TokenLedger | None = None, wall_s: float = 0.0,
                 paused: bool | None = None,
                 steps: Sequence[StepRecord] | None = None) -> TaskMetrics:
    """Measure one task's run from its plan, its sub-task results and its token ledger.

    ``paused``: whether a person was asked (from the run's events); None reads it from
    the results (a sub-task that ended ``needs_user`` or has an intervention step).
    ``steps``: every step of the run as its events recorded them (a person's steps
    included); None takes the steps of the results' traces.
    """
    if steps is None:
        steps = [s for r in results for s in r.trace.steps]
    app_of = {s.id: s.app_label for s in plan.subtasks} if plan is not None else {}
    statuses = {app_of.get(r.subtask_id, r.subtask_id): r.status.value for r in results}
    interventions = sum(1 for s in steps if s.intervention)
    if paused is None:
        paused = interventions > 0 or any(r.status is SubTaskStatus.NEEDS_USER for r in results)
    return TaskMetrics(
        apps_wanted=task.apps,
        apps_planned=tuple(dict.fromkeys(s.app_label for s in plan.subtasks)) if plan else (),
        apps_right=plan_apps_right(task, plan), mode_right=plan_mode_right(task, plan),
        navigated=navigated_apps(task, plan, results),
        points_captured=captured_points(task, results), steps=len(steps),
        intervention_steps=interventions, paused=paused, statuses=statuses,
        tokens=role_tokens(tokens or TokenLedger()),
        exposed_elements=sum(s.exposed_elements for s in steps), wall_s=wall_s,
    )

