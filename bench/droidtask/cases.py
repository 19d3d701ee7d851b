"""The DroidTask ground truth on the replay graph: each task as a case the runs are scored against.

A task's steps (:mod:`core.recordings.droidtask`) become DroidBot
events on its app's replay graph, with the scrolls a step needs where its
element is on a scrolled view of the page, and, where the task starts away from
the app's first screen, the recorded way there. The project's risk gate judges
each step on its recorded screen (a step it leaves to a person makes the task a
hand-over), and a step typing into the app's search field gives the search term.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.droidtask.scoring import Move, Shown, is_final
from bench.real_navigation import action_for
from core.models import Input, LongPress, Tap
from core.recordings import (
    DroidbotEvent,
    DroidbotView,
    DroidTask,
    DroidTaskAction,
    DroidTaskStep,
    load_droidtasks,
)
from device_farm.sim import ReplayApp, load_recordings
from device_farm.sim.replay import EdgeKind, ReplayEdge, ReplayScreen, ViewKey
from device_farm.sim.replay.hit import find_receiver
from device_farm.sim.replay.tasks import TaskPlay, play_task
from inference.perception import Observation, Perceiver, Perception
from inference.rules import check_action, is_search_field

__all__ = ["DroidTaskCase", "HandOver", "load_cases"]

_SCROLL_HOPS = 8  # scrolled views of one page a ground-truth step may need
_SETUP_HOPS = 6  # recorded events from the app's first screen to a task's first screen
_SEARCH = re.compile(r"search", re.IGNORECASE)


@dataclass(frozen=True)
class HandOver:
    """A ground-truth step the risk gate leaves to a person."""

    step: int
    category: str
    label: str


@dataclass(frozen=True)
class DroidTaskCase:
    """One task on its replay app: the ground truth as events and as scored moves, and its judgements."""

    task: DroidTask
    app: ReplayApp
    setup: tuple[DroidbotEvent, ...]  # from a fresh launch to the task's first screen (usually none)
    events: tuple[DroidbotEvent, ...]  # the ground truth, scrolls included where a step needs one
    play: TaskPlay  # setup and events played on the replay graph
    truth: tuple[Move, ...]
    hand_over: HandOver | None
    search_term: str | None

    @property
    def key(self) -> str:
        return self.task.key

    @property
    def budget(self) -> int:
        """Actions the run may take: twice the ground truth's, plus 2."""
        return 2 * len(self.truth) + 2

    @property
    def targets(self) -> frozenset[str]:
        return frozenset(self.task.target_states)

    @property
    def finals(self) -> frozenset[Shown]:
        return frozenset(Shown.of(s) for s in self.app.screens.values() if s.state_str in self.task.final_states)

    @property
    def playable(self) -> bool:
        """Whether the ground truth itself reaches a last-record screen on the replay graph."""
        return self.play.complete and is_final(Shown.of(self.app.screens[self.play.target]), self.finals)

    def submitted(self, index: int) -> bool:
        """Whether the ground truth's event ``index`` typed text that the graph submits (ENTER)."""
        outcomes = self.play.outcomes[len(self.setup):]
        return index < len(outcomes) and outcomes[index].value == "submitted"


def _view_of(box_of: ViewKey) -> DroidbotView:
    box = box_of.box
    return DroidbotView(temp_id=0, bounds=((box.left, box.top), (box.right, box.bottom)))


def _edge_event(edge: ReplayEdge) -> DroidbotEvent | None:
    if edge.kind is EdgeKind.KEY:
        return DroidbotEvent(event_type="key", name=edge.key_name)
    if edge.view is None:
        return None
    kinds = {EdgeKind.TAP: "click", EdgeKind.LONG_PRESS: "long_click", EdgeKind.SCROLL: "scroll"}
    kind = kinds.get(edge.kind)
    return DroidbotEvent(event_type=kind, view=_view_of(edge.view), direction=edge.direction) if kind else None


def _path(app: ReplayApp, start: str, arrived: Callable[[str], bool], *, scrolls_only: bool,
          hops: int) -> list[ReplayEdge] | None:
    """The fewest recorded events from ``start`` to a screen ``arrived`` accepts (None: none within ``hops``)."""
    queue: deque[tuple[str, list[ReplayEdge]]] = deque([(start, [])])
    seen = {start}
    while queue:
        key, path = queue.popleft()
        if arrived(key):
            return path
        if len(path) >= hops:
            continue
        for edge in app.edges.get(key, ()):
            stop = app.settle(edge.stop)
            usable = edge.kind is EdgeKind.SCROLL if scrolls_only else edge.kind is not EdgeKind.TEXT
            if usable and stop not in seen and _edge_event(edge) is not None:
                seen.add(stop)
                queue.append((stop, [*path, edge]))
    return None


def _step_event(step: DroidTaskStep) -> DroidbotEvent:
    """The step as DroidBot's event (a click on no view when its element matched none)."""
    if step.action is DroidTaskAction.BACK:
        return DroidbotEvent(event_type="key", name="BACK")
    if step.action is DroidTaskAction.INPUT:
        return DroidbotEvent(event_type="set_text", view=step.touch, text=step.text)
    return DroidbotEvent(event_type="click", view=step.touch)


