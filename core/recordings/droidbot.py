"""DroidBot's recording format: states, events and task sequences, and states as ``uiautomator`` XML.

DroidBot (and AutoDroid and many research traces) store a screen as a flat
``views[]`` list with parent/children indices, a transition as an event with
the ``state_str`` of the screens before and after, and a person's
demonstration as a list of events. Perception reads the states (tests,
benchmarks, detector training); the virtual phones replay whole recordings.
Both sit above this module, which is why the format lives at the bottom.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

from lxml import etree
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.models import Bounds
from core.recordings.errors import RecordingError

_Recorded = TypeVar("_Recorded", bound=BaseModel)

__all__ = [
    "DroidbotEvent",
    "DroidbotState",
    "DroidbotTransition",
    "DroidbotView",
    "convert_droidbot_state",
    "list_droidbot_states",
    "load_droidbot_state",
    "load_droidbot_task",
    "load_droidbot_transition",
    "screenshot_path",
]

class DroidbotView(BaseModel):
    """One entry of a DroidBot state's ``views[]`` (or an event's target view)."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    temp_id: int
    parent: int = -1
    children: tuple[int, ...] = ()
    class_name: str = Field(default="", alias="class")
    resource_id: str | None = None
    text: str | None = None
    content_description: str | None = None
    bounds: tuple[tuple[int, int], tuple[int, int]]
    package: str | None = None
    clickable: bool = False
    long_clickable: bool = False
    scrollable: bool = False
    editable: bool = False
    checkable: bool = False
    checked: bool = False
    selected: bool = False
    focused: bool = False
    focusable: bool = False
    enabled: bool = True
    visible: bool = True
    is_password: bool = False
    signature: str = ""
    content_free_signature: str = ""

    @property
    def box(self) -> Bounds:
        """The view's bounds as a :class:`Bounds` (inverted boxes become empty)."""
        (left, top), (right, bottom) = self.bounds
        return Bounds(left=left, top=top, right=max(left, right), bottom=max(top, bottom))


class DroidbotState(BaseModel):
    """A DroidBot ``state_<ts>.json``."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    tag: str
    state_str: str
    state_str_content_free: str = ""
    foreground_activity: str = ""
    activity_stack: tuple[str, ...] = ()
    width: int = Field(gt=0)
    height: int = Field(gt=0)
    views: tuple[DroidbotView, ...]

    @property
    def package(self) -> str:
        return self.foreground_activity.split("/", 1)[0]

    @property
    def activity(self) -> str:
        return self.foreground_activity.split("/", 1)[1] if "/" in self.foreground_activity else ""

    def visible_views(self) -> tuple[DroidbotView, ...]:
        """Views uiautomator would dump: visible, under visible ancestors."""
        by_id = {v.temp_id: v for v in self.views}
        shown: set[int] = set()
        for view in self.views:  # DroidBot lists parents before children
            parent = by_id.get(view.parent)
            if view.visible and (parent is None or parent.temp_id in shown):
                shown.add(view.temp_id)
        return tuple(v for v in self.views if v.temp_id in shown)


class DroidbotEvent(BaseModel):
    """One input event: what was done, on which view, with which text, key or direction."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    event_type: str  # touch, click, long_click, set_text, key, scroll, intent, kill_app, ...
    view: DroidbotView | None = None
    text: str | None = None  # set_text
    name: str | None = None  # key: BACK, HOME, ENTER ...
    direction: str | None = None  # scroll: UP, DOWN, LEFT, RIGHT (the way the content moves into view)
    intent: str | None = None  # intent: "am start <package>/<activity>"
    x: int | None = None  # touch events without a view
    y: int | None = None

    @property
    def started_package(self) -> str | None:
        """The package an ``intent`` event starts (``am start pkg/activity``), else None."""
        if self.event_type != "intent" or not self.intent:
            return None
        component = self.intent.split()[-1]
        return component.split("/", 1)[0] if "/" in component else None


