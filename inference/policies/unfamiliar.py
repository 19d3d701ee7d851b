"""The last policy: on a screen no other policy knew, try its elements in a sensible order.

A try no longer ends because no rule recognised the screen ("no policy knew what
to do on this details page"). Here every tappable element of the screen not
tried yet is ranked:

1. how much of the question its label says (the question's words, the lexicon's
   labels of its concepts, their translations: :class:`inference.maps.MapQuery`);
2. what the app map says it opens: a screen that holds the question's words
   ranks high, one that is a wall, leaves the app or was refused while exploring
   is left out, one that only showed the same screen ranks low;
3. reading order, top to bottom.

Tried elements are remembered per screen (fingerprint) and by label for the
try; when a screen has nothing left, Back returns to the branch point, and on
the try's first screen the policy passes (the try ends having tried all of
it). Nothing the skills never press (paying, signing in, sending, ads) is
ever chosen, and the risk gate still checks every action; but where the goal
itself names such an act ("Sign in to ..."), its button is chosen first, so that
the gate refuses it and the run stops for the person there.
"""

from __future__ import annotations

import re

from core.models import AppMap, Back, Effect, OpenApp, Screen, Tap, UIElement
from inference.maps import MapQuery, coverage, locate_screen, rank_screens
from inference.perception.naming import id_words
from inference.policies.base import Decision, PolicyContext, is_dialog_open, item_signature
from inference.policies.skills import is_forbidden_tap
from inference.rules.never_tap import find_act, goal_act

__all__ = ["UNFAMILIAR", "UnfamiliarScreenPolicy"]

UNFAMILIAR = "unfamiliar"
_BACK_LABELS = frozenset({"navigate up", "back", "go back", "返回", "뒤로", "戻る"})
_SKIP = (Effect.LEAVES, Effect.REFUSED, Effect.SWITCH, Effect.DIALOG)
_ACT_SCORE = 10.0  # the button of the person's act the goal names: where the run hands over
_ACT_WORDS = 4
_WORD = re.compile(r"[a-z0-9]+|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")


class UnfamiliarScreenPolicy:
    """Tries a screen's elements, best first by the question and the map; Back when none is left."""

    def __init__(self, app_map: AppMap | None = None, *, ignore: tuple[str, ...] = ()) -> None:
        self.app_map = app_map
        self._ignore = ignore
        self._query: MapQuery | None = None
        self._useful: dict[str, float] = {}  # map screen id -> how well it holds the question
        self._tried: dict[str, set[str]] = {}
        self._tried_labels: set[str] = set()

    @property
    def name(self) -> str:
        return UNFAMILIAR

    def decide(self, context: PolicyContext) -> Decision | None:
        """The best untried element, Back when none is left, None on the try's first screen."""
        screen = context.screen
        if screen.package != context.subtask.package or is_dialog_open(screen):
            return None
        query = self._query_for(context)
        tried = self._tried.setdefault(screen.fingerprint, set())
        ranked = [(score, e) for score, e in self._rank(screen, query, context.subtask.goal)
                  if _label(e) not in tried and _label(e) not in self._tried_labels]
        if ranked:
            element = ranked[0][1]
            label = _label(element)
            tried.add(label)
            self._tried_labels.add(label)
            return Decision(action=Tap(target=element.id, reason=f"{label[:40]!r}: not tried yet on this screen"),
                            policy=UNFAMILIAR, skill="try_next",
                            item_signature=item_signature(element, screen) if " | " in element.label else None)
        if _at_first_page(context):
            return None
        return Decision(action=Back(reason="every element here was tried: back to the branch point"),
                        policy=UNFAMILIAR, skill="try_back")

    def _query_for(self, context: PolicyContext) -> MapQuery:
        if self._query is None:
            subtask = context.subtask
            self._query = MapQuery.for_goal(subtask.goal, subtask.search_term,
                                            ignore=(subtask.app_label, *self._ignore))
            if self.app_map is not None:
                self._useful = {s.id: score for s, score in rank_screens(self.app_map, self._query, k=10)}
        return self._query

    def _rank(self, screen: Screen, query: MapQuery, context_goal: str) -> list[tuple[float, UIElement]]:
        here = locate_screen(self.app_map, screen) if self.app_map is not None else None
        effects = {}
        if here is not None:
            effects = {e.label: e for e in here.elements}
        best = max(self._useful.values(), default=0.0) or 1.0
        scored: list[tuple[float, int, UIElement]] = []
        for order, element in enumerate(sorted(screen.elements, key=lambda e: (e.bounds.top, e.bounds.left))):
            label = _label(element)
            if not element.clickable or element.editable or element.checkable or not label:
                continue
            if label.casefold() in _BACK_LABELS:
                continue
            if is_forbidden_tap(element, screen):
                if _names_the_act(label, context_goal):
                    # The goal asks for an act that is the person's (signing in): its button is where
                    # the run stops for them. Chosen first; the risk gate refuses it and pauses.
                    scored.append((_ACT_SCORE, order, element))
                continue
            score = 2.0 * coverage(query, [label]) if query.words else 0.0
            known = effects.get(label)
            if known is not None:
                if known.effect in _SKIP:
                    continue
                if known.effect is Effect.OPENS:
                    score += 1.0 + self._useful.get(known.leads_to, 0.0) / best
                elif known.effect is Effect.SAME:
                    score -= 0.5
            scored.append((score, order, element))
        scored.sort(key=lambda t: (-t[0], t[1]))
        return [(score, element) for score, _, element in scored]


def _at_first_page(context: PolicyContext) -> bool:
    """Whether the screen is the try's first page of the app (nothing to go back to): the page the
    first move inside the app was made on, or no move yet."""
    inside = [t for t in context.history if not isinstance(t.action, OpenApp) and t.skill != "dismiss_dialog"]
    return not inside or inside[0].fingerprint == context.screen.fingerprint


def _names_the_act(label: str, goal: str) -> bool:
    """Whether the goal asks for the act ``label`` does: the same kind of act ("Create an account"
    and a "Register" button are both signing up), or every word of the short label is in the goal
    ("Sign in to the app" and a "Sign in" button)."""
    asked, pressed = goal_act(goal), find_act(label)
    if asked is not None and pressed is not None and asked.kind == pressed.kind:
        return True
    words = _WORD.findall(label.casefold())
    folded = goal.casefold()
    return 0 < len(words) <= _ACT_WORDS and all(w in folded for w in words)


def _label(element: UIElement) -> str:
    return element.label.strip() or id_words(element.resource_id)
