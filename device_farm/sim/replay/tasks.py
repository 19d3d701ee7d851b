"""A person's recorded task sequence played on a recorded app: the screens it reaches.

DroidBot's task files (``tasks/<app>_<goal>.json``) list what a person did
from a fresh launch. Played on the app's replay graph, they give the target
screen of the task and the path to it, or the step where the recording left
its own graph (a screen that was never saved). Each event is done as a
driver does it: a tap at the view's centre; text as a tap on the field, the
text, and ENTER when the next event cannot happen on the typed screen; a
scroll as a swipe over 4/5 of the view.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

from core.recordings import DroidbotEvent
from device_farm.sim.replay.cursor import Outcome, ReplayCursor
from device_farm.sim.replay.graph import ReplayApp
from device_farm.sim.replay.player import ReplayPlayer

__all__ = ["TaskPlay", "play_event", "play_task"]

_MOVED = (Outcome.RECORDED, Outcome.SUBMITTED, Outcome.FOCUSED, Outcome.BACK)


@dataclass(frozen=True)
class TaskPlay:
    """Where a recorded task led: one screen per event, and how far it stayed on the graph."""

    screens: tuple[str, ...]  # the screen after each acting event (launch first)
    outcomes: tuple[Outcome, ...]  # the outcome of each acting event
    left_graph_at: int | None  # index of the first event with no recorded outcome, None when none

    @property
    def complete(self) -> bool:
        return self.left_graph_at is None

    @property
    def target(self) -> str:
        """The screen the task ends on."""
        return self.screens[-1]


def play_event(player: ReplayPlayer, event: DroidbotEvent, *, enter: bool = False) -> Outcome:
    """Do one recorded event on ``player``'s phone; ``enter`` presses ENTER after typed text."""
    view = event.view
    if event.event_type == "key":
        return player.key((event.name or "").upper())
    if view is None:
        return Outcome.OFF_GRAPH
    centre = view.box.center
    if event.event_type in ("click", "touch"):
        return player.tap(centre.x, centre.y)
    if event.event_type == "long_click":
        return player.tap(centre.x, centre.y, long_press=True)
    if event.event_type == "set_text":
        player.tap(centre.x, centre.y)
        typed = player.type_text(event.text or "")
        return player.key("ENTER") if enter and typed in _MOVED else typed
    if event.event_type == "scroll":
        box, reach = view.box, 2 / 5
        dx, dy = round(box.width * reach), round(box.height * reach)
        ends = {"DOWN": (0, dy, 0, -dy), "UP": (0, -dy, 0, dy), "RIGHT": (dx, 0, -dx, 0), "LEFT": (-dx, 0, dx, 0)}
        x1, y1, x2, y2 = ends.get((event.direction or "").upper(), (0, dy, 0, -dy))
        return player.swipe(centre.x + x1, centre.y + y1, centre.x + x2, centre.y + y2, 500)
    return Outcome.OFF_GRAPH


def play_task(app: ReplayApp, events: Sequence[DroidbotEvent]) -> TaskPlay:
    """Play a task's events from a fresh launch (launch and kill events are skipped)."""
    acting = [e for e in events if e.event_type not in ("intent", "kill_app")]
    cursor = ReplayCursor(app.package, app.launch)
    screens, outcomes = [cursor.screen], []
    left: int | None = None
    for index, event in enumerate(acting):
        outcome = _play_with_enter(app, cursor, event, acting[index + 1] if index + 1 < len(acting) else None)
        outcomes.append(outcome)
        screens.append(cursor.screen)
        if outcome not in _MOVED and left is None:
            left = index
            break
    return TaskPlay(tuple(screens), tuple(outcomes), left)


def _play_with_enter(app: ReplayApp, cursor: ReplayCursor, event: DroidbotEvent,
                     following: DroidbotEvent | None) -> Outcome:
    """Typed text is submitted when that is the only way the next event can happen."""
    if event.event_type != "set_text":
        return play_event(ReplayPlayer(app, cursor), event)
    plain = copy.deepcopy(cursor)
    outcome = play_event(ReplayPlayer(app, plain), event)
    probe = copy.deepcopy(plain)
    fits = following is not None and play_event(ReplayPlayer(app, probe), following) in _MOVED
    if fits or outcome not in _MOVED:
        _adopt(cursor, plain)
        return outcome
    entered = copy.deepcopy(cursor)
    submitted = play_event(ReplayPlayer(app, entered), event, enter=True)
    if submitted not in _MOVED:
        _adopt(cursor, plain)
        return outcome
    _adopt(cursor, entered)
    return submitted


def _adopt(cursor: ReplayCursor, other: ReplayCursor) -> None:
    cursor.__dict__.update(other.__dict__)
