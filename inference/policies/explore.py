"""Goal-directed exploration without a model: a small, bounded depth-first search over entries.

On a screen where no skill applies (no search to type, no pop-up, no result to
open), tap the entry that best matches what the goal asks for, in the
multilingual concepts of :mod:`inference.rules.lexicon`:

1. a short entry naming a concept of the goal ("社区公约" for "community guidelines");
2. an item naming an entity the goal spells (a band's name, a film's title) or one of its concepts;
3. a navigation hub that usually leads there ("我的" / "Me" for personal data,
   "Settings" for settings-like goals);
4. on the app's first page, when nothing above is there, the places where apps keep their own
   pages: the profile tab ("Me", "You", "我的"), the menu, the settings;
5. for a goal about the latest or newest thing, the newest item of the content:
   the one whose time or date ("10:24", "昨天", "06-23") is the latest when the
   items show one (mail, messages and feeds list newest first, chats last), else
   the topmost. On a page about the goal (the inbox for "my latest email") this
   outranks items that merely name a concept or entity.

Entries already tried on the screen (by fingerprint, and by label within the try)
are not tried again; when nothing is left, Back returns to the branch point.
Nothing risky is ever tapped (the skills' forbidden words on buttons and entries,
ads); a card of content is opened whatever its text says (a mail about a login
is not a login button). Every tap is an
edge of the exploration map (screen -> title -> entry -> next screen) that the
loop publishes for the dashboard.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from core.models import Back, PageMode, Screen, Scroll, ScrollDirection, Tap, UIElement
from inference.perception.naming import id_words
from inference.policies.base import Decision, PolicyContext, is_dialog_open, item_signature
from inference.policies.skills import (
    find_search_field,
    find_search_icon,
    is_forbidden_tap,
    next_search_term,
)
from inference.rules import (
    ItemTime,
    find_goal_concepts,
    heading_concepts,
    load_lexicon,
    match_concept,
    page_heading,
    read_item_time,
)
from inference.rules.lexicon import GoalConcepts
from inference.vocabulary import load_vocabulary

__all__ = ["EXPLORE", "ExplorationEdge", "ExplorePolicy", "rank_entries"]

EXPLORE = "explore"
_ENTRY_CHARS = 24  # longer labels are content (a headline, a product), not navigation
_AD = re.compile(load_vocabulary("ads").alternation("ad"), re.IGNORECASE)  # promoted, never opened
_BACK_LABELS = frozenset(load_vocabulary("back").words("back"))  # the app bar's way back
_LOOK_DOWN = 2  # scrolls down a page on the way to the goal before backing out of it


class ExplorationEdge(BaseModel):
    """One move of the exploration: from a screen (fingerprint, title) through an entry."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    fingerprint: str
    title: str
    tapped: str  # the entry's label, or "back"
    score: float = 0.0
    next_fingerprint: str = ""  # filled in when the next screen is seen


