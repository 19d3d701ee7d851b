"""A sub-task's way through an app map: its target screens, the next move, and when it is there.

    guide = MapGuide(app_map, subtask, ignore=app_names)
    guide.targets              # map screens that hold what the sub-task asks, best first
    guide.next_move(screen)    # the map's next element towards them from the live screen, or None
    guide.is_target(screen)    # the live screen is a target and its content answers the question

Targets (UICOMPASS's planning over the UI manual, with no model):

- with a search term and a search field on the map, and no page the app names
  by the term (its title, or an entry opening it, reads it: "热榜", "Spaces", a
  category), the search: the answer lies behind it, and the skills type the
  sub-task's own term (what the explorer found behind its probe term is another
  query's content);
- else (and when every form of the term found nothing) the map's best screens
  for the question's words (``rank_screens``), pages the app names by the term
  counted half as much again, leaving out what lay behind the probe's search
  and the walls.

The route is the map's shortest path to the best target, replayed one hop at a
time from wherever the live screen is on the map; a hop that did not lead where
the map said is avoided and the route planned again from the screen reached
(adaptive replanning); when no way to the best target is left, the next best is
pursued. Only the pursued target counts as the answer on arrival: a lesser target
on the way there is a step. Off the map, the guide has nothing to say until a
later screen is on it again. Hops that are a choice (an item of a results
list) or a search are left to the skills, which pick the item for the question
and type its term.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.models import (
    AppMap,
    Effect,
    Frozen,
    MapElement,
    MapScreen,
    PageMode,
    Screen,
    SubTask,
)
from inference.maps.match import MapQuery, coverage, rank_screens, reads_term
from inference.maps.routes import Hop, is_template_list, locate_screen, shortest_path
from inference.maps.shape import control_name, text_lines
from inference.maps.survey import item_lines
from inference.rules import find_list_items

__all__ = ["MapGuide", "MapMove", "MapTrail"]

_KEEP = 0.6  # targets score at least this share of the best one (pursued in turn, best first)
_NAMED_BOOST = 1.5  # a page the app names by the search term counts this much more
_ANSWERS = 0.5  # share of the question's words a live target must show


class MapTrail(Frozen):
    """The part of a map one try used (published with the try's ``app map`` LOG event)."""

    package: str
    version: str
    targets: tuple[str, ...]
    followed: tuple[str, ...]


@dataclass(frozen=True)
class MapMove:
    """The next hop: act on ``element`` of the live screen (map screen ``at``) towards ``target``."""

    at: MapScreen
    element: MapElement
    hop: Hop
    target: MapScreen
    choice: bool  # an item of a results list: which one is the question's to choose
    search: bool  # the app's search field: the sub-task's own term is typed there


class MapGuide:
    """Targets and moves of one sub-task over one app map."""

    def __init__(self, app_map: AppMap, subtask: SubTask, *, ignore: Sequence[str] = ()) -> None:
        self.map = app_map
        self.subtask = subtask
        self.query = MapQuery.for_goal(subtask.goal, subtask.search_term, ignore=ignore)
        self.failed: set[tuple[str, int]] = set()
        self.followed: list[str] = []  # ids of the map screens the run went through, in order
        self._term_found_nothing = False
        self._pursued = 0  # index of the target the route leads to
        self._shown: list[str] = []  # text lines the pursued target showed since the phone came to it
        self.targets = self._choose_targets()

    @property
    def searches(self) -> bool:
        """Whether the answer lies behind the app's search, typed with the sub-task's term."""
        return bool(self.subtask.search_term) and self._has_search() and not self._named_by_term() \
            and not self._term_found_nothing

    def term_found_nothing(self) -> None:
        """Every form of the search term found nothing: the map's screens for the words instead."""
        if not self._term_found_nothing:
            self._term_found_nothing = True
            self.targets = self._choose_targets()
            self._pursued = 0

    def locate(self, screen: Screen) -> MapScreen | None:
        """Where ``screen`` is on the map (None off it), noted in :attr:`followed`."""
        found = locate_screen(self.map, screen)
        if found is not None and (not self.followed or self.followed[-1] != found.id):
            self.followed.append(found.id)
        return found

    @property
    def pursued(self) -> MapScreen | None:
        """The target the route leads to now: the best one, until no way to it is left."""
        return self.targets[self._pursued] if self._pursued < len(self.targets) else None

    def next_move(self, screen: Screen) -> MapMove | None:
        """The next hop towards the pursued target from the live ``screen``; None when off the map,
        there already, or no path to any target is left (the next best is pursued when the best
        one has no way left)."""
        here = self.locate(screen)
        path: tuple[Hop, ...] | None = None
        while here is not None and self.pursued is not None:
            path = shortest_path(self.map, here.id, {self.pursued.id}, avoid=self.failed,
                                 through_search=bool(self.subtask.search_term))
            if path is not None:
                break
            self._pursued += 1
        if here is None or not path:
            return None
        hop = path[0]
        element = hop.element(self.map)
        end = self.map.screens[path[-1].to]
        # An item of a template's list, or a card of content (a post, an article): which one to open
        # is the question's choice, not the map's (the map's sample was one of many).
        choice = is_template_list(here, element, self.map) or not control_name(element.label)
        return MapMove(at=here, element=element, hop=hop, target=end, choice=choice, search=element.search)

    def give_up_pursued(self) -> None:
        """The pursued target was reached and read through without answering: pursue the next one."""
        self._pursued += 1
        self._shown = []

    def note_arrival(self, move: MapMove, screen: Screen) -> None:
        """After acting on ``move``: a hop that led elsewhere than the map said is avoided from now on."""
        arrived = locate_screen(self.map, screen)
        if arrived is None or (arrived.id != move.hop.to and arrived.form != self.map.screens[move.hop.to].form):
            self.failed.add((move.hop.screen, move.hop.index))

    def at_pursued(self, screen: Screen) -> MapScreen | None:
        """The pursued target, when the live ``screen`` is it (a page of it, for a template)."""
        here = locate_screen(self.map, screen)
        pursued = self.pursued
        if here is None or pursued is None or here.wall is not None:
            return None
        if here.id != pursued.id and not (pursued.template and here.form == pursued.form):
            return None
        return pursued

    def is_target(self, screen: Screen) -> bool:
        """The live screen is the pursued target and what it showed since the phone came to it
        (scrolled through) holds at least half of the question's words."""
        target = self.at_pursued(screen)
        if target is None:
            self._shown = []
            return False
        # Entries of the page that open other pages name those pages, not what this one shows.
        ways_on = {e.label for e in target.elements if e.effect is Effect.OPENS}
        self._shown.extend(t for t in text_lines(screen) if t not in ways_on and t not in self._shown)
        if self.subtask.page_mode is not PageMode.LIST_VIEW and self._names_an_item(target, screen):
            return False  # one item of its list is what is asked: the skills open it
        return coverage(self.query, self._shown) >= _ANSWERS

    def _names_an_item(self, target: MapScreen, screen: Screen) -> bool:
        """Whether ``target`` holds a list of one template's pages (products, playlists) and an item
        of the live list reads a word of the question: that item's page is the answer."""
        if not any(is_template_list(target, e, self.map) for e in target.elements if e.list_id):
            return False
        items = find_list_items(screen)
        return any(coverage(self.query, item_lines(item, screen)) > 0 for item in items)

    def wants_more_of(self, screen: Screen, scrolled: int) -> bool:
        """On the pursued target, not yet shown to answer: the map saw more of it further down than
        the ``scrolled`` scrolls made so far. Read through without answering, the target is given up
        and the next one pursued."""
        target = self.at_pursued(screen)
        if target is None or self.is_target(screen):
            return False
        if scrolled < target.scroll_pages - 1:
            return True
        self.give_up_pursued()
        return False

    def describe(self) -> str:
        """One line for the run's trace: the targets and the route followed so far."""
        targets = ", ".join(self._title(t.id) for t in self.targets[:3])
        if not targets:
            targets = "the app's search, with the sub-task's term" if self.searches else "none"
        way = " > ".join(self._title(s) for s in self.followed) or "not on the map yet"
        return f"targets {targets}; followed {way}"

    def trail(self) -> MapTrail:
        """What the dashboard highlights: the map, its targets and the screens followed, by id."""
        return MapTrail(package=self.map.package, version=self.map.version,
                        targets=tuple(t.id for t in self.targets), followed=tuple(self.followed))

    def _title(self, screen_id: str) -> str:
        screen = self.map.screens.get(screen_id)
        return repr(screen.title) if screen is not None and screen.title else screen_id[:6]

    # -- targets -------------------------------------------------------------------------------

    def _choose_targets(self) -> list[MapScreen]:
        if self.searches:
            return []
        named = {s.id for s in self._named_by_term()}
        ranked = rank_screens(self.map, self.query, k=8)
        scored = sorted(((s, score * (_NAMED_BOOST if s.id in named else 1.0)) for s, score in ranked
                         if not s.behind_search and s.wall is None), key=lambda pair: -pair[1])
        if not scored or scored[0][0].id == self.map.start:
            # The first page holds the question's words best: where every try starts, read there by
            # the rules (a readout, the list it opens with). The map leads nowhere else.
            return []
        best = scored[0][1]
        return [s for s, score in scored if score >= _KEEP * best]

    def _named_by_term(self) -> list[MapScreen]:
        """Screens the app itself names by the search term: their title, or an entry opening them,
        reads it ("热榜", "Spaces", a category). The app's own page for the term, reached without
        searching; a page merely showing the word (a feed's card) is not named by it."""
        term = (self.subtask.search_term or "").strip()
        if not term:
            return []
        named: list[MapScreen] = []
        for screen in self.map.screens.values():
            if screen.behind_search or screen.wall is not None:
                continue
            entries = [e.label for other in self.map.screens.values() for e in other.elements
                       if e.leads_to == screen.id and not e.list_id]
            if any(reads_term(line, term) for line in (screen.title, *entries)):
                named.append(screen)
        return sorted(named, key=lambda s: s.depth)

    def _has_search(self) -> bool:
        return any(e.search for s in self.map.screens.values() for e in s.elements)
