"""What the DroidTask bench compares: screens, actions, and the paper's metrics on them.

Pure functions over :class:`Move` s: a run's actions read from the replay
phone's trail (:func:`agent_moves`), the ground truth's from its task file
(:mod:`bench.droidtask.cases`). How each metric is counted is in the package's
docstring (:mod:`bench.droidtask`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from device_farm.sim import ReplayApp, ReplayStep
from device_farm.sim.replay import ReplayScreen, ViewKey
from device_farm.sim.replay.hit import find_receiver

__all__ = ["Move", "Shown", "agent_moves", "completion", "is_final", "matched_prefix", "same_move", "spl"]

_INPUT_PARTS = ("text", "clear", "key DEL", "key ENTER", "key SEARCH")


@dataclass(frozen=True)
class Shown:
    """A screen as the scorer compares screens: DroidBot's state string and its kind."""

    state: str
    kind: str  # content-free signature and activity

    @classmethod
    def of(cls, screen: ReplayScreen) -> Shown:
        return cls(screen.state_str, screen.kind)


@dataclass(frozen=True)
class Move:
    """One action as scored: its kind, the screen(s) it is done on, the view it reaches, the text."""

    kind: str  # tap, long_press, input, back, open_app, key
    on: frozenset[Shown]  # ground truth: the step's page and its scrolled views; a run: the screen acted on
    receiver: ViewKey | None = None
    text: str | None = None
    led_to: Shown | None = None  # a run's action: the screen it left the phone on


def same_move(done: Move, truth: Move) -> bool:
    """Whether the action ``done`` is the ground-truth step ``truth`` (see the module docstring)."""
    if done.kind != truth.kind:
        return False
    if not any(a.state == b.state or a.kind == b.kind for a in done.on for b in truth.on):
        return False
    if truth.receiver is not None and (done.receiver is None or not done.receiver.same_kind(truth.receiver)):
        return False
    return truth.text is None or (done.text or "").strip().casefold() == truth.text.strip().casefold()


def matched_prefix(truth: Sequence[Move], done: Sequence[Move]) -> int:
    """How many ground-truth steps the run's actions match one for one, from the first."""
    count = 0
    for move, step in zip(done, truth, strict=False):
        if not same_move(move, step):
            break
        count += 1
    return count


def is_final(shown: Shown | None, finals: frozenset[Shown]) -> bool:
    """Whether ``shown`` is one of the last record's screens, or of the kind of one."""
    return shown is not None and any(shown.state == f.state or shown.kind == f.kind for f in finals)


def completion(truth: Sequence[Move], done: Sequence[Move], targets: frozenset[str],
               finals: frozenset[Shown]) -> int | None:
    """The number of actions after which the task is complete (SR), or None when it never is."""
    matched = 0
    for count, move in enumerate(done, 1):
        if move.led_to is not None and move.led_to.state in targets:
            return count
        if matched < len(truth) and same_move(move, truth[matched]):
            matched += 1
            if matched == len(truth) and is_final(move.led_to, finals):
                return count
    return None


def spl(completed: bool, truth_length: int, path_length: int) -> float:
    """Success weighted by path length: ground truth's length / max(path, ground truth), 0 when not done."""
    return truth_length / max(path_length, truth_length) if completed else 0.0


def _focused(screen: ReplayScreen) -> ViewKey | None:
    """The text field the recording shows focused (typing without a tap goes there)."""
    field = next((v for v in screen.state.visible_views() if v.editable and v.focused), None)
    return ViewKey.of(field) if field is not None else None


def agent_moves(app: ReplayApp, trail: Sequence[ReplayStep], start: str, typed: Sequence[str]) -> list[Move]:
    """A run's actions from the replay phone's trail (``typed``: the texts typed, in order).

    A tap and the text entry after it (text, clear, DEL, ENTER) are one ``input``
    action; a launch before any action is the run's own start; swipes are not actions.
    """
    moves: list[Move] = []
    texts = iter(typed)
    before, typing = start, False  # typing: the last action was a tap, which text entry may follow
    for step in trail:
        if step.package != app.package:
            continue
        shown = Shown.of(app.screens[step.screen])
        kind, _, rest = step.action.partition(" ")
        if step.action in _INPUT_PARTS:
            if typing:
                last = moves[-1]
                if step.action == "text":
                    last = replace(last, kind="input", text=next(texts, None))
                moves[-1] = replace(last, led_to=shown)
            elif step.action == "text":  # into the field the screen already had focused
                moves.append(Move("input", frozenset({Shown.of(app.screens[before])}),
                                  _focused(app.screens[before]), next(texts, None), shown))
                typing = True
        elif kind == "launch" and not moves:
            pass  # the run's own fresh start
        elif kind != "swipe":
            receiver = None
            if kind in ("tap", "long_press"):
                x, y = (int(v) for v in rest.split(","))
                taker = find_receiver(app.screens[before].state, x, y, long_press=kind == "long_press")
                receiver = ViewKey.of(taker) if taker is not None else None
            name = {"launch": "open_app", "key": "back" if rest == "BACK" else "key"}.get(kind, kind)
            moves.append(Move(name, frozenset({Shown.of(app.screens[before])}), receiver, led_to=shown))
            typing = kind == "tap"
        else:
            typing = False
        before = step.screen
    return moves
