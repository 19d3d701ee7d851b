"""A screen's shape: what makes two screens "the same screen" of an app map.

Two looks at a page are one map screen when their structure is the same:
the classes and resource ids of what is on it, the labels of its controls
(tabs, buttons, entries), and its title. What a list shows is left out: a
list of results, whatever its items, is one part of the page (``list``), so a
results page for "pizza" and one for "sushi" have one shape, and so do two
scroll positions of one list. A page template (a product page, a store page)
differs from page to page only in its title and content, so a shape also has
a *form*, the same hash without the title: pages opened from items of one
list that share a form are samples of one map screen.

The status bar, clocks, badges and OCR or detector elements are left out, as
in the fingerprint (:func:`inference.perception.fingerprint_screen`), which
stays the "same page at the same place" check of the navigation loop.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable

from core.models import ElementSource, Frozen, Screen, UIElement
from inference.perception.naming import id_words
from inference.rules import find_list_items

__all__ = [
    "ScreenShape",
    "control_label",
    "control_name",
    "list_members",
    "page_title",
    "screen_shape",
    "shape_similarity",
    "text_lines",
]

_STATUS_BAR_SHARE = 0.04
_TITLE_CHARS = 60
_CONTROL_CHARS = 24  # longer labels are content (a headline), not a control's name
_DIGITS = re.compile(r"\d")
_SPACE = re.compile(r"\s+")


class ScreenShape(Frozen):
    """The shape of one screen: its map id, its form (no title) and what a fuzzy match compares."""

    id: str
    form: str
    title: str
    parts: frozenset[str]  # class|resource id of what is on it, lists as one part each
    controls: frozenset[str]  # the labels of its controls, folded


def screen_shape(screen: Screen) -> ScreenShape:
    """The shape of ``screen`` (see the module docstring)."""
    inside = list_members(screen)
    parts: set[str] = set()
    controls: set[str] = set()
    for element in _kept(screen):
        if element.id in inside:
            if inside[element.id] == element.id:
                parts.add(f"list|{element.class_name}|{element.resource_id}")
            continue
        parts.add(f"{element.class_name}|{element.resource_id}")
        label = control_label(element)
        if label:
            controls.add(label)
    title = page_title(screen)
    title = "" if _DIGITS.search(title) else _fold(title)  # a count or date in a title is content
    controls.discard(title)
    form = _digest(screen.package, sorted(parts), sorted(controls))
    return ScreenShape(id=_digest(form, [title]), form=form, title=title,
                       parts=frozenset(parts), controls=frozenset(controls))


def page_title(screen: Screen) -> str:
    """The page's title: its first short text from the top that is not typed into a field (a search
    box holding the query is not the page's name)."""
    texts = sorted((e for e in _kept(screen) if e.text.strip() and len(e.text) <= _TITLE_CHARS and not e.editable),
                   key=lambda e: (e.bounds.top, e.bounds.left))
    return texts[0].text.strip() if texts else ""


def shape_similarity(a: ScreenShape, b: ScreenShape) -> float:
    """How alike two shapes are, 0..1: their parts and controls in common (Jaccard), the title as a tie."""
    parts = _jaccard(a.parts, b.parts)
    controls = _jaccard(a.controls, b.controls) if (a.controls or b.controls) else parts
    title = 1.0 if a.title == b.title else 0.0
    return 0.45 * parts + 0.45 * controls + 0.1 * title


def list_members(screen: Screen) -> dict[str, str]:
    """Element id -> the id of the list item it belongs to (an item maps to itself).

    The items of the screen's largest list (:func:`inference.rules.find_list_items`)
    and everything drawn inside them; none when the list is a menu (each item one short
    label: "Apps", "Battery", "Help"), whose entries are the page's controls, not content.
    """
    items = find_list_items(screen)
    if items and all(_is_entry(item, screen) for item in items):
        return {}
    members: dict[str, str] = {}
    for item in items:
        members[item.id] = item.id
        for element in screen.elements:
            if element.id not in members and item.bounds.encloses(element.bounds) and element is not item:
                members[element.id] = item.id
    return members


def _is_entry(item: UIElement, screen: Screen) -> bool:
    """One short line naming a place (a menu's entry), not a card of content."""
    lines = [p for p in item.label.split(" | ") if p.strip()]
    lines += [e.label for e in screen.elements
              if e is not item and e.label.strip() and item.bounds.encloses(e.bounds)]
    return len(lines) <= 1 and bool(control_name(lines[0] if lines else id_words(item.resource_id)))


def control_label(element: UIElement) -> str:
    """The folded label of a control (clickable, short, no digits), else ""."""
    if not element.clickable or element.editable:
        return ""
    return control_name(element.label.strip() or id_words(element.resource_id))


def control_name(label: str) -> str:
    """``label`` folded, when it can name a control (short, no digits: not a count or a price), else ""."""
    if not label or len(label) > _CONTROL_CHARS or _DIGITS.search(label):
        return ""
    return _fold(label)


def text_lines(screen: Screen, *, skip: Collection[str] = ()) -> list[str]:
    """Every text on ``screen`` (merged labels split into lines), top to bottom, without repeats;
    ``skip``: ids of elements left out (a list's items: what the page shows, not what it is)."""
    seen: set[str] = set()
    lines: list[str] = []
    for element in sorted(_kept(screen, hierarchy_only=False), key=lambda e: (e.bounds.top, e.bounds.left)):
        if element.id in skip:
            continue
        for part in element.label.split(" | "):
            line = _SPACE.sub(" ", part).strip()
            if line and line not in seen:
                seen.add(line)
                lines.append(line)
    return lines


def _kept(screen: Screen, *, hierarchy_only: bool = True) -> Iterable[UIElement]:
    bar = _STATUS_BAR_SHARE * screen.height
    for element in screen.elements:
        if hierarchy_only and element.source is not ElementSource.HIERARCHY:
            continue
        if element.resource_id.startswith("com.android.systemui:") or element.bounds.bottom <= bar:
            continue
        yield element


def _fold(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def _digest(*parts: object) -> str:
    text = "\x1f".join(str(p) for p in parts)
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)
