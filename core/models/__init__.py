"""Shared value types: the only currency between layers.

Every model is a frozen pydantic v2 model, so it can cross a module, a Celery
message, a Prefect parameter or the HTTP API as JSON and come back equal.
Grouped as in docs/architecture.md, one module per group, all re-exported here
(import them from ``core.models``):

    Query -> Plan (SubTask nodes + Edge DAG)
    Screen (UIElement*) -> Action (discriminated union on ``kind``) -> Evaluation
    Capture (stitched evidence) -> StepRecord / Trace -> SubTaskResult
    Report (Citation*) ; RunEvent (the single live stream) ; RunManifest (record)

    base        Frozen (the base of every shared model), utcnow, new_id
    geometry    Point, Bounds
    plan        PageMode, Query, Heard, SubTask, Edge, Plan, ActKind, ActRequest
    screens     UIElement, Screen, PageType
    actions     Action (Tap, Input, Scroll, Back, ...), Preview
    evaluation  Evaluation, RiskCategory
    records     Capture, StepRecord, Trace, SubTaskResult
    usage       TokenUsage, ModelCall, TokenLedger, ModelFallback, FallbackTally (model costs)
    reports     Citation, AppStatus, Intervention, LineSpan, Report
    runs        RunEvent, RunManifest, RunStatus, ServingStatus
    apps        InstalledApp (what the farm learns of a phone, what the planner sees)
    maps        AppMap, MapScreen, MapElement, Effect (an app explored on the farm)
    paths       Step, StepKind (a scripted path through an app)
"""

from __future__ import annotations

from core.models.actions import (
    Action,
    Back,
    Finish,
    Input,
    LongPress,
    OpenApp,
    Preview,
    Scroll,
    ScrollDirection,
    Swipe,
    Tap,
    Wait,
)
from core.models.apps import InstalledApp
from core.models.base import Frozen, new_id, utcnow
from core.models.evaluation import Evaluation, RiskCategory
from core.models.geometry import Bounds, Point
from core.models.maps import (
    AppMap,
    Effect,
    MapBudget,
    MapElement,
    MapList,
    MapProgress,
    MapScreen,
    MapStats,
    WallKind,
)
from core.models.paths import Step, StepKind
from core.models.plan import (
    ActKind,
    ActRequest,
    Edge,
    Heard,
    PageMode,
    Plan,
    Query,
    SubTask,
)
from core.models.records import (
    Capture,
    CaptureSource,
    StepRecord,
    StepTimings,
    SubTaskResult,
    SubTaskStatus,
    Trace,
    in_own_app,
)
from core.models.reports import AppStatus, Citation, Intervention, LineSpan, Report
from core.models.runs import RunEvent, RunEventKind, RunManifest, RunStatus, ServingStatus
from core.models.screens import ElementSource, PageType, Screen, UIElement
from core.models.usage import (
    CallOutcome,
    FallbackTally,
    ModelCall,
    ModelFallback,
    TokenLedger,
    TokenUsage,
    merge_tallies,
    tally_fallbacks,
)

__all__ = [
    "ActKind",
    "ActRequest",
    "Action",
    "AppMap",
    "AppStatus",
    "Back",
    "Bounds",
    "CallOutcome",
    "Capture",
    "CaptureSource",
    "Citation",
    "Edge",
    "Effect",
    "ElementSource",
    "Evaluation",
    "FallbackTally",
    "Finish",
    "Frozen",
    "Heard",
    "Input",
    "InstalledApp",
    "Intervention",
    "LineSpan",
    "LongPress",
    "MapBudget",
    "MapElement",
    "MapList",
    "MapProgress",
    "MapScreen",
    "MapStats",
    "ModelCall",
    "ModelFallback",
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
    "Step",
    "StepKind",
    "StepRecord",
    "StepTimings",
    "SubTask",
    "SubTaskResult",
    "SubTaskStatus",
    "Swipe",
    "Tap",
    "TokenLedger",
    "TokenUsage",
    "Trace",
    "UIElement",
    "Wait",
    "WallKind",
    "in_own_app",
    "merge_tallies",
    "new_id",
    "tally_fallbacks",
    "utcnow",
]
