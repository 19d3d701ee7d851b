"""Shared value types: the only currency between layers.

Every model is a frozen pydantic v2 model, so it can cross a module, a Celery
message, a Prefect parameter or the HTTP API as JSON and come back equal.
Grouped as in ARCHITECTURE.md:

    Query -> Plan (SubTask nodes + Edge DAG)
    Screen (UIElement*) -> Action (discriminated union on ``kind``) -> Evaluation
    Capture (stitched evidence) -> StepRecord / Trace -> SubTaskResult
    Report (Citation*) ; RunEvent (the single live stream) ; RunManifest (record)
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "Action",
    "AppStatus",
    "Back",
    "Bounds",
    "Capture",
    "CaptureSource",
    "Citation",
    "Edge",
    "ElementSource",
    "Evaluation",
    "Finish",
    "Input",
    "LongPress",
    "OpenApp",
    "PageMode",
    "PageType",
    "Plan",
    "Point",
    "Preview",
    "Query",
    "Report",
    "RiskCategory",
    "RunEvent",
    "RunEventKind",
    "RunManifest",
    "RunStatus",
    "Screen",
    "Scroll",
    "ScrollDirection",
    "ServingStatus",
    "StepRecord",
    "StepTimings",
    "SubTask",
    "SubTaskResult",
    "SubTaskStatus",
    "Swipe",
    "Tap",
    "TokenUsage",
    "Trace",
    "UIElement",
    "Wait",
    "new_id",
    "utcnow",
]


def utcnow() -> datetime:
    """Timezone-aware now, the only clock the models use."""
    return datetime.now(UTC)


def new_id(prefix: str) -> str:
    """A short, sortable, unique id such as ``run-20261121T101500-3f9a1c``."""
    import secrets

    return f"{prefix}-{utcnow():%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


# --------------------------------------------------------------------------- geometry

_BOUNDS_RE = re.compile(r"^\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]$")


class Point(_Frozen):
    x: int
    y: int


class Bounds(_Frozen):
    """A screen rectangle in pixels, right and bottom exclusive (as uiautomator)."""

    left: int
    top: int
    right: int
    bottom: int

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.right < self.left or self.bottom < self.top:
            raise ValueError(f"bounds are inverted: {self.to_uiautomator()}")
        return self

    @classmethod
    def parse(cls, text: str) -> Bounds:
        """Parse uiautomator's ``[x1,y1][x2,y2]`` form."""
        match = _BOUNDS_RE.match(text.strip())
        if match is None:
            raise ValueError(f"not a uiautomator bounds string: {text!r}")
        left, top, right, bottom = (int(g) for g in match.groups())
        return cls(left=left, top=top, right=right, bottom=bottom)

    def to_uiautomator(self) -> str:
        return f"[{self.left},{self.top}][{self.right},{self.bottom}]"

    @property
    def width(self) -> int:
        return self.right - self.left

    @property
    def height(self) -> int:
        return self.bottom - self.top

    @property
    def area(self) -> int:
        return self.width * self.height

    @property
    def center(self) -> Point:
        return Point(x=(self.left + self.right) // 2, y=(self.top + self.bottom) // 2)

    def contains(self, point: Point) -> bool:
        return self.left <= point.x < self.right and self.top <= point.y < self.bottom

    def intersection(self, other: Bounds) -> int:
        """Area shared with ``other`` (0 when disjoint)."""
        w = min(self.right, other.right) - max(self.left, other.left)
        h = min(self.bottom, other.bottom) - max(self.top, other.top)
        return max(0, w) * max(0, h)

    def iou(self, other: Bounds) -> float:
        inter = self.intersection(other)
        union = self.area + other.area - inter
        return inter / union if union else 0.0

    def shifted(self, dx: int = 0, dy: int = 0) -> Bounds:
        return Bounds(
            left=self.left + dx, top=self.top + dy, right=self.right + dx, bottom=self.bottom + dy
        )


# --------------------------------------------------------------------------- query and plan


class PageMode(StrEnum):
    """Where a sub-task ends (DroidRetriever section 4.4)."""

    FOCUSED = "focused"  # one result details page
    LIST_VIEW = "list_view"  # the search results list itself
    MULTI_PAGE = "multi_page"  # several details pages in turn, up to a browsing limit

    @classmethod
    def parse(cls, text: str) -> PageMode:
        """Accept the paper's spellings: ``Multi-page``, ``list-view``, ``list``, ``Focused``."""
        key = re.sub(r"[\s\-]+", "_", text.strip().lower())
        aliases = {"list": cls.LIST_VIEW, "listview": cls.LIST_VIEW, "multipage": cls.MULTI_PAGE}
        if key in aliases:
            return aliases[key]
        try:
            return cls(key)
        except ValueError:
            raise ValueError(
                f"unknown page mode {text!r}: use focused, list_view or multi_page"
            ) from None


class Query(_Frozen):
    """What a person (or a schedule, or a benchmark) asks."""

    text: str = Field(min_length=1, max_length=2000)
    apps: tuple[str, ...] = ()  # labels or packages allowed; empty = any installed
    mode: PageMode | None = None  # force a page mode for every sub-task
    browsing_limit: int = Field(default=3, ge=1, le=20)
    audio_key: str | None = None  # object-store key of the recording it was transcribed from
    language: str | None = None

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the question is empty: type what you want to find out")
        return value.strip()


class SubTask(_Frozen):
    """One app, one goal: a node of the plan."""

    id: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$")
    app_label: str
    package: str
    goal: str  # natural-language goal for this app, rewritten with upstream facts
    search_term: str | None = None  # None = direct navigation (no in-app search)
    page_mode: PageMode = PageMode.FOCUSED
    browsing_limit: int = Field(default=3, ge=1, le=20)


class Edge(_Frozen):
    """Information that flows from one sub-task's answer into another's goal."""

    source: str
    target: str
    info: str  # what is carried, e.g. "the restaurant's address"


class Plan(_Frozen):
    """The decomposition: a DAG of sub-tasks (MobileSteward's scheduling graph)."""

    query: Query
    subtasks: tuple[SubTask, ...]
    edges: tuple[Edge, ...] = ()
    decomposer: str  # which policy produced it: "llm:<model>" or "rules"
    notes: tuple[str, ...] = ()  # honest remarks, e.g. apps asked for but not installed

    @model_validator(mode="after")
    def _is_dag(self) -> Self:
        ids = [s.id for s in self.subtasks]
        if len(set(ids)) != len(ids):
            raise ValueError("sub-task ids must be unique")
        known = set(ids)
        for edge in self.edges:
            if edge.source not in known or edge.target not in known:
                raise ValueError(f"edge {edge.source}->{edge.target} names an unknown sub-task")
        self.topological_order()  # raises on a cycle
        return self

    def topological_order(self) -> tuple[SubTask, ...]:
        """Sub-tasks ordered so every edge's source precedes its target (stable)."""
        by_id = {s.id: s for s in self.subtasks}
        indegree = {s.id: 0 for s in self.subtasks}
        for edge in self.edges:
            indegree[edge.target] += 1
        ready = [s.id for s in self.subtasks if indegree[s.id] == 0]
        order: list[SubTask] = []
        while ready:
            current = ready.pop(0)
            order.append(by_id[current])
            for edge in self.edges:
                if edge.source == current:
                    indegree[edge.target] -= 1
                    if indegree[edge.target] == 0:
                        ready.append(edge.target)
        if len(order) != len(self.subtasks):
            raise ValueError("the plan's edges form a cycle")
        return tuple(order)

    def upstream(self, subtask_id: str) -> tuple[Edge, ...]:
        return tuple(e for e in self.edges if e.target == subtask_id)

    @property
    def packages(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.package for s in self.subtasks))


