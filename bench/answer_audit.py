"""What a measured run did on the virtual phones that issue 15's goals count.

Two counts, read from the run's events and checked against the simulator's own
app files (ground truth about the test double, never a product rule):

- **typed fields**: every ``Input`` the copilot sent, and whether the field was
  the app's search field. The step's preview names the field (``Enter [x] in
  [hint]``); in the app files a search field is an input that opens a screen
  when submitted (``submit:``), any other input (phone number, code, password)
  is a form field. A field the preview names by text no input of the app has
  (it still held earlier text) is counted as unknown.
- **pause sites**: for every pause a person would have been asked for, the
  screen the phone showed while it waited (read from the simulator's control
  API during the pause, by activity) and whether that screen is itself risky: a
  login wall (the app's login screen, or a screen with a log-in action), a
  screen with a secret field (password, payment password, card number), or a
  money screen (the app files name theirs checkout, payment, pay, pay_code,
  recharge and confirm). A pause anywhere else paused on a screen that at most
  links to a risky page (a home page with a top-up button, a settings page
  leading to payment settings, a fee list with a pay button).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from core.models import Input, RunEvent, RunEventKind
from device_farm.sim import AppSpec, Catalog, SimControlClient
from device_farm.sim.spec import Action, ScreenSpec, Widget, WidgetType
from storage import RunEventReader

__all__ = ["FieldKind", "PauseSite", "PauseWatcher", "SimTruth", "TypedInput", "audit_inputs"]

# The simulated apps' money screens, by screen id (see the module docstring).
_MONEY_SCREEN = re.compile(r"^(?:checkout|payment|pay|pay_code|recharge|confirm)$")
_ENTER = re.compile(r"^Enter \[(?P<text>.*?)\](?: in \[(?P<field>.*)\])?(?: and submit)?$", re.DOTALL)
_TAP = re.compile(r"^Tap \[(?P<field>.*)\]$", re.DOTALL)
_WATCH_IDLE_S = 15.0


class FieldKind(StrEnum):
    SEARCH = "search"
    FORM = "form"  # any input that is not the app's search field
    UNKNOWN = "unknown"


class TypedInput(BaseModel):
    """One input the copilot typed: in which app, into which field (its hint), of what kind."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    package: str
    field: str  # the field's hint; empty when unknown (never the typed text)
    kind: FieldKind


class PauseSite(BaseModel):
    """Where the phone stood while a pause waited for a person."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    package: str
    reason: str
    activity: str = ""
    screens: tuple[str, ...] = ()  # the app's screens with that activity
    risky: bool | None = None  # None: the app was not in front, the screen is unknown


def _walk(widgets: Iterable[Widget], logged_in: bool | None = None) -> Iterator[Widget]:
    """Every widget, or with ``logged_in`` given only those shown (a hidden container hides its children)."""
    for widget in widgets:
        if logged_in is not None and not _shown(widget, logged_in):
            continue
        yield widget
        yield from _walk(widget.children, logged_in)
        if widget.item is not None:
            yield from _walk((widget.item,), logged_in)


def _shown(widget: Widget, logged_in: bool) -> bool:
    condition = (widget.show_if or "").strip()
    return not ((condition == "logged_in" and not logged_in) or (condition == "not logged_in" and logged_in))


def _full_activity(app: AppSpec, screen: ScreenSpec) -> str:
    return app.package + screen.activity if screen.activity.startswith(".") else screen.activity


class SimTruth:
    """The simulator's app files, asked what a field and a screen are."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def field_kind(self, package: str, label: str) -> FieldKind | None:
        """The kind of the app's input whose hint is ``label``; None when no input has it."""
        app = self.catalog.get(package)
        if app is None or not label.strip():
            return None
        kinds = {FieldKind.SEARCH if w.submit else FieldKind.FORM
                 for screen in app.screens.values() for w in _walk((*screen.body, *screen.bottom))
                 if w.type is WidgetType.INPUT and w.hint.strip() == label.strip()}
        if not kinds:
            return None
        return FieldKind.FORM if FieldKind.FORM in kinds else FieldKind.SEARCH

    def is_field(self, package: str, label: str) -> bool:
        return self.field_kind(package, label) is not None

    def pause_site(self, package: str, reason: str, activity: str, logged_in: bool) -> PauseSite:
        """Which of the app's screens show ``activity``, and whether any of them is risky."""
        app = self.catalog.get(package)
        if app is None:
            return PauseSite(package=package, reason=reason, activity=activity)
        screens = [(name, s) for name, s in app.screens.items() if _full_activity(app, s) == activity]
        if not screens:
            return PauseSite(package=package, reason=reason, activity=activity)
        risky = any(self._risky(app, name, screen, logged_in) for name, screen in screens)
        return PauseSite(package=package, reason=reason, activity=activity,
                         screens=tuple(name for name, _ in screens), risky=risky)

    @staticmethod
    def _risky(app: AppSpec, name: str, screen: ScreenSpec, logged_in: bool) -> bool:
        if name == app.login_screen or _MONEY_SCREEN.match(name):
            return True
        shown = _walk((*screen.body, *screen.bottom), logged_in)
        return any((w.type is WidgetType.INPUT and w.password) or w.action is Action.LOGIN for w in shown)


