"""App maps, read: a screen's shape, matching a question to a map's screens, paths over it.

    screen_shape(screen) -> ScreenShape          what makes two looks one map screen
    locate_screen(app_map, screen) -> MapScreen  where on the map a live screen is
    rank_screens(app_map, MapQuery.for_goal(...))  the screens that hold what a question asks
    shortest_path(app_map, source, targets)      the map's fewest hops to a target
    MapGuide(app_map, subtask)                   a sub-task's targets, next move and arrival

Building a map is ``tasks.mapping`` (it drives a phone); the models are
``core.models`` (``AppMap``, ``MapScreen``, ``MapElement``).
"""

from __future__ import annotations

from inference.maps.guide import MapGuide, MapMove, MapTrail
from inference.maps.manual import MANUAL_TOKEN_BUDGET, render_manual
from inference.maps.match import MapQuery, coverage, rank_screens, reads_term, tokenize
from inference.maps.routes import (
    Hop,
    find_element,
    is_template_list,
    list_key,
    locate_screen,
    shortest_path,
)
from inference.maps.shape import (
    ScreenShape,
    control_label,
    list_members,
    page_title,
    screen_shape,
    shape_similarity,
    text_lines,
)
from inference.maps.survey import BACK_LABELS, MAX_LIST_ITEMS, ScreenSurvey, item_lines

__all__ = [
    "BACK_LABELS",
    "MANUAL_TOKEN_BUDGET",
    "MAX_LIST_ITEMS",
    "Hop",
    "MapGuide",
    "MapMove",
    "MapQuery",
    "MapTrail",
    "ScreenShape",
    "ScreenSurvey",
    "control_label",
    "control_name",
    "coverage",
    "find_element",
    "is_template_list",
    "item_lines",
    "list_key",
    "list_members",
    "locate_screen",
    "page_title",
    "rank_screens",
    "reads_term",
    "render_manual",
    "screen_shape",
    "shape_similarity",
    "shortest_path",
    "text_lines",
    "tokenize",
]
