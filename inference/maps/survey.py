"""What one look at a screen holds for its map screen: its actionable elements and its lists.

    survey = ScreenSurvey()
    survey.add(screen, scrolls=0)      # the top of the page
    survey.add(scrolled, scrolls=1)    # after one scroll down: only what was not seen above
    survey.elements, survey.lists

An element is anything a person could act on: clickable, or the app's search
field (the only field the explorer types into). A list's items are kept as
elements too (at most :data:`MAX_LIST_ITEMS` of one list), marked with the
list's id, so that a few can be opened as samples of its template; controls
inside an item (its "Remove") are left to the item. Back buttons are not
elements: going back is how the explorer returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.models import MapElement, MapList, Screen, UIElement
from inference.maps.routes import list_key
from inference.maps.shape import list_members
from inference.perception.naming import id_words
from inference.rules import find_list_items, is_search_field

__all__ = ["BACK_LABELS", "MAX_LIST_ITEMS", "ScreenSurvey", "item_lines"]

BACK_LABELS = frozenset({"navigate up", "back", "go back", "返回", "뒤로", "戻る"})
MAX_LIST_ITEMS = 12  # items of one list kept as elements (a menu is short; a feed is sampled)
_LIST_SAMPLES = 3  # items' lines kept per list


@dataclass
class ScreenSurvey:
    """Elements and lists of one map screen, gathered over its looks (scrolled down)."""

    elements: list[MapElement] = field(default_factory=list)
    lists: dict[str, MapList] = field(default_factory=dict)
    _seen: set[tuple[str, str, str]] = field(default_factory=set)

    def add(self, screen: Screen, scrolls: int = 0) -> None:
        """What ``screen`` (after ``scrolls`` scrolls down) holds that was not seen further up."""
        members = list_members(screen)
        items = find_list_items(screen) if members else ()  # a menu's entries are controls, not a list
        list_id = list_key(items[0]) if items else ""
        if items:
            self._add_list(list_id, items, screen)
        search = next((e for e in screen.elements if e.enabled and is_search_field(e, screen)), None)
        kept_items = sum(1 for e in self.elements if e.list_id and e.list_id == list_id)
        for element in sorted(screen.elements, key=lambda e: (e.bounds.top, e.bounds.left)):
            key = (element.label, element.resource_id, element.class_name)
            is_item = members.get(element.id) == element.id
            is_search = search is not None and element.id == search.id
            if key in self._seen or (element.id in members and not is_item):
                continue  # seen further up, or a control inside a list item
            if not (element.clickable or is_search) or (element.editable and not is_search):
                continue
            label = element.label.strip() or id_words(element.resource_id)
            if label.casefold() in BACK_LABELS:
                continue
            self._seen.add(key)
            if is_item:
                kept_items += 1
                if kept_items > MAX_LIST_ITEMS:
                    continue
            self.elements.append(MapElement(
                label=label[:200], resource_id=element.resource_id, class_name=element.class_name,
                bounds=element.bounds, scrolls=scrolls, list_id=list_id if is_item else "", search=is_search,
            ))

    def _add_list(self, list_id: str, items: tuple[UIElement, ...], screen: Screen) -> None:
        known = self.lists.get(list_id)
        samples = list(known.samples) if known is not None else []
        for item in items:
            line = " | ".join(item_lines(item, screen))[:160]
            if line and line not in samples and len(samples) < _LIST_SAMPLES:
                samples.append(line)
        new = sum(1 for i in items if (i.label, i.resource_id, i.class_name) not in self._seen)
        self.lists[list_id] = MapList(id=list_id, items=(known.items if known else 0) + new, samples=tuple(samples))


def item_lines(item: UIElement, screen: Screen) -> list[str]:
    """The lines a list item shows: its own (merged) label's and those of the texts inside it."""
    lines = [p.strip() for p in item.label.split(" | ") if p.strip()]
    lines += [e.label.strip() for e in screen.elements
              if e is not item and e.label.strip() and item.bounds.encloses(e.bounds)]
    return lines