def _showing(app: ReplayApp, states: set[str]) -> Callable[[str], bool]:
    return lambda key: app.screens[key].state_str in states


def _ground_truth(app: ReplayApp, task: DroidTask) -> tuple[tuple[DroidbotEvent, ...], tuple[DroidbotEvent, ...]]:
    """The setup to the task's first screen, and its steps as events with the scrolls they need."""
    first = set(task.steps[0].state_strs)
    first_kinds = {s.kind for s in app.screens.values() if s.state_str in first}
    setup: list[DroidbotEvent] = []
    if app.screens[app.launch].kind not in first_kinds:
        found = _path(app, app.launch, _showing(app, first), scrolls_only=False, hops=_SETUP_HOPS)
        setup = [e for e in (_edge_event(edge) for edge in found or ()) if e is not None]
    events: list[DroidbotEvent] = []
    for step in task.steps:
        here = play_task(app, [*setup, *events]).target
        wanted = step.state_str
        if wanted is not None and app.screens[here].state_str != wanted:
            scrolls = _path(app, here, _showing(app, {wanted}), scrolls_only=True, hops=_SCROLL_HOPS)
            events.extend(e for e in (_edge_event(edge) for edge in scrolls or ()) if e is not None)
        events.append(_step_event(step))
    return tuple(setup), tuple(events)


def _recorded(app: ReplayApp, state_str: str | None) -> ReplayScreen | None:
    """The earliest recording of a screen: the one the task reader resolved the step's view on."""
    return min((s for s in app.screens.values() if s.state_str == state_str), key=lambda s: s.path.name,
               default=None)


def _truth_moves(app: ReplayApp, task: DroidTask) -> tuple[Move, ...]:
    moves = []
    for step in task.steps:
        on = frozenset(Shown.of(s) for s in app.screens.values() if s.state_str in step.state_strs)
        recorded = _recorded(app, step.state_str)
        receiver = None
        if step.touch is not None and recorded is not None:
            centre = step.touch.box.center
            taker = find_receiver(recorded.state, centre.x, centre.y)
            receiver = ViewKey.of(taker) if taker is not None else None
        kind = {DroidTaskAction.TAP: "tap", DroidTaskAction.INPUT: "input", DroidTaskAction.BACK: "back"}[step.action]
        moves.append(Move(kind, on, receiver, step.text))
    return tuple(moves)


def _judge(app: ReplayApp, task: DroidTask, perceiver: Perceiver) -> tuple[HandOver | None, str | None]:
    """The first step the risk gate leaves to a person, and the search term typed, on the recorded screens."""
    hand_over, term = None, None
    for number, step in enumerate(task.steps, 1):
        recorded = _recorded(app, step.state_str)
        if recorded is None or step.touch is None:
            continue
        screen = _perceive_recorded(recorded, perceiver).screen
        action = action_for(_step_event(step), screen, submit=False)
        if action is None:
            continue
        finding = check_action(action, screen, goal=task.goal)
        if finding is not None and hand_over is None:
            target = action.target if isinstance(action, Tap | LongPress | Input) else None
            element = screen.element(target) if target else None
            hand_over = HandOver(number, finding.category.value, element.label if element else step.element.label)
        if isinstance(action, Input) and action.target is not None and term is None:
            field = screen.element(action.target)
            # The gate's search-field verdict alone takes a dialog's one field (a file name) for
            # a search box: a search term is what is typed where the field says "search".
            if field is not None and is_search_field(field, screen) and _SEARCH.search(
                    f"{field.label} {field.resource_id}"):
                term = action.text
    return hand_over, term


def _perceive_recorded(screen: ReplayScreen, perceiver: Perceiver) -> Perception:
    observation = Observation(serial="droidtask", step=0, package=screen.package, activity=screen.activity,
                              width=screen.width, height=screen.height, screenshot_png=screen.screenshot,
                              hierarchy_xml=screen.xml)
    return perceiver.perceive(observation, use_ocr=False)


def load_cases(root: Path, perceiver: Perceiver, apps: Sequence[str] = ()
               ) -> tuple[tuple[ReplayApp, ...], list[DroidTaskCase], list[tuple[DroidTask, str]]]:
    """The replay apps of ``root`` (DroidTask's folder), each task as a case, and the tasks left out with why."""
    recorded = load_recordings([root])
    cases: list[DroidTaskCase] = []
    left: list[tuple[DroidTask, str]] = []
    for folder in sorted(p for p in root.iterdir() if (p / "tasks").is_dir() and (not apps or p.name in apps)):
        for task in load_droidtasks(folder):
            app = next((a for a in recorded if a.package == task.package
                        and (a.width, a.height) == task.screen_size), None)
            if app is None:
                left.append((task, f"no replay app for {task.package} at {task.screen_size}"))
                continue
            setup, events = _ground_truth(app, task)
            hand_over, term = _judge(app, task, perceiver)
            cases.append(DroidTaskCase(task, app, setup, events, play_task(app, [*setup, *events]),
                                       _truth_moves(app, task), hand_over, term))
    return recorded, cases, left
