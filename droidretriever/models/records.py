"""What a sub-task leaves: captures (stitched evidence), step records, its trace and result."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import Field

from droidretriever.models.actions import Action
from droidretriever.models.base import Frozen, utcnow
from droidretriever.models.evaluation import Evaluation, RiskCategory
from droidretriever.models.screens import UIElement

__all__ = [
    "Capture",
    "CaptureSource",
    "StepRecord",
    "StepTimings",
    "SubTaskResult",
    "SubTaskStatus",
    "TokenUsage",
    "Trace",
]


class CaptureSource(StrEnum):
    AUTO = "auto"
    USER = "user"


class Capture(Frozen):
    """A stitched scrolling screenshot kept as evidence, with its elements."""

    id: str
    run_id: str
    subtask_id: str
    package: str
    image_key: str
    frame_keys: tuple[str, ...] = ()
    width: int = Field(gt=0)
    height: int = Field(gt=0)
    elements: tuple[UIElement, ...] = ()  # boxes in stitched coordinates
    source: CaptureSource = CaptureSource.AUTO
    title: str = ""  # e.g. the page heading, for the report
    created_at: datetime = Field(default_factory=utcnow)


class TokenUsage(Frozen):
    prompt: int = 0
    completion: int = 0
    calls: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            prompt=self.prompt + other.prompt,
            completion=self.completion + other.completion,
            calls=self.calls + other.calls,
        )

    @property
    def total(self) -> int:
        return self.prompt + self.completion


class StepTimings(Frozen):
    observe_ms: float = 0.0
    perceive_ms: float = 0.0
    decide_ms: float = 0.0
    act_ms: float = 0.0


class StepRecord(Frozen):
    step: int
    subtask_id: str
    screen_key: str | None = None
    elements_digest: str = ""
    action: Action | None = None
    policy: str = ""  # which policy acted: route_memory, skills, llm:<model>, user
    evaluation: Evaluation | None = None
    timings: StepTimings = StepTimings()
    tokens: TokenUsage = TokenUsage()
    intervention: bool = False  # a person took over here; what they did is not recorded
    exposed_elements: int = 0  # elements that left the device for a cloud model
    at: datetime = Field(default_factory=utcnow)


class Trace(Frozen):
    subtask_id: str
    steps: tuple[StepRecord, ...] = ()

    @property
    def tokens(self) -> TokenUsage:
        total = TokenUsage()
        for step in self.steps:
            total = total + step.tokens
        return total


class SubTaskStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    NEEDS_USER = "needs_user"
    FAILED = "failed"
    BUDGET_EXHAUSTED = "budget_exhausted"


class SubTaskResult(Frozen):
    subtask_id: str
    status: SubTaskStatus
    captures: tuple[Capture, ...] = ()
    trace: Trace
    facts: tuple[str, ...] = ()  # key facts extracted, fed along plan edges
    reason: str = ""  # why it stopped, in words a person understands
    risk_category: RiskCategory | None = None
    device: str | None = None
    attempt: int = 1
