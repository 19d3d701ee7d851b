"""Where a live screen is on an app map, and the map's shortest ways from there to a target.

    locate_screen(app_map, screen)            -> MapScreen | None
    shortest_path(app_map, source, targets)   -> tuple[Hop, ...] | None

A live screen is the map screen of its exact shape; else a page of a template
(same form: another product's page); else the map screen that holds most of
its controls (a page scrolled, a badge added), when that is most of them.

Paths go along the elements that opened another screen while exploring,
fewest hops first. A hop through a list of one template (a product among
products) is a *choice*: which item to open depends on the question, so the
caller picks it (the skills rank results); a hop through the app's search is a
search with the question's own term. Hops that failed in this try are avoided.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection
from dataclasses import dataclass

from core.models import AppMap, Effect, MapElement, MapScreen, Screen, UIElement
from inference.maps.shape import control_label, control_name, list_members, screen_shape
from inference.perception.naming import id_words
from inference.rules import find_list_items, is_search_field

__all__ = ["Hop", "find_element", "is_template_list", "list_key", "locate_screen", "shortest_path"]

_CLOSE = 0.7  # share of a live screen's controls a map screen must hold to be taken for it
_FEW = 3  # fewer controls than this say too little to tell screens apart


@dataclass(frozen=True)
class Hop:
    """One step of a path: on ``screen``, act on its element ``index`` to reach ``to``."""

    screen: str
    index: int
    to: str

    def element(self, app_map: AppMap) -> MapElement:
        return app_map.screens[self.screen].elements[self.index]


def locate_screen(app_map: AppMap, screen: Screen) -> MapScreen | None:
    """The map screen ``screen`` is (exact shape, a template's page, or a close one), or None."""
    if screen.package != app_map.package:
        return None
    shape = screen_shape(screen)
    exact = app_map.screens.get(shape.id)
    if exact is not None:
        return exact
    forms = [s for s in app_map.screens.values() if s.form == shape.form]
    if forms:
        return min(forms, key=lambda s: (not s.template, s.depth))
    live = _controls(screen)
    if len(live) < _FEW:
        return None
    best: tuple[float, MapScreen | None] = (0.0, None)
    for candidate in app_map.screens.values():
        # Every control the explorer saw on it, scrolled through: a live look at part of the page
        # (scrolled down) shows a part of them.
        known = {name for e in candidate.elements if not e.list_id and (name := control_name(e.label))}
        if not known:
            continue
        score = len(live & known) / len(live)
        if score > best[0] or (score == best[0] and best[1] is not None and candidate.depth < best[1].depth):
            best = (score, candidate)
    return best[1] if best[0] >= _CLOSE else None


def shortest_path(app_map: AppMap, source: str, targets: Collection[str], *,
                  avoid: Collection[tuple[str, int]] = (), through_search: bool = True
                  ) -> tuple[Hop, ...] | None:
    """The fewest hops from ``source`` to any of ``targets`` (``()`` when already there), or None."""
    if source in targets:
        return ()
    previous: dict[str, Hop] = {}
    queue = deque([source])
    seen = {source}
    while queue:
        here = queue.popleft()
        screen = app_map.screens.get(here)
        if screen is None or screen.wall is not None:
            continue
        for index, element in enumerate(screen.elements):
            to = element.leads_to
            if element.effect is not Effect.OPENS or not to or to in seen or (here, index) in avoid:
                continue
            if element.search and not through_search:
                continue
            seen.add(to)
            previous[to] = Hop(screen=here, index=index, to=to)
            if to in targets:
                return _unwind(previous, source, to)
            queue.append(to)
    return None


def is_template_list(screen: MapScreen, element: MapElement, app_map: AppMap) -> bool:
    """Whether ``element`` is an item of a list whose items open pages of one template (a choice)."""
    if not element.list_id:
        return False
    forms = {app_map.screens[e.leads_to].form for e in screen.elements
             if e.list_id == element.list_id and e.effect is Effect.OPENS and e.leads_to in app_map.screens}
    return len(forms) <= 1


def find_element(element: MapElement, screen: Screen) -> UIElement | None:
    """``element`` on the live ``screen``: the same label, resource id and class (the nearest to
    its recorded box); for an item of a list that shows other items now, the list's first item
    (a template opens one form); for the search field, the screen's search field."""
    def same(e: UIElement) -> bool:
        label = (e.label.strip() or id_words(e.resource_id))[:200]
        return label == element.label and e.resource_id == element.resource_id and e.class_name == element.class_name
    found = [e for e in screen.elements if same(e)]
    if found:
        box = element.bounds
        return min(found, key=lambda e: abs(e.bounds.top - box.top) + abs(e.bounds.left - box.left))
    if element.list_id:
        items = find_list_items(screen)
        if items and list_key(items[0]) == element.list_id:
            return items[0]
    if element.search:
        return next((e for e in screen.elements if e.enabled and is_search_field(e, screen)), None)
    return None


def list_key(item: UIElement) -> str:
    """The id a map gives the list ``item`` belongs to (its items share class and resource id)."""
    return f"{item.class_name}|{item.resource_id}"


def _unwind(previous: dict[str, Hop], source: str, end: str) -> tuple[Hop, ...]:
    hops: list[Hop] = []
    node = end
    while node != source:
        hop = previous[node]
        hops.append(hop)
        node = hop.screen
    return tuple(reversed(hops))


def _controls(screen: Screen) -> set[str]:
    inside = list_members(screen)
    return {label for e in screen.elements if e.id not in inside and (label := control_label(e))}
