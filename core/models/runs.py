"""A run's record: its status, the live event stream, the manifest, and the serving status."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import Field

from core.models.actions import Preview
from core.models.base import Frozen, utcnow
from core.models.plan import Plan, Query
from core.models.records import Capture, StepRecord, SubTaskResult, SubTaskStatus
from core.models.reports import Report
from core.models.usage import FallbackTally, ModelFallback, TokenLedger

__all__ = ["RunEvent", "RunEventKind", "RunManifest", "RunStatus", "ServingStatus"]


class RunStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    PAUSED = "paused"
    COMPLETED = "completed"
    FAILED = "failed"
    STOPPED = "stopped"
    CRASHED = "crashed"  # the process running it ended before it finished (killed, restarted)


class RunEventKind(StrEnum):
    RUN_STARTED = "run_started"
    PLAN_READY = "plan_ready"
    SUBTASK_STARTED = "subtask_started"
    STEP = "step"
    PREVIEW = "preview"
    CAPTURE_SAVED = "capture_saved"
    NEEDS_USER = "needs_user"
    RESUMED = "resumed"
    SUBTASK_FINISHED = "subtask_finished"
    REPORT_READY = "report_ready"
    RUN_FINISHED = "run_finished"
    LOG = "log"
    ERROR = "error"
    # A configured model failed (timeout, 5xx, bad or cut-off answer) or ran out of time,
    # and the rules decided instead; the message names the role, the reason and the count.
    MODEL_FALLBACK = "model_fallback"
    CONTROL = "control"  # a person's command (pause, take over, back to auto, answer, stop)
    # A phone of the run went down (its worker died, or the phone stopped answering); the
    # message says what happened and what becomes of the sub-task on it.
    PHONE_LOST = "phone_lost"
    # A sub-task that lost its phone goes on elsewhere; the message names the phone.
    SUBTASK_MOVED = "subtask_moved"


class RunEvent(Frozen):
    """One thing that happened in a run: feeds the dashboard, the CLI and the record.

    ``seq`` is assigned by the publisher and orders events within a run. At most
    one typed attachment is set, matching ``kind``.
    """

    run_id: str
    kind: RunEventKind
    seq: int = 0
    at: datetime = Field(default_factory=utcnow)
    subtask_id: str | None = None
    message: str = ""
    actor: str | None = None  # who caused it when a person did: "browser 3f2a", "api token"
    serial: str | None = None  # the phone it happened on, when one did
    plan: Plan | None = None
    step: StepRecord | None = None
    preview: Preview | None = None
    capture: Capture | None = None
    result: SubTaskResult | None = None
    report: Report | None = None
    fallback: ModelFallback | None = None  # MODEL_FALLBACK: which role's model failed, and why


class RunManifest(Frozen):
    """The system of record for a run, stored at ``runs/<run_id>/manifest.json``."""

    run_id: str
    query: Query
    status: RunStatus = RunStatus.PENDING
    plan: Plan | None = None
    subtasks: dict[str, SubTaskStatus] = Field(default_factory=dict)
    capture_ids: tuple[str, ...] = ()
    report_key: str | None = None
    tokens: TokenLedger = TokenLedger()  # model tokens of the whole run, per role
    subtask_tokens: dict[str, TokenLedger] = Field(default_factory=dict)  # per sub-task, per role
    fallbacks: tuple[FallbackTally, ...] = ()  # roles whose model failed and the rules decided
    prefect_flow_run_id: str | None = None
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    error: str | None = None


class ServingStatus(Frozen):
    """What the subscriptions service serves now (written by ``flows.serve``, read by ``status``)."""

    pid: int
    child_pid: int | None = None  # the process serving the deployments, None between restarts
    deployments: tuple[str, ...] = ()  # Prefect deployment names, active and paused
    paused: int = 0
    updated_at: datetime = Field(default_factory=utcnow)
    error: str | None = None  # why the last serving child stopped, if it did
