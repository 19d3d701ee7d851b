"""What an action does on a replayed app: follow a recorded event, or stay off the recorded graph.

An action matches a recorded event of the current screen, or of a screen of
the same kind (the same page recorded with other content), preferring the
current screen, then the same text, then the smallest view:

- a tap or long press matches when the view that takes the touch (Android's
  dispatch, :mod:`hit`) is the recorded event's receiving view: same class,
  resource id and box (IoU >= 0.5);
- text entry matches a recorded ``set_text`` on the focused field; any text is
  accepted (the recording holds one outcome) and shown in the field;
- a swipe matches a recorded ``scroll`` of its direction on the scrollable view
  under its start;
- a key matches a recorded key event. BACK without one goes to the screen
  before (the app's back stack), and leaves the app from its first screen;
  ENTER after typing goes where the recording went next.

Anything else leaves the screen as it is and counts as off the recorded graph.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from core.models import Point
from core.recordings import DroidbotState, DroidbotView
from device_farm.sim.replay.cursor import Outcome, ReplayCursor, field_key
from device_farm.sim.replay.graph import EdgeKind, ReplayApp, ReplayEdge, ViewKey
from device_farm.sim.replay.hit import find_receiver, find_scrollable, topmost_view

__all__ = ["ReplayPlayer", "swipe_direction"]

_TAP_SLOP = 24  # px a finger may move and still tap
_LONG_PRESS_MS = 400


def _inside(view: ViewKey, x: int, y: int) -> bool:
    return view.box.contains(Point(x=x, y=y))


def _labelled(view: ViewKey) -> bool:
    return "[text]None" not in view.signature and "[text]" in view.signature


def _descendants(state: DroidbotState, root: DroidbotView) -> list[DroidbotView]:
    """``root`` and every view under it."""
    children: dict[int, list[DroidbotView]] = {}
    for view in state.views:
        children.setdefault(view.parent, []).append(view)
    out, todo = [], [root]
    while todo:
        view = todo.pop()
        out.append(view)
        todo.extend(children.get(view.temp_id, ()))
    return out


def _taken_by(state: DroidbotState, view: DroidbotView, taker: DroidbotView) -> bool:
    """Whether a tap on ``view``'s centre reaches ``taker``."""
    centre = view.box.center
    reached = find_receiver(state, centre.x, centre.y)
    return reached is not None and reached.temp_id == taker.temp_id


def swipe_direction(x1: int, y1: int, x2: int, y2: int) -> str:
    """DroidBot's name for a swipe: where the content comes from (finger up = DOWN)."""
    dx, dy = x2 - x1, y2 - y1
    if abs(dy) >= abs(dx):
        return "DOWN" if dy < 0 else "UP"
    return "RIGHT" if dx < 0 else "LEFT"