class ExplorePolicy:
    """Taps the entry nearest to the goal; backtracks when a branch is exhausted."""

    def __init__(self) -> None:
        self._tried: dict[str, set[str]] = {}  # fingerprint -> labels tapped there
        self._tried_labels: set[str] = set()  # labels tapped anywhere in this try
        self._root = ""  # the first in-app screen of the try: nothing to go back to
        self.edges: list[ExplorationEdge] = []

    @property
    def name(self) -> str:
        return EXPLORE

    def decide(self, context: PolicyContext) -> Decision | None:
        """The best untried entry for the goal, Back at a dead end, or None."""
        screen, subtask = context.screen, context.subtask
        if screen.package != subtask.package or is_dialog_open(screen):
            return None
        elements = screen.elements
        if (next_search_term(context) is not None and not context.searched
                and (find_search_field(screen) or find_search_icon(elements))):
            # The skills search first; an app with no search, or where every form of the term
            # found nothing (in an earlier try too), is explored.
            return None
        self._close_edge(screen.fingerprint)
        self._root = self._root or screen.fingerprint
        goal = find_goal_concepts(subtask.goal, subtask.search_term, subtask.app_label)
        tried = self._tried.setdefault(screen.fingerprint, set())
        ranked = [
            (score, e) for score, e in rank_entries(context, goal)
            if _entry_label(e) not in tried and _entry_label(e) not in self._tried_labels
        ]
        at_root = screen.fingerprint == self._root or not context.history
        if not ranked and at_root:
            ranked = [(score, e) for score, e in _own_places(screen)
                      if _entry_label(e) not in tried and _entry_label(e) not in self._tried_labels]
        title = next(iter(page_heading(screen)), screen.package)
        if ranked:
            score, element = ranked[0]
            label = _entry_label(element)
            tried.add(label)
            self._tried_labels.add(label)
            self.edges.append(ExplorationEdge(fingerprint=screen.fingerprint, title=title,
                                              tapped=label[:60], score=round(score, 2)))
            opens_item = score < _HUB_SCORE or _is_content(element)
            return Decision(
                action=Tap(target=element.id, reason=f"{label[:40]!r} is nearest to the goal"),
                policy=EXPLORE, skill="explore",
                item_signature=item_signature(element, screen) if opens_item else None,
            )
        if at_root:
            return None
        if _looks_further_down(context, goal):
            return Decision(action=Scroll(direction=ScrollDirection.DOWN,
                                          reason="a page on the way to the goal: look further down before going back"),
                            policy=EXPLORE, skill="explore_scroll")
        self.edges.append(ExplorationEdge(fingerprint=screen.fingerprint, title=title, tapped="back"))
        return Decision(action=Back(reason="nothing here leads to the goal: back to the branch point"),
                        policy=EXPLORE, skill="explore_back")

    def _close_edge(self, fingerprint: str) -> None:
        if self.edges and not self.edges[-1].next_fingerprint:
            self.edges[-1] = self.edges[-1].model_copy(update={"next_fingerprint": fingerprint})


def _looks_further_down(context: PolicyContext, goal: GoalConcepts) -> bool:
    """Whether to scroll before backing out: the page's heading names the goal or a hub on the way
    to it ("铁路会员" for the points shop), the page scrolls, and the last scrolls moved it (at most
    :data:`_LOOK_DOWN` of them). A section further down ("积分商城") may be what the goal asks for."""
    screen = context.screen
    if not any(e.scrollable for e in screen.elements):
        return False
    concepts = load_lexicon().concepts
    wanted = [concepts[c] for c in (*goal.targets, *goal.via)]
    if not any(match_concept(h, c) for h in page_heading(screen) for c in wanted):
        return False
    scrolls = 0
    for taken in reversed(context.history):
        if not isinstance(taken.action, Scroll):
            break
        if taken.fingerprint == screen.fingerprint:
            return False  # the last scroll moved nothing: the page ends here
        scrolls += 1
    return scrolls < _LOOK_DOWN


_DIRECT_SCORE = 3.0
_ITEM_SCORE = 2.0
_HUB_SCORE = 1.0
_LATEST_SCORE = 0.5


