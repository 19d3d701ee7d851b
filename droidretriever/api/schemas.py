"""What the API's routes take and answer (frozen pydantic models; the OpenAPI schema is built from them)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, HttpUrl

from core.models import Frozen, Heard, PageMode, RunManifest, RunStatus
from core.text import has_letters
from device_farm.models import DeviceState
from flows.pause_queue import PauseEntry
from flows.steering import SteeringState

__all__ = [
    "CAPTURE_ID",
    "MAP_SCREEN_ID",
    "MAP_VERSION",
    "PACKAGE",
    "RUN_ID",
    "SERIAL",
    "SUBSCRIPTION_ID",
    "SUBTASK_ID",
    "DeviceView",
    "DraftView",
    "HealthView",
    "InputReply",
    "LoginCode",
    "MapSummary",
    "PauseView",
    "RunCreate",
    "RunDetail",
    "RunPage",
    "RunStarted",
    "RunSummary",
    "SubscriptionCreate",
    "SubscriptionView",
    "TokenLogin",
]

# Ids as they appear in paths: validated before they reach a key (no '/', no '..').
RUN_ID = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}$"
SERIAL = r"^[A-Za-z0-9][A-Za-z0-9._:\-]{0,63}$"
CAPTURE_ID = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,119}$"
SUBTASK_ID = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}$"
SUBSCRIPTION_ID = r"^sub-[a-z0-9]{6,32}$"
DRAFT_ID = r"^draft-[0-9A-Za-z\-]{6,60}$"
PACKAGE = r"^[A-Za-z][A-Za-z0-9_]{0,99}(\.[A-Za-z0-9_]{1,100}){0,20}$"  # an Android package name
MAP_SCREEN_ID = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,119}$"
# An app's versionName as the map stores it: anything but '/' and control characters ('.' and '..'
# pass here and are refused by the map store's own key check).
MAP_VERSION = r"^[^/\x00-\x1f]{0,100}$"


def _worded(text: str) -> str:
    if not has_letters(text):
        raise ValueError("the question has no words, only symbols, emoji or invisible "
                         "characters: ask it in words")
    return text


# What a person asks: a run would find no app and no search term in a question without a word.
QuestionText = Annotated[str, Field(min_length=1, max_length=2000), AfterValidator(_worded)]


class RunCreate(Frozen):
    """A question, with ``droidretriever ask``'s options."""

    text: QuestionText
    apps: tuple[str, ...] = Field(default=(), max_length=20)
    mode: PageMode | None = None
    limit: int = Field(default=3, ge=1, le=20)
    # A recording already heard by POST /transcripts; ``text`` is what the person made of it.
    draft: str | None = Field(default=None, pattern=DRAFT_ID)


class RunStarted(Frozen):
    run_id: str
    flow_run_id: str
    dashboard: str  # the run's page
    prefect: str  # the run in the Prefect UI


class RunSummary(Frozen):
    run_id: str
    question: str
    status: RunStatus | None = None  # from the manifest, once the run wrote one
    prefect_state: str = ""  # Scheduled, Running, Paused, Completed, Failed, ...
    started_at: datetime | None = None
    flow_run_id: str


class RunPage(Frozen):
    runs: tuple[RunSummary, ...]
    page: int
    per_page: int
    has_more: bool


class RunDetail(Frozen):
    manifest: RunManifest
    steering: SteeringState
    prefect: str | None = None
    dashboard: str
    report: bool = False  # the HTML report is ready at /runs/{id}/report


class DraftView(Frozen):
    """A recording heard, waiting for the person to correct it and ask."""

    draft: str
    heard: Heard


class PauseView(Frozen):
    entry: PauseEntry
    waited_s: float
    dashboard: str


class DeviceView(Frozen):
    serial: str
    model: str
    width: int
    height: int
    state: DeviceState
    reason: str = ""
    lease_run: str | None = None
    current_app: str = ""  # the label of the app in front; "" for the launcher or a system app
    current_package: str = ""
    takeover_run: str | None = None  # a person drives it for this run
    apps: int = 0
    heartbeat_alive: bool = False


class InputReply(Frozen):
    serial: str
    did: str  # what was done, in words ("tap at (540, 1200)", "text entered, 8 characters")
    note: str = ""  # what the person should know (the field does not show typed text)
    inputs: int  # this phone's input counter: live frames carry it once they show the result


class LoginCode(Frozen):
    code: str
    url: str
    expires_in_s: int


class TokenLogin(Frozen):
    token: str = Field(min_length=1, max_length=200)


class HealthView(Frozen):
    ok: Literal[True] = True
    version: str


class MapSummary(Frozen):
    """One stored app map, without its screens (``GET /maps/{package}`` has them)."""

    package: str
    label: str = ""
    version: str = ""
    screens: int
    walls: int
    complete: bool  # False while a build is under way (or stopped before the end: it resumes)
    built_at: datetime
    stopped: str = ""  # why the build ended: "explored everything", "screen budget", ...


class SubscriptionCreate(Frozen):
    text: QuestionText
    cron: str | None = Field(default=None, max_length=100)
    every_s: int | None = Field(default=None, ge=10, le=366 * 86400)
    apps: tuple[str, ...] = Field(default=(), max_length=20)
    mode: PageMode | None = None
    limit: int = Field(default=3, ge=1, le=20)
    webhook: HttpUrl | None = None  # POSTed when the answer changes; else the service's log


class SubscriptionView(Frozen):
    id: str
    question: str
    schedule: str
    paused: bool
    next_run: datetime | None = None
    next_state: str = ""
    last_change: str = ""  # the latest run's change summary
    last_run: str | None = None
    last_checked: datetime | None = None
