"""What a benchmark run is asked and what it gives back: frozen models, stored as ``results.json``."""

from __future__ import annotations

import statistics
from datetime import datetime
from enum import StrEnum

from pydantic import Field

from core.models import Frozen, utcnow
from suites import ReportScore
from suites.metrics import TaskMetrics

__all__ = ["BenchRequest", "BenchResults", "BenchSummary", "BenchTaskResult", "OperatorKind"]


class OperatorKind(StrEnum):
    """Who answers a pause during a benchmark: nobody (it times out) or the scripted operator."""

    NONE = "none"
    SCRIPTED = "scripted"


class BenchRequest(Frozen):
    """A benchmark run: which suite, on how many phones at once, how often, who answers pauses."""

    suite: str = Field(min_length=1, max_length=500)  # a built-in name or a folder of task files
    devices: int = Field(default=1, ge=1, le=256)
    repeat: int = Field(default=1, ge=1, le=100)
    operator: OperatorKind = OperatorKind.NONE
    operator_delay_s: float = Field(default=3.0, ge=0.0, le=120.0)
    only: str = ""  # only task ids containing this text
    bench_run_id: str | None = None  # an earlier run's id: resume it (its finished tasks are kept)
    out_dir: str | None = None  # a local folder for the results too (the CLI's --out)
    # The queue: at least this long between two tasks' starts across the farm, and how long
    # a task waits out a Prefect API that fails before it is given up (flows.bench.feed).
    start_gap_s: float = Field(default=0.5, ge=0.0, le=60.0)
    outage_window_s: float = Field(default=600.0, ge=0.0, le=3600.0)


class BenchTaskResult(Frozen):
    """One task asked once: its score, its run's metrics, what went wrong."""

    task_id: str
    repeat: int = 1
    query: str
    run_id: str | None = None
    serial: str | None = None
    score: ReportScore | None = None  # None when the run ended without a report
    metrics: TaskMetrics
    operator_answers: int = 0  # pauses the scripted operator answered in this run
    error: str | None = None
    expected_coverage: float | None = None  # the suite's least coverage for this task
    # When its phone took it and gave it back, and how often it was asked (more than once
    # when the Prefect API failed under it).
    started_at: datetime | None = None
    ended_at: datetime | None = None
    tries: int = 1

    @property
    def coverage(self) -> float:
        return self.score.coverage if self.score is not None else 0.0

    @property
    def below_expectation(self) -> bool:
        return self.expected_coverage is not None and self.coverage + 1e-9 < self.expected_coverage


class BenchSummary(Frozen):
    """A suite's figures over its tasks, as the papers report them."""

    tasks: int
    points_found: int
    points_total: int
    fully_answered: int
    wrong_values: int
    accuracy: float | None
    redundancy: float | None
    apps_right: int
    mode_right: int
    navigated_apps: int
    wanted_apps: int
    all_points_captured: int  # tasks whose captured pages hold every scoring point
    steps: int
    intervention_steps: int
    tasks_paused: int
    model_calls: int
    tokens: int
    median_wall_s: float
    errors: int

    @property
    def coverage(self) -> float:
        return self.points_found / self.points_total if self.points_total else 0.0


class BenchResults(Frozen):
    """A whole benchmark run."""

    bench_run_id: str
    suite: str
    request: BenchRequest
    tasks: tuple[BenchTaskResult, ...] = ()
    phones: tuple[str, ...] = ()
    started_at: datetime = Field(default_factory=utcnow)
    wall_s: float = 0.0
    host: str = ""
    decomposer: str = ""  # "rules" or the model that planned
    flow_run_id: str | None = None
    kept: int = 0  # tasks finished by an earlier attempt of this run (resumed), not asked again

    def summary(self) -> BenchSummary:
        """The suite's figures over every task asked."""
        tasks = self.tasks
        scores = [t.score for t in tasks if t.score is not None]
        found = sum(len(s.found) for s in scores)
        wrong = sum(len(s.wrong) for s in scores)
        claims = sum(s.claims for s in scores)
        return BenchSummary(
            tasks=len(tasks), points_found=found,
            points_total=sum(s.points_total for s in scores) + sum(
                1 for t in tasks if t.score is None),
            fully_answered=sum(1 for s in scores if s.fully_answered), wrong_values=wrong,
            accuracy=found / (found + wrong) if found + wrong else None,
            redundancy=sum(s.redundant_claims for s in scores) / claims if claims else None,
            apps_right=sum(1 for t in tasks if t.metrics.apps_right),
            mode_right=sum(1 for t in tasks if t.metrics.mode_right),
            navigated_apps=sum(len(t.metrics.navigated) for t in tasks),
            wanted_apps=sum(len(t.metrics.apps_wanted) for t in tasks),
            all_points_captured=sum(1 for t in tasks if t.score is not None
                                    and t.metrics.points_captured >= t.score.points_total),
            steps=sum(t.metrics.steps for t in tasks),
            intervention_steps=sum(t.metrics.intervention_steps for t in tasks),
            tasks_paused=sum(1 for t in tasks if t.metrics.paused),
            model_calls=sum(t.metrics.model_calls for t in tasks),
            tokens=sum(r.text_tokens + r.image_tokens + r.completion_tokens
                       for t in tasks for r in t.metrics.tokens),
            median_wall_s=statistics.median([t.metrics.wall_s for t in tasks]) if tasks else 0.0,
            errors=sum(1 for t in tasks if t.error),
        )