def audit_inputs(events: Sequence[RunEvent], truth: SimTruth, packages: dict[str, str]) -> list[TypedInput]:
    """Every typed input of a run, classified (``packages``: sub-task id -> package)."""
    previews = {(e.subtask_id, e.preview.step): e.preview.instruction
                for e in events if e.kind is RunEventKind.PREVIEW and e.preview is not None}
    typed: list[TypedInput] = []
    last_tap: dict[str, str] = {}  # sub-task -> the label of its last tapped input field
    earlier: dict[tuple[str, str], FieldKind] = {}  # (package, text typed) -> the field's kind
    for event in events:
        step = event.step
        if event.kind is not RunEventKind.STEP or step is None or event.subtask_id is None:
            continue
        package = packages.get(event.subtask_id, "")
        instruction = previews.get((event.subtask_id, step.step), "")
        tap = _TAP.match(instruction)
        if tap and truth.is_field(package, tap["field"]):
            last_tap[event.subtask_id] = tap["field"]
        if not isinstance(step.action, Input):
            continue
        enter = _ENTER.match(instruction)
        label = (enter["field"] if enter and enter["field"] else last_tap.get(event.subtask_id, "")).strip()
        kind = truth.field_kind(package, label)
        if kind is None:  # the field showed text instead of its hint: text typed earlier, perhaps
            kind = earlier.get((package, label), FieldKind.UNKNOWN)
            label = ""
        earlier[(package, step.action.text.strip())] = kind
        typed.append(TypedInput(package=package, field=label, kind=kind))
    return typed


class PauseWatcher:
    """Follows one run's live events; at each pause, reads where its phone stands."""

    def __init__(self, reader: RunEventReader, control: SimControlClient, truth: SimTruth) -> None:
        self.reader, self.control, self.truth = reader, control, truth
        self._sites: list[PauseSite] = []
        self._thread: threading.Thread | None = None

    def start(self, run_id: str) -> None:
        """Begin following ``run_id`` (its stream may not exist yet)."""
        self._sites = []
        self._thread = threading.Thread(target=self._follow, args=(run_id,), daemon=True,
                                        name=f"pause-watcher-{run_id}")
        self._thread.start()

    def sites(self, timeout_s: float = 30.0) -> list[PauseSite]:
        """The pauses seen, once the run has finished (or the stream went quiet)."""
        if self._thread is not None:
            self._thread.join(timeout_s)
        return list(self._sites)

    def _follow(self, run_id: str) -> None:
        packages: dict[str, str] = {}  # sub-task id -> package, from the run's plan
        for event in self.reader.iter_live(run_id, idle_timeout_s=_WATCH_IDLE_S):
            if event.kind is RunEventKind.PLAN_READY and event.plan is not None:
                packages = {s.id: s.package for s in event.plan.subtasks}
            result = event.result
            # The sub-flow's own NEEDS_USER (with its result) comes as it starts to wait.
            if event.kind is not RunEventKind.NEEDS_USER or result is None or not result.device:
                continue
            package = packages.get(event.subtask_id or "", "")
            phone = next(iter(self.control.status(result.device)), None)
            reason = result.reason or (result.risk_category.value if result.risk_category else "")
            if phone is None or phone.package != package:
                self._sites.append(PauseSite(package=package, reason=reason,
                                             activity=phone.activity if phone else ""))
                continue
            self._sites.append(self.truth.pause_site(package, reason, phone.activity,
                                                     phone.logged_in.get(package, True)))