class ReplayPlayer:
    """Applies actions to one phone's cursor in one recorded app."""

    def __init__(self, app: ReplayApp, cursor: ReplayCursor) -> None:
        self.app, self.cursor = app, cursor

    @property
    def state(self) -> DroidbotState:
        return self.app.screens[self.cursor.screen].state

    # ------------------------------------------------------------------ matching

    def _edges(self, kind: EdgeKind) -> Iterator[tuple[int, ReplayEdge]]:
        for rank, key in enumerate(self.app.same_kind(self.cursor.screen)):
            for edge in self.app.edges.get(key, ()):
                if edge.kind is kind:
                    yield (0 if rank == 0 else 1), edge

    def _best(self, found: list[tuple[tuple[int, int, int], ReplayEdge]]) -> ReplayEdge | None:
        """The best-ranked match; among equals, the outcome recorded most often, then the earliest."""
        if not found:
            return None
        top = min(rank for rank, _ in found)
        edges = [edge for rank, edge in found if rank == top]
        votes = Counter(edge.stop for edge in edges)
        return min(edges, key=lambda edge: (-votes[edge.stop], edge.tag))

    def _match_touch(self, x: int, y: int, kind: EdgeKind) -> ReplayEdge | None:
        taker = find_receiver(self.state, x, y, long_press=kind is EdgeKind.LONG_PRESS)
        top = topmost_view(self.state, x, y)
        mine = ViewKey.of(taker) if taker is not None else None
        # Labels whose touches the same view takes: a labelled view may have moved on
        # another recording of the page (tabs reordered), and is still the same view.
        inside = {ViewKey.of(v).signature for v in _descendants(self.state, taker)
                  if _taken_by(self.state, v, taker)} if taker else set()
        found = []
        for rank, edge in self._edges(kind):
            wanted = edge.receiver or edge.view
            if wanted is None:
                continue
            if mine is not None and wanted.same_kind(mine):
                found.append(((rank, int(wanted.signature != mine.signature), wanted.box.area), edge))
            elif edge.view is not None and _labelled(edge.view) and edge.view.signature in inside:
                found.append(((rank, 1, edge.view.box.area), edge))
            elif taker is None and top is not None and edge.view is not None and _inside(edge.view, x, y) \
                    and edge.view.same_kind(ViewKey.of(top)):
                found.append(((rank, 1, edge.view.box.area), edge))  # a touch on a view that is not clickable
        return self._best(found)

    # ------------------------------------------------------------------ actions

    def _follow(self, edge: ReplayEdge) -> None:
        self.cursor.move(self.app.settle(edge.stop))

    def tap(self, x: int, y: int, *, long_press: bool = False) -> Outcome:
        """A tap (or long press) at (x, y)."""
        kind = EdgeKind.LONG_PRESS if long_press else EdgeKind.TAP
        action = f"{kind.value} {x},{y}"
        edge = self._match_touch(x, y, kind)
        taker = find_receiver(self.state, x, y, long_press=long_press)
        field = ViewKey.of(taker) if taker is not None and taker.editable else None
        if edge is not None:
            self._follow(edge)
            if field is not None and edge.stop == edge.start:
                self.cursor.focused = field
            return self.cursor.note(action, Outcome.RECORDED)
        if field is not None:
            self.cursor.focused = field
            return self.cursor.note(action, Outcome.FOCUSED)
        return self.cursor.note(action, Outcome.OFF_GRAPH)

    def type_text(self, text: str) -> Outcome:
        """``input text`` into the focused field (nothing happens without one)."""
        cursor = self.cursor
        focused = cursor.focused = cursor.focused or self._recorded_focus()
        if focused is None:
            return cursor.note("text", Outcome.OFF_GRAPH)
        value = cursor.typed.get(field_key(cursor.screen, focused), "") + text
        found = [((rank, 0, edge.view.box.area), edge) for rank, edge in self._edges(EdgeKind.TEXT)
                 if edge.view is not None and edge.view.same_kind(focused)]
        edge = self._best(found)
        if edge is None:
            cursor.typed[field_key(cursor.screen, focused)] = value
            return cursor.note("text", Outcome.OFF_GRAPH)
        landed = self._field_like(self.app.settle(edge.stop), focused)
        if landed is None:
            # The recording's next screen shows no such field (typing went straight on to
            # results): the text stays in the field here and ENTER goes on.
            cursor.typed[field_key(cursor.screen, focused)] = value
            cursor.pending = self.app.settle(edge.stop)
            return cursor.note("text", Outcome.RECORDED)
        self._follow(edge)
        cursor.focused = landed
        cursor.typed[field_key(cursor.screen, landed)] = value
        return cursor.note("text", Outcome.RECORDED)

    def _recorded_focus(self) -> ViewKey | None:
        """The text field the recording shows focused on this screen (a search page opens so)."""
        focused = [v for v in self.state.visible_views() if v.editable and v.focused]
        return ViewKey.of(focused[-1]) if focused else None

    def _field_like(self, screen: str, view: ViewKey) -> ViewKey | None:
        """The field of ``view``'s kind on ``screen``, if it has one."""
        for candidate in self.app.screens[screen].state.visible_views():
            key = ViewKey.of(candidate)
            if candidate.editable and key.same_kind(view):
                return key
        return None

    def delete_char(self) -> Outcome:
        """DEL in the focused field."""
        cursor = self.cursor
        focused = cursor.focused or self._recorded_focus()
        if focused is None:
            return cursor.note("key DEL", Outcome.OFF_GRAPH)
        key = field_key(cursor.screen, focused)
        cursor.typed[key] = cursor.typed.get(key, "")[:-1]
        return cursor.note("key DEL", Outcome.FOCUSED)

    def clear_text(self) -> Outcome:
        """ADB Keyboard's clear: empty the focused field."""
        cursor = self.cursor
        focused = cursor.focused or self._recorded_focus()
        if focused is None:
            return cursor.note("clear", Outcome.OFF_GRAPH)
        cursor.typed[field_key(cursor.screen, focused)] = ""
        return cursor.note("clear", Outcome.FOCUSED)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int) -> Outcome:
        """A swipe: a tap or long press when the finger barely moves, else a scroll."""
        if abs(x2 - x1) <= _TAP_SLOP and abs(y2 - y1) <= _TAP_SLOP:
            return self.tap(x1, y1, long_press=duration_ms >= _LONG_PRESS_MS)
        direction = swipe_direction(x1, y1, x2, y2)
        under = find_scrollable(self.state, x1, y1)
        found = []
        for rank, edge in self._edges(EdgeKind.SCROLL):
            if edge.direction != direction or edge.view is None or not _inside(edge.view, x1, y1):
                continue
            if under is not None and not edge.view.same_kind(ViewKey.of(under)):
                continue
            found.append(((rank, 0, edge.view.box.area), edge))
        chosen = self._best(found)
        if chosen is None:
            return self.cursor.note(f"swipe {direction}", Outcome.OFF_GRAPH)
        self._follow(chosen)
        return self.cursor.note(f"swipe {direction}", Outcome.RECORDED)

    def key(self, name: str) -> Outcome:
        """A key press: a recorded key event, else BACK's back stack or ENTER's submit."""
        action = f"key {name}"
        found = [((rank, 0, 0), edge) for rank, edge in self._edges(EdgeKind.KEY) if edge.key_name == name]
        edge = self._best(found)
        cursor = self.cursor
        if edge is not None:
            self._follow(edge)
            return cursor.note(action, Outcome.RECORDED)
        if name == "BACK":
            if not cursor.history:
                return cursor.note(action, Outcome.LEFT)
            cursor.screen, cursor.focused = cursor.history.pop(), None
            return cursor.note(action, Outcome.BACK)
        if name in ("ENTER", "SEARCH"):
            after = cursor.pending or self.app.submits.get(cursor.screen)
            if after is not None:
                cursor.move(self.app.settle(after))
                return cursor.note(action, Outcome.SUBMITTED)
        if name == "DEL":
            return self.delete_char()
        return cursor.note(action, Outcome.OFF_GRAPH)
