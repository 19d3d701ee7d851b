"""Follow the app map towards the sub-task's target screens (UICOMPASS's replanning, no model).

The map (``inference.maps.MapGuide``) knows where the live screen is, which
screens hold what the goal asks, and the fewest hops there. This policy takes
the next hop when it is an entry of the app (a tab, a menu entry, a button):
it finds the element again by its label, resource id and class (scrolling down
when the map saw it further down), and taps it. It passes (``None``) off the
map, on a pop-up, on the target itself, and where the hop is the question's own
choice (an item of a results list: the skills rank results) or a search (the
skills type the sub-task's term). A hop that led elsewhere than the map said
is avoided and the route planned again from the screen reached.
"""

from __future__ import annotations

from core.models import Scroll, ScrollDirection, Tap
from inference.maps import MapGuide, MapMove, find_element
from inference.policies.base import Decision, PolicyContext, is_dialog_open
from inference.policies.skills import is_forbidden_tap

__all__ = ["MAP_ROUTE", "MapRoutePolicy"]

MAP_ROUTE = "map"


class MapRoutePolicy:
    """Taps the map's next entry towards the targets; leaves choices and searches to the skills."""

    def __init__(self, guide: MapGuide) -> None:
        self.guide = guide
        self._last: MapMove | None = None
        self._scrolled = 0  # scrolls made on the current screen to bring the hop's element up
        self._down = 0  # scrolls made down the target page to see what the map saw there

    @property
    def name(self) -> str:
        return MAP_ROUTE

    def decide(self, context: PolicyContext) -> Decision | None:
        """The map's next tap, a scroll towards it, or None."""
        screen, subtask = context.screen, context.subtask
        if screen.package != subtask.package or is_dialog_open(screen):
            return None
        if self._last is not None and not self._scrolled:
            self.guide.note_arrival(self._last, screen)
            self._last = None
        term = subtask.search_term
        if term and term in context.empty_searches:
            self.guide.term_found_nothing()
        # Scrolling towards the hop's element: the page is the one the move started on.
        move = self._last if self._scrolled and self._last is not None else self.guide.next_move(screen)
        if move is None and self.guide.wants_more_of(screen, self._down):
            # On the target page: what the question asks is further down, where the map saw it.
            self._down += 1
            return Decision(action=Scroll(direction=ScrollDirection.DOWN,
                                          reason="the app map saw more of this page further down"),
                            policy=MAP_ROUTE, skill="map_scroll_target")
        if move is None or move.choice or move.search:
            self._scrolled = 0
            return None
        self._down = 0
        live = find_element(move.element, screen)
        if live is None:
            if self._scrolled < move.element.scrolls:
                self._scrolled += 1
                self._last = move
                return Decision(action=Scroll(direction=ScrollDirection.DOWN,
                                              reason=f"the map saw {move.element.anchor[:30]!r} further down"),
                                policy=MAP_ROUTE, skill="map_scroll")
            self.guide.failed.add((move.hop.screen, move.hop.index))
            self._scrolled = 0
            return None
        if is_forbidden_tap(live, screen):
            self.guide.failed.add((move.hop.screen, move.hop.index))
            return None
        self._scrolled = 0
        self._last = move
        goal = move.target.title or "the target screen"
        return Decision(action=Tap(target=live.id, reason=f"the app map: {move.element.anchor[:40]!r} "
                                                          f"leads towards {goal[:40]!r}"),
                        policy=MAP_ROUTE, skill="map_route")
