"""Names for controls that carry no text and no description (menu, cart and bookmark icons).

A person calls such a control by what its developer called it, by what its
icon shows, or by where it sits. In that order:

1. **resource-id words**: ``menu_actionbar_homepage_search_button`` -> "homepage search",
   ``iv_cart`` -> "cart", ``settingButton`` -> "setting" (widget words such as
   button, iv, layout, container dropped; at most the last three words kept);
2. **icon**: an icon classifier's label, when one ran and was sure
   (:mod:`inference.perception.icons`);
3. **place**: "app bar, left", "bottom bar, 3 of 5", "top right", from the
   element's position and the like-sized controls on its row.
"""

from __future__ import annotations

import re

from core.models import UIElement
from inference.vocabulary import load_vocabulary

__all__ = ["id_words", "name_by_place", "name_unlabelled"]

# Words of a resource id that name a kind of widget, not what it does: inference/vocabulary/widget_words.yaml.
_WIDGET_WORDS = frozenset(load_vocabulary("widget_words").words("widget"))
_SPLIT = re.compile(r"[_\-.\s]+|(?<=[a-z])(?=[A-Z])|(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])")
_MAX_WORDS = 3
_BAR_SHARE = 0.12  # top / bottom share of the screen that app bars and bottom bars live in


def id_words(resource_id: str) -> str:
    """The words of a resource id that say what the control is ("" when only widget words)."""
    tail = resource_id.rsplit("/", 1)[-1]
    words = [w.lower() for w in _SPLIT.split(tail) if w]
    kept = [w for w in words if w not in _WIDGET_WORDS and not w.isdigit() and len(w) > 1]
    return " ".join(kept[-_MAX_WORDS:])


def name_by_place(element: UIElement, elements: tuple[UIElement, ...], width: int, height: int) -> str:
    """Where the control sits: the bar it is in and its place among like-sized controls there."""
    box = element.bounds
    centre = box.center
    if centre.y < _BAR_SHARE * height:
        area = "app bar"
    elif centre.y > (1 - _BAR_SHARE) * height:
        area = "bottom bar"
    else:
        area = ""
    row = sorted(
        (e for e in elements if (e.clickable or e.long_clickable) and abs(e.bounds.center.y - centre.y) < box.height / 2
         and 0.5 <= e.bounds.area / max(1, box.area) <= 2.0),
        key=lambda e: e.bounds.left,
    )
    if area == "bottom bar" and len(row) >= 3 and element in row:
        return f"bottom bar, {row.index(element) + 1} of {len(row)}"
    side = "left" if centre.x < width / 3 else "right" if centre.x > 2 * width / 3 else "middle"
    if area:
        return f"{area}, {side}"
    vertical = "top" if centre.y < height / 3 else "bottom" if centre.y > 2 * height / 3 else "middle"
    return f"{vertical} {side}"


def name_unlabelled(
    element: UIElement, elements: tuple[UIElement, ...], width: int, height: int, icon: str = "",
) -> str:
    """A name for a control without text or description: id words, else its icon, else its place."""
    return id_words(element.resource_id) or icon or name_by_place(element, elements, width, height)