# --------------------------------------------------------------------------- screens


class ElementSource(StrEnum):
    HIERARCHY = "hierarchy"
    OCR = "ocr"
    DETECTOR = "detector"


class UIElement(_Frozen):
    """One thing on a screen a person could read or touch."""

    id: str  # stable across re-renders of the same screen
    class_name: str = ""
    text: str = ""
    resource_id: str = ""
    content_desc: str = ""
    bounds: Bounds
    clickable: bool = False
    long_clickable: bool = False
    scrollable: bool = False
    editable: bool = False
    password: bool = False
    checkable: bool = False
    checked: bool = False
    selected: bool = False
    focused: bool = False
    enabled: bool = True
    source: ElementSource = ElementSource.HIERARCHY
    parent_id: str | None = None
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)

    @property
    def label(self) -> str:
        """What a person would call it: its text, else its description."""
        return self.text or self.content_desc


class Screen(_Frozen):
    """One observed screen, after perception."""

    device: str
    package: str
    activity: str = ""
    width: int = Field(gt=0)
    height: int = Field(gt=0)
    elements: tuple[UIElement, ...] = ()
    screenshot_key: str | None = None
    fingerprint: str = ""  # robust to clock/badge changes; equal = "same page again"

    def element(self, element_id: str) -> UIElement | None:
        return next((e for e in self.elements if e.id == element_id), None)