def rank_entries(context: PolicyContext, goal: GoalConcepts) -> list[tuple[float, UIElement]]:
    """Tappable elements that lead towards ``goal``, best first (ties keep reading order)."""
    concepts = load_lexicon().concepts
    screen = context.screen
    targets = [concepts[c] for c in goal.targets]
    hubs = [(concepts[c], depth) for c, depth in goal.via.items()]
    hubs += [(concepts[c], 1) for c in goal.named if concepts[c].hub]  # "my": the profile tab
    arrived = bool(heading_concepts(screen, goal))
    if arrived:
        hubs = []  # the page is about the goal already: what is left to open is its content
    entities = [e.casefold() for e in goal.entities]
    scored: list[tuple[float, int, UIElement]] = []
    for order, element in enumerate(screen.elements):
        label = _entry_label(element)
        if not _tappable(element, label, screen):
            continue
        entry = len(label) <= _ENTRY_CHARS
        direct = max((match_concept(label, c) for c in targets), default=0.0)
        named = sum(1 for c in targets if match_concept(label, c))
        score = 0.0
        if direct and entry:
            score = _DIRECT_SCORE + direct + 0.1 * named
        elif any(e in label.casefold() for e in entities) or (direct and arrived and _is_content(element)):
            # Content naming a concept counts once the page is about the goal (the
            # monitor in the cart); before that, generic words in a feed mislead.
            score = _ITEM_SCORE + 0.1 * named + (0.2 if any(e in label.casefold() for e in entities) else 0.0)
        elif entry:
            hub = max((match_concept(label, c) / depth for c, depth in hubs), default=0.0)
            if hub >= 0.5:
                score = _HUB_SCORE + hub * 0.5
        if score:
            scored.append((score, order, element))
    if context.subtask.page_mode is not PageMode.LIST_VIEW and "latest" in goal.named:
        # "The latest added monitor in my cart": the newest of the items naming what the
        # goal asks for, else the newest item of all.
        naming = [e for value, _, e in scored if _ITEM_SCORE <= value < _DIRECT_SCORE and _is_content(e)]
        newest = _newest_item(screen, naming)
        if newest is not None and (arrived or not scored):
            # On the page the goal is about, "the latest" outranks the other items; elsewhere
            # it is the last resort.
            latest = _ITEM_SCORE + 0.5 if arrived else _LATEST_SCORE
            scored = [t for t in scored if t[2] is not newest] + [(latest, -1, newest)]
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [(score, element) for score, _, element in scored]


# Where apps keep the person's own pages and their settings, tried in this order from the app's
# first page when nothing on it leads to the goal.
_OWN_PLACES = ("me", "navigation", "settings")


def _own_places(screen: Screen) -> list[tuple[float, UIElement]]:
    """The entries of ``screen`` to the profile tab, the menu and the settings, in that order."""
    concepts = load_lexicon().concepts
    found: list[tuple[float, UIElement]] = []
    for concept in (concepts[c] for c in _OWN_PLACES):
        for element in screen.elements:
            label = _entry_label(element)
            if (_tappable(element, label, screen) and len(label) <= _ENTRY_CHARS
                    and match_concept(label, concept) >= 0.5 and all(element is not e for _, e in found)):
                found.append((_HUB_SCORE, element))
    return found


def _newest_item(screen: Screen, among: list[UIElement]) -> UIElement | None:
    """The newest item of content (of ``among`` when given): the latest time or date shown, else the topmost."""
    pool = among or [e for e in screen.elements if _tappable(e, e.label.strip(), screen) and _is_content(e)]
    content = sorted(pool, key=lambda e: e.bounds.top)
    stamps = [(stamp, e) for e in content if (stamp := _item_time(e, screen)) is not None]
    if len(stamps) >= 2:
        # Ties keep the topmost: lists put the newest first when times are equal.
        return max(stamps, key=lambda pair: pair[0].key)[1]
    return content[0] if content else None


def _item_time(item: UIElement, screen: Screen) -> ItemTime | None:
    inner = [e.label for e in screen.elements
             if e is not item and e.label and item.bounds.encloses(e.bounds)]
    return read_item_time([*item.label.split(" | "), *inner])


def _entry_label(element: UIElement) -> str:
    """What an entry says: its label, else the words of its resource id (an unlabelled icon
    named ``settingButton`` is the settings entry, as a person reading it would guess). A
    checkbox or switch is never an entry, whatever its id says (``cart_check`` selects an item)."""
    if element.label.strip():
        return element.label.strip()
    plain = element.clickable and not (element.checkable or element.editable or element.scrollable)
    return id_words(element.resource_id) if plain else ""


def _tappable(element: UIElement, label: str, screen: Screen) -> bool:
    if not element.clickable or element.editable or element.selected or not label:
        return False
    folded = label.casefold()
    if folded in _BACK_LABELS or _AD.search(folded):
        return False
    return not is_forbidden_tap(element, screen)


def _is_content(element: UIElement) -> bool:
    """A card or row of content (several texts joined), not a button."""
    return " | " in element.label
