"""A recorded app as a graph: recorded screens, recorded transitions, the launch screen.

One :class:`ReplayApp` is one package recorded on one screen size (a phone
of another size would see other pixels). Screens are DroidBot states, one per
``state_str``, layout and size (a scrolled page keeps its state string); an edge is a recorded event from one screen to the
next. Screens with the same content-free string (DroidBot's hash of the view
classes and resource ids, without texts) form a *kind*: the same page with
other content, such as a news front page recorded on two days.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from pathlib import Path

from core.models import Bounds
from core.recordings import (
    DroidbotState,
    DroidbotView,
    convert_droidbot_state,
    load_droidbot_state,
    screenshot_path,
)
from device_farm.sim.replay.draw import draw_screen

__all__ = ["EdgeKind", "ReplayApp", "ReplayEdge", "ReplayScreen", "ViewKey"]


class EdgeKind(StrEnum):
    """What a recorded event asks of the phone."""

    TAP = "tap"
    LONG_PRESS = "long_press"
    TEXT = "text"
    SCROLL = "scroll"
    KEY = "key"


@dataclass(frozen=True)
class ViewKey:
    """How a view is recognised on another recording of its page: kind, text and box."""

    content_free: str  # class and resource id
    signature: str  # with the text
    box: Bounds

    @classmethod
    def of(cls, view: DroidbotView) -> ViewKey:
        """The key of ``view``; DroidBot's signatures when recorded, else built alike."""
        free = view.content_free_signature or f"[class]{view.class_name}[resource_id]{view.resource_id}"
        return cls(free, view.signature or f"{free}[text]{view.text}", view.box)

    def same_kind(self, other: ViewKey, min_iou: float = 0.5) -> bool:
        """The same view of the page (class, resource id and box), whatever it reads."""
        return self.content_free == other.content_free and self.box.iou(other.box) >= min_iou


@dataclass
class ReplayScreen:
    """One recorded screen; its views and pixels are read from disk on first use."""

    key: str  # "<state_str>.<layout hash>@<width>x<height>"
    state_str: str
    content_free: str
    package: str
    activity: str
    width: int
    height: int
    path: Path

    @cached_property
    def state(self) -> DroidbotState:
        return load_droidbot_state(self.path)

    @cached_property
    def xml(self) -> str:
        """The recorded views as ``uiautomator dump`` XML."""
        return convert_droidbot_state(self.state)

    @cached_property
    def screenshot(self) -> bytes:
        """The recorded screenshot's bytes (JPEG); drawn from the views (PNG) where none was saved."""
        recorded = screenshot_path(self.path)
        return recorded.read_bytes() if recorded.is_file() else draw_screen(self.state)

    @property
    def kind(self) -> str:
        """Screens of one kind share this (content-free string and activity)."""
        return f"{self.content_free}|{self.activity}"


@dataclass(frozen=True)
class ReplayEdge:
    """A recorded event: what was done on which view of ``start``, and the screen it led to."""

    kind: EdgeKind
    start: str  # screen key
    stop: str  # screen key
    tag: str  # the event's recording time: provenance
    view: ViewKey | None = None  # the view the event named
    receiver: ViewKey | None = None  # the view that took the touch (the clickable one)
    key_name: str = ""  # KEY: BACK, ENTER ...
    direction: str = ""  # SCROLL: UP, DOWN, LEFT, RIGHT (where the content comes from)


@dataclass
class ReplayApp:
    """A recorded app of one screen size: screens, edges, settling and the launch screen."""

    package: str
    label: str
    width: int
    height: int
    screens: dict[str, ReplayScreen]
    launch: str  # the screen a fresh launch shows
    edges: dict[str, list[ReplayEdge]] = field(default_factory=dict)  # start key -> edges
    # A screen nobody acted on that the recording left by itself (a splash, a loading page).
    settles: dict[str, str] = field(default_factory=dict)
    # A typed field's screen -> the screen the recording showed next (its search submitted).
    submits: dict[str, str] = field(default_factory=dict)

    @cached_property
    def kinds(self) -> dict[str, tuple[str, ...]]:
        """Screen kind -> the screens of that kind."""
        out: dict[str, list[str]] = {}
        for screen in self.screens.values():
            out.setdefault(screen.kind, []).append(screen.key)
        return {k: tuple(v) for k, v in out.items()}

    def same_kind(self, key: str) -> tuple[str, ...]:
        """The screens of ``key``'s kind, ``key`` first."""
        screen = self.screens[key]
        return (key, *(k for k in self.kinds[screen.kind] if k != key))

    def settle(self, key: str) -> str:
        """Where the phone ends up after showing ``key``: transient screens move on."""
        seen = {key}
        while key in self.settles and self.settles[key] not in seen:
            key = self.settles[key]
            seen.add(key)
        return key

    @property
    def edge_count(self) -> int:
        return sum(len(v) for v in self.edges.values())