class DroidbotTransition(BaseModel):
    """A DroidBot ``event_<ts>.json``: an event and the screens before and after it."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    tag: str
    event: DroidbotEvent
    start_state: str
    stop_state: str


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _add_node(
    parent: etree._Element, view: DroidbotView, index: int, by_id: dict[int, DroidbotView]
) -> None:
    node = etree.SubElement(parent, "node")
    # Attribute order as `uiautomator dump` writes it.
    node.set("index", str(index))
    node.set("text", view.text or "")
    node.set("resource-id", view.resource_id or "")
    node.set("class", view.class_name)
    node.set("package", view.package or "")
    node.set("content-desc", view.content_description or "")
    node.set("checkable", _bool(view.checkable))
    node.set("checked", _bool(view.checked))
    node.set("clickable", _bool(view.clickable))
    node.set("enabled", _bool(view.enabled))
    node.set("focusable", _bool(view.focusable))
    node.set("focused", _bool(view.focused))
    node.set("scrollable", _bool(view.scrollable))
    node.set("long-clickable", _bool(view.long_clickable))
    node.set("password", _bool(view.is_password))
    node.set("selected", _bool(view.selected))
    node.set("bounds", view.box.to_uiautomator())
    children = [by_id[c] for c in view.children if c in by_id]
    for child_index, child in enumerate(children):
        _add_node(node, child, child_index, by_id)


def convert_droidbot_state(state: DroidbotState) -> str:
    """The ``uiautomator dump`` XML a phone would have printed for this state.

    Invisible views and their subtrees are left out, as uiautomator does.
    """
    visible = state.visible_views()
    by_id = {v.temp_id: v for v in visible}
    roots = [v for v in visible if v.parent not in by_id]
    hierarchy = etree.Element("hierarchy", rotation="0")
    for index, view in enumerate(roots):
        _add_node(hierarchy, view, index, by_id)
    body: str = etree.tostring(hierarchy, encoding="unicode")
    return "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>" + body


def _read_model(model: type[_Recorded], path: Path, what: str) -> _Recorded:
    try:
        return model.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as exc:
        raise RecordingError(
            f"cannot read DroidBot {what} {path}: {exc}",
            hint=f"point at a {what} file written by DroidBot ({what}s/{what}_<ts>.json)",
        ) from exc


def load_droidbot_state(path: Path) -> DroidbotState:
    """Read one ``state_<ts>.json``; raises :class:`RecordingError` when it is not one."""
    return _read_model(DroidbotState, path, "state")


def load_droidbot_transition(path: Path) -> DroidbotTransition:
    """Read one ``events/event_<ts>.json``; raises :class:`RecordingError` when it is not one."""
    return _read_model(DroidbotTransition, path, "event")


def load_droidbot_task(path: Path) -> tuple[DroidbotEvent, ...]:
    """Read one ``tasks/<app>_<goal>.json``: a person's recorded events, oldest first."""
    try:
        raw = json.loads(path.read_bytes())
        if not isinstance(raw, list):
            raise ValueError("a task file holds a JSON list of events")
        return tuple(DroidbotEvent.model_validate(item) for item in raw)
    except (OSError, ValueError, ValidationError) as exc:
        raise RecordingError(
            f"cannot read DroidBot task {path}: {exc}",
            hint="point at a tasks/<app>_<goal>.json file: a list of DroidBot events",
        ) from exc


def screenshot_path(state_path: Path) -> Path:
    """The ``screen_<ts>.jpg`` recorded beside ``state_<ts>.json``."""
    return state_path.with_name(state_path.name.replace("state_", "screen_", 1)).with_suffix(".jpg")


def list_droidbot_states(data_dir: Path) -> list[Path]:
    """Every ``states/state_*.json`` under ``data_dir``, sorted (deterministic order)."""
    return sorted(data_dir.glob("*/states/state_*.json")) + sorted(
        data_dir.glob("states/state_*.json")
    )
