"""A laid-out view: what the renderer draws, the dump writes and a tap hits.

Nodes are built fresh for each frame (the frame is cached while the phone's
state is unchanged), so they are plain mutable dataclasses, not models.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum

from device_farm.sim.spec import Action, Record, TextStyle

__all__ = ["Box", "Node", "Paint", "TapTarget"]

# left, top, right, bottom in screen pixels (right/bottom exclusive, as uiautomator).
Box = tuple[int, int, int, int]


class Paint(StrEnum):
    """How the renderer draws a node (independent of its Android class)."""

    NONE = "none"
    TEXT = "text"
    BUTTON = "button"
    IMAGE = "image"
    INPUT = "input"
    TOGGLE = "toggle"
    CARD = "card"
    DIVIDER = "divider"
    TAB = "tab"
    BAR = "bar"  # filled background (top bar, bottom bar, dialog panel)
    ICON = "icon"  # launcher icon: rounded square
    SCRIM = "scrim"  # dims what is below (dialogs)


@dataclass(frozen=True)
class TapTarget:
    """What tapping a node does; the phone interprets it."""

    go: str | None = None
    action: Action | None = None
    toast: str = ""
    dialog: str | None = None
    login: bool = False
    record: Record | None = None
    input_key: str | None = None
    toggle_key: str | None = None
    select_key: str | None = None  # a filter chip: its key among the phone's toggles
    select_group: tuple[str, ...] = ()  # the keys of the chips of its row (one is selected at a time)
    tab: bool = False
    package: str | None = None  # launcher icon / notification: open this app
    button_index: int | None = None  # dialog button
    system: str | None = None  # "back" (top bar arrow), "retry" (network error page)


@dataclass
class Node:
    cls: str
    box: Box
    package: str
    text: str = ""
    resource_id: str = ""
    desc: str = ""
    clickable: bool = False
    long_clickable: bool = False
    checkable: bool = False
    checked: bool = False
    focusable: bool = False
    focused: bool = False
    scrollable: bool = False
    password: bool = False
    selected: bool = False
    enabled: bool = True
    children: list[Node] = field(default_factory=list)
    # drawing
    paint: Paint = Paint.NONE
    style: TextStyle = TextStyle.BODY
    lines: tuple[str, ...] = ()  # wrapped text as drawn
    color: str | None = None
    text_color: str | None = None
    caption: str = ""  # painted into an image, not dumped
    caption_lines: tuple[str, ...] = ()
    align: str = "start"
    hint_shown: bool = False  # an empty input drawing its hint
    tap: TapTarget | None = None
    draw_box: Box | None = None  # unclipped box when scrolled partly out of view
    layer: int = 0  # 1 = drawn over the scroll body (top bar, bottom bar)

    @property
    def paint_box(self) -> Box:
        """Where the renderer lays out text (the clip is ``box``)."""
        return self.draw_box or self.box

    def walk(self) -> Iterator[Node]:
        """This node and its descendants, depth first (drawing order)."""
        yield self
        for child in self.children:
            yield from child.walk()
