"""What a sub-task leaves: captures (stitched evidence), step records, its trace and result."""

from __future__ import annotations

from datetime import date, datetime
from enum import StrEnum

from pydantic import Field

from core.models.actions import Action
from core.models.base import Frozen, utcnow
from core.models.evaluation import Evaluation, RiskCategory
from core.models.screens import UIElement
from core.models.usage import ModelCall, ModelFallback, TokenLedger, TokenUsage

__all__ = [
    "Capture",
    "CaptureSource",
    "StepRecord",
    "StepTimings",
    "SubTaskResult",
    "SubTaskStatus",
    "Trace",
    "in_own_app",
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
    # The app in front when it was taken, when that was not ``package`` (another app, the home
    # screen): a person saved it. Never an answer of ``package``'s sub-task.
    screen_package: str = ""
    created_at: datetime = Field(default_factory=utcnow)
    phone_date: date | None = None  # the phone's calendar date: "last month" is counted from it


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
    tokens: TokenUsage = TokenUsage()  # the sum of ``calls``
    calls: tuple[ModelCall, ...] = ()  # every model request of this step, failed ones included
    fallbacks: tuple[ModelFallback, ...] = ()  # roles whose model failed here: the rules decided
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

    @property
    def ledger(self) -> TokenLedger:
        """Tokens per role over every step."""
        return TokenLedger.of(call for step in self.steps for call in step.calls)

    @property
    def fallbacks(self) -> tuple[ModelFallback, ...]:
        return tuple(f for step in self.steps for f in step.fallbacks)


class SubTaskStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    NEEDS_USER = "needs_user"
    FAILED = "failed"
    BUDGET_EXHAUSTED = "budget_exhausted"
    STOPPED = "stopped"  # a person stopped it before it finished; what it captured is kept
    # Only a report's app status (never a sub-task's): the question asked the agent to act (top up,
    # order, send...), which it does not do, whatever its sub-tasks reached (``Plan.act_request``).
    NOT_DONE = "not_done"


def in_own_app(capture: Capture) -> bool:
    """Whether ``capture`` shows its sub-task's app (not the home screen or another app)."""
    return not capture.screen_package or capture.screen_package == capture.package


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
    # A model that refused its requests (4xx: wrong model name, key, images to a text model)
    # is a configuration error: the run stops with this message and ``config_hint`` as the fix.
    config_error: str = ""
    config_hint: str = ""
