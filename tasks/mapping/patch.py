"""Patch an app map with the screens a run found that the map lacks (a changed app, a page the
explorer's budget left).

    patches = MapPatches(app_map, maps)
    patches.see(before, taken, after, screenshot_png)   # every step of a try, as it goes
    patched = patches.save()                           # when the sub-task ends: the map, patched

A screen is added when the run reached it by a tap from a screen the map has,
and no map screen is that screen (:func:`inference.maps.locate_screen`). It is
added as the explorer would have found it: its elements and lists from what the
run saw of it, its screenshot, one hop deeper than the screen it was opened
from, and left unexpanded, so the next ``map build`` explores it further. The
tap becomes the element's transition (added to the source screen when the map
did not know that element). Screens behind a wall are never added: a run pauses
there.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.models import AppMap, Effect, MapElement, MapScreen, Screen, Tap
from inference.maps import (
    ScreenSurvey,
    list_members,
    locate_screen,
    page_title,
    screen_shape,
    text_lines,
)
from inference.perception.naming import id_words
from inference.policies import is_dialog_open
from inference.rules import detect_page_type, find_risk
from storage import MapStore

__all__ = ["MapPatches"]

_MAX_NEW = 20  # screens one sub-task may add


@dataclass(frozen=True)
class _Found:
    source: str
    tapped: MapElement
    screen: MapScreen
    png: bytes


class MapPatches:
    """The screens of one sub-task's run that its app map lacks, and the map patched with them."""

    def __init__(self, app_map: AppMap, maps: MapStore) -> None:
        self.map = app_map
        self.maps = maps
        self.found: dict[str, _Found] = {}

    def see(self, before: Screen, action: object, after: Screen, screenshot_png: bytes) -> None:
        """A step went from ``before`` by ``action`` to ``after``: note ``after`` if the map lacks it."""
        if (not isinstance(action, Tap) or action.target is None or len(self.found) >= _MAX_NEW
                or after.package != self.map.package or is_dialog_open(after) or find_risk(after) is not None):
            return
        source = locate_screen(self.map, before)
        if source is None or locate_screen(self.map, after) is not None:
            return
        shape = screen_shape(after)
        element = before.element(action.target)
        if element is None or shape.id in self.found:
            return
        survey = ScreenSurvey()
        survey.add(after)
        tapped = MapElement(label=(element.label.strip() or id_words(element.resource_id))[:200],
                            resource_id=element.resource_id, class_name=element.class_name,
                            bounds=element.bounds, effect=Effect.OPENS, leads_to=shape.id)
        index = _index_of(source, tapped)
        self.found[shape.id] = _Found(source=source.id, tapped=tapped, screen=MapScreen(
            id=shape.id, form=shape.form, kind=detect_page_type(after), title=page_title(after),
            activity=after.activity, texts=tuple(text_lines(after, skip=list_members(after))),
            lists=tuple(survey.lists.values()), elements=tuple(survey.elements), depth=source.depth + 1,
            path=(*source.path, index), behind_search=source.behind_search, expanded=False,
        ), png=screenshot_png)

    def save(self) -> AppMap | None:
        """The map with the screens found added, stored; None when nothing was found."""
        if not self.found:
            return None
        screens = dict(self.map.screens)
        for found in self.found.values():
            key = self.maps.save_screenshot(self.map.package, self.map.version, found.screen.id, found.png)
            screens[found.screen.id] = found.screen.model_copy(update={"screenshot_key": key})
            source = screens[found.source]
            elements = list(source.elements)
            index = _index_of(source, found.tapped)
            if index < len(elements):
                elements[index] = elements[index].model_copy(update={"effect": Effect.OPENS,
                                                                     "leads_to": found.screen.id})
            else:
                elements.append(found.tapped)
            screens[found.source] = source.model_copy(update={"elements": tuple(elements)})
        patched = self.map.model_copy(update={"screens": screens})
        self.maps.save(patched)
        self.map = patched
        self.found = {}
        return patched


def _index_of(screen: MapScreen, element: MapElement) -> int:
    """The index of ``element`` among ``screen``'s elements (by label, id and class), else the next one."""
    return next((i for i, e in enumerate(screen.elements)
                 if (e.label, e.resource_id, e.class_name) == (element.label, element.resource_id, element.class_name)),
                len(screen.elements))