class PageType(StrEnum):
    HOME = "home"
    SEARCH_INPUT = "search_input"
    RESULTS_LIST = "results_list"
    DETAILS = "details"
    SETTINGS = "settings"
    DIALOG = "dialog"
    LOGIN = "login"
    OTHER = "other"


# --------------------------------------------------------------------------- actions


class ScrollDirection(StrEnum):
    UP = "up"
    DOWN = "down"
    LEFT = "left"
    RIGHT = "right"


class _ActionBase(_Frozen):
    reason: str = ""


class Tap(_ActionBase):
    kind: Literal["tap"] = "tap"
    target: str | None = None  # element id
    point: Point | None = None

    @model_validator(mode="after")
    def _has_target(self) -> Self:
        if self.target is None and self.point is None:
            raise ValueError("a tap needs a target element id or a point")
        return self


class LongPress(_ActionBase):
    kind: Literal["long_press"] = "long_press"
    target: str | None = None
    point: Point | None = None
    duration_ms: int = Field(default=800, ge=100, le=10_000)


class Input(_ActionBase):
    kind: Literal["input"] = "input"
    text: str
    target: str | None = None  # field to focus first; None = the focused field
    submit: bool = False  # press enter afterwards


class Scroll(_ActionBase):
    kind: Literal["scroll"] = "scroll"
    direction: ScrollDirection = ScrollDirection.DOWN
    fraction: float = Field(default=0.67, gt=0.0, le=1.0)
    target: str | None = None  # scrollable container; None = main one


class Swipe(_ActionBase):
    kind: Literal["swipe"] = "swipe"
    start: Point
    end: Point
    duration_ms: int = Field(default=300, ge=10, le=10_000)


class Back(_ActionBase):
    kind: Literal["back"] = "back"


class OpenApp(_ActionBase):
    kind: Literal["open_app"] = "open_app"
    package: str


class Wait(_ActionBase):
    kind: Literal["wait"] = "wait"
    seconds: float = Field(default=1.0, gt=0.0, le=30.0)


class Finish(_ActionBase):
    kind: Literal["finish"] = "finish"


Action = Annotated[
    Tap | LongPress | Input | Scroll | Swipe | Back | OpenApp | Wait | Finish,
    Field(discriminator="kind"),
]


class Preview(_Frozen):
    """An action announced before it runs, so a person can see and stop it."""

    step: int
    action: Action
    instruction: str  # "Tap [Texas]", "Enter [McDonald] in [Search]"
    box: Bounds | None = None
    policy: str = ""


# --------------------------------------------------------------------------- evaluation


