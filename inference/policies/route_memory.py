"""Route memory as a policy: replay a route that reached this kind of goal before.

Wraps :mod:`inference.memory`: at the first screen of a try it recalls the
best routes for the app and goal (BM25 over goal text) and replays the best
one step by step; each step's screen is checked first, and a mismatch ends
the replay so the next policy takes over, and so does a replayed step the
phone did not take. Pop-ups are left to the skills without ending the replay
(they come and go by chance): while one covers the page the replay waits. The
route's search ends the replay, in the first try, where an entry of the app
reads the search term (:func:`inference.policies.skills.own_entry`): the skills
open that entry instead.
After a sub-task succeeds, :func:`route_steps` turns its trace into steps to
remember.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.models import Input, InstalledApp, OpenApp, PageType, Screen, SubTask
from inference.memory import RouteMemory, RouteReplay, RouteStep, anchor_for
from inference.policies.base import Decision, PolicyContext, TakenAction, is_dialog_open
from inference.policies.skills import own_entry
from inference.rules.apps import names_for

__all__ = ["ROUTE_MEMORY", "RouteMemoryPolicy", "route_steps", "screen_anchors"]

ROUTE_MEMORY = "route_memory"
_ANCHORS = 6  # short labels that identify a screen for the replay's check
_UNREMEMBERED_SKILLS = frozenset({"dismiss_dialog", "open_app", "route open_app"})


class RouteMemoryPolicy:
    """Replays the best remembered route for the sub-task, one checked step at a time."""

    def __init__(self, memory: RouteMemory) -> None:
        self._memory = memory
        self._replay: RouteReplay | None = None
        self._recalled = False

    @property
    def name(self) -> str:
        return ROUTE_MEMORY

    @property
    def stopped_reason(self) -> str:
        """Why the replay ended early ('' while it runs or when it finished)."""
        return self._replay.stopped_reason if self._replay is not None else ""

    @property
    def replaying(self) -> bool:
        """Whether a recalled route has steps left to replay (and has not stopped)."""
        return self._replay is not None and not self._replay.finished

    @property
    def completed(self) -> bool:
        """Whether every step of the recalled route was replayed (its target is in front)."""
        replay = self._replay
        return replay is not None and replay.finished and not replay.stopped_reason

    def decide(self, context: PolicyContext) -> Decision | None:
        """The route's next action when this screen is the one it expects, else None."""
        subtask = context.subtask
        screen = context.screen
        if screen.package != subtask.package and not context.history and not is_dialog_open(screen):
            # A remembered route starts in the app: launching it is the route's step 0.
            self.recall(subtask)
            if self._replay is not None and not self._replay.finished:
                return Decision(action=OpenApp(package=subtask.package, reason="the route starts here"),
                                policy=ROUTE_MEMORY, skill="route open_app")
            return None
        if screen.package != subtask.package or context.page_type is PageType.DIALOG:
            return None  # opening the app and closing pop-ups are not part of a route
        if is_dialog_open(screen):
            # The page under a pop-up still passes the replay's label check, but a tap
            # meant for it lands on the pop-up: the skills close it, then the replay goes on.
            return None
        if self._replay is not None and _last_replayed_failed(context.history):
            self._replay.stopped_reason = "the phone did not take the route's last step"
            return None
        self.recall(subtask)
        if self._replay is None or self._replay.finished:
            return None
        position = sum(1 for t in context.history if t.policy == ROUTE_MEMORY)
        if any(isinstance(s.action, Input) for s in self._replay.route.steps) and own_entry(context) is not None:
            # The route searches (for another term, its slot filled with this one); an entry of
            # the app reads this term (a category, a tab): the skills open it, as with no route.
            self._replay.stopped_reason = "an entry of the app reads the search term: opened instead of the search"
            return None
        action = self._replay.next_action(context.screen)
        if action is None:
            return None
        return Decision(action=action, policy=ROUTE_MEMORY, skill=f"route step {position + 1}")

    def recall(self, subtask: SubTask) -> None:
        """Pick the best remembered route for ``subtask`` (once per try; none is fine)."""
        if self._recalled:
            return
        self._recalled = True
        matches = self._memory.recall(
            subtask.package, subtask.goal, search_term=subtask.search_term,
            page_mode=subtask.page_mode, k=1,
            ignore=names_for(InstalledApp(label=subtask.app_label, package=subtask.package)),
        )
        if matches:
            self._replay = RouteReplay(matches[0].route, search_term=subtask.search_term, goal=subtask.goal)

    def forget(self) -> int:
        """The replayed route ended on a page judged not the target: forget it and every copy of
        it (:meth:`inference.memory.RouteMemory.forget_copies`); how many routes went."""
        if self._replay is None:
            return 0
        return self._memory.forget_copies(self._replay.route)

    def remember(self, subtask: SubTask, steps: Sequence[RouteStep], *, target_texts: Sequence[str] = (),
                 map_path: Sequence[str] = (), map_version: str = "", confirmed: bool = True) -> None:
        """Store a route that reached ``subtask``'s target (see :func:`route_steps`), with what its
        target page showed and the app map's screens it went through; ``confirmed``: its target
        was confirmed (an unconfirmed route is kept but never replayed)."""
        if steps:
            self._memory.record(subtask.package, subtask.goal, steps,
                                search_term=subtask.search_term, page_mode=subtask.page_mode,
                                target_texts=target_texts, map_path=map_path, map_version=map_version,
                                confirmed=confirmed)

    def describe(self) -> str:
        """For the run's trace: the remembered route recalled in this try and how far it went."""
        if self._replay is None:
            return ""
        route = self._replay.route
        how = (f"stopped: {self._replay.stopped_reason}" if self._replay.stopped_reason
               else "replayed to its end" if self._replay.finished else "replaying")
        return f"remembered route {route.id} ({len(route.steps)} steps, for {route.goal!r}): {how}"


def _last_replayed_failed(history: Sequence[TakenAction]) -> bool:
    return bool(history) and history[-1].policy == ROUTE_MEMORY and not history[-1].applied


def screen_anchors(screen: Screen) -> tuple[str, ...]:
    """A few short, stable labels of ``screen`` the replay checks it by."""
    labels = [e.label.strip() for e in screen.elements if 0 < len(e.label.strip()) <= 24]
    return tuple(dict.fromkeys(labels))[:_ANCHORS]


def route_steps(taken: Sequence[tuple[TakenAction, Screen]]) -> tuple[RouteStep, ...]:
    """The steps of a successful try worth replaying: in-app moves, without pop-up handling."""
    steps: list[RouteStep] = []
    for action_taken, screen in taken:
        if action_taken.skill in _UNREMEMBERED_SKILLS or isinstance(action_taken.action, OpenApp):
            continue
        if not action_taken.applied:
            continue  # a move the phone did not take is no part of the way there
        target = getattr(action_taken.action, "target", None)
        steps.append(
            RouteStep(
                action=action_taken.action,
                target=anchor_for(screen, target if isinstance(target, str) else None),
                fingerprint=screen.fingerprint,
                anchors=screen_anchors(screen),
            )
        )
    return tuple(steps)