class RiskCategory(StrEnum):
    """The seven risk criteria of DroidRetriever's evaluator prompt (Appendix B.3)."""

    LOGIN = "login"
    PAYMENT = "payment"
    PERSONAL_INFO = "personal_info"
    PRIVACY_SETTINGS = "privacy_settings"
    DELETION = "deletion"
    CONSENT = "consent"
    SENSITIVE_APP = "sensitive_app"


class Evaluation(_Frozen):
    complete: bool
    risk: bool = False
    risk_category: RiskCategory | None = None
    page_type: PageType = PageType.OTHER
    reason: str = ""
    evaluator: str = ""  # "rules" or "llm:<model>"

    @model_validator(mode="after")
    def _risk_has_category(self) -> Self:
        if self.risk and self.risk_category is None:
            raise ValueError("a risky evaluation must name its risk category")
        return self


# --------------------------------------------------------------------------- captures and traces


class CaptureSource(StrEnum):
    AUTO = "auto"
    USER = "user"


class Capture(_Frozen):
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


class TokenUsage(_Frozen):
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


class StepTimings(_Frozen):
    observe_ms: float = 0.0
    perceive_ms: float = 0.0
    decide_ms: float = 0.0
    act_ms: float = 0.0


class StepRecord(_Frozen):
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


class Trace(_Frozen):
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


class SubTaskResult(_Frozen):
    subtask_id: str
    status: SubTaskStatus
    captures: tuple[Capture, ...] = ()
    trace: Trace
    facts: tuple[str, ...] = ()  # key facts extracted, fed along plan edges
    reason: str = ""  # why it stopped, in words a person understands
    risk_category: RiskCategory | None = None
    device: str | None = None
    attempt: int = 1


# --------------------------------------------------------------------------- reports


class Citation(_Frozen):
    """``[capture_id(original text)]`` in a report, grounded to a box or not."""

    capture_id: str
    quote: str
    grounded: bool = False
    box: Bounds | None = None
    score: float = Field(default=0.0, ge=0.0, le=1.0)
    element_id: str | None = None
    crop_key: str | None = None


class AppStatus(_Frozen):
    app_label: str
    package: str
    status: SubTaskStatus
    reason: str = ""


class Report(_Frozen):
    run_id: str
    query: Query
    markdown: str
    citations: tuple[Citation, ...] = ()
    apps: tuple[AppStatus, ...] = ()
    synthesizer: str  # "llm:<model>" or "extractive (no model configured)"
    created_at: datetime = Field(default_factory=utcnow)

    @property
    def unverified(self) -> tuple[Citation, ...]:
        return tuple(c for c in self.citations if not c.grounded)


# --------------------------------------------------------------------------- run records


class RunStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    PAUSED = "paused"
    COMPLETED = "completed"
    FAILED = "failed"
    STOPPED = "stopped"


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


class RunEvent(_Frozen):
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
    plan: Plan | None = None
    step: StepRecord | None = None
    preview: Preview | None = None
    capture: Capture | None = None
    result: SubTaskResult | None = None
    report: Report | None = None


class RunManifest(_Frozen):
    """The system of record for a run, stored at ``runs/<run_id>/manifest.json``."""

    run_id: str
    query: Query
    status: RunStatus = RunStatus.PENDING
    plan: Plan | None = None
    subtasks: dict[str, SubTaskStatus] = Field(default_factory=dict)
    capture_ids: tuple[str, ...] = ()
    report_key: str | None = None
    prefect_flow_run_id: str | None = None
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    error: str | None = None


class ServingStatus(_Frozen):
    """What the subscriptions service serves now (written by ``flows.serve``, read by ``status``)."""

    pid: int
    child_pid: int | None = None  # the process serving the deployments, None between restarts
    deployments: tuple[str, ...] = ()  # Prefect deployment names, active and paused
    paused: int = 0
    updated_at: datetime = Field(default_factory=utcnow)
    error: str | None = None  # why the last serving child stopped, if it did
