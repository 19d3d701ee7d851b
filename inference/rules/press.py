"""What pressing an element would do: everything it says, to a person and in its metadata.

A finger presses one element, but what the press does is told in several places, its readings:
the lines it shows (its own text, the texts of a card merged into it or lying inside it, OCR
lines read over it), the text drawn in its pixels (an image saying "PAY"), its content
description and its resource id (``btn_pay``). :func:`find_press_act` reads them all:

- what a person sees decides first: a content card (three lines or more) opens what it shows,
  unless one of its lines is a button's words ("Pay now", "再来一单"); anything shorter is read
  whole, however long (:func:`inference.rules.never_tap.find_act`);
- metadata that disagrees with it is a disguise: a description or pixels naming an act the
  visible words do not name (text "Details", description "Pay now") count as that act, and so
  does a resource id that names nothing but an act (``btn_pay``), whatever the label says;
- a refusal ("Cancel", "不允许") declines what it closes (:func:`declines`), unless its
  description or pixels name an act and no refusal.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from core.models import ElementSource, Screen, UIElement
from core.text import fold_for_matching
from inference.rules.never_tap import Act, find_act, is_refusal, never_tap_patterns, starts_as_act
from inference.vocabulary import load_vocabulary

__all__ = ["PressReading", "TextReader", "declines", "find_press_act", "read_press"]

# Reads the text drawn inside a box of the current screenshot (OCR); "" when it cannot.
TextReader = Callable[[UIElement], str]

_CONTENT_LINES = 3  # a card of content: a title and two more lines (a post, a mail, a video)
_PAGE_SHARE = 0.4  # a clickable larger than this share of the screen is a page, not a card
_DRAWN_SHARE = 0.15  # pixels are read under a description only on a button-sized element
_OCR_OVERLAP = 0.5  # an OCR line belongs to an element when this share of it lies inside
_ID_SPLIT = re.compile(r"[_\-.:/\s]+|(?<=[a-z])(?=[A-Z])")
_WIDGET_WORDS = frozenset(load_vocabulary("widget_words").words("widget"))
_REFUSAL_WORDS = re.compile(
    rf"\b(?:{load_vocabulary('refusal').alternation('refusal')})\b")
_URGE_WORDS = re.compile(load_vocabulary("act_qualifiers").alternation("urges", "leads_in"))


class PressReading(BaseModel):
    """Everything an element says about what pressing it does."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    lines: tuple[str, ...] = ()  # what a person sees: texts and OCR lines, else pixels, else the description
    seen_in: str = ""  # where those lines were read: "text", "pixels", "description" or ""
    description: str = ""
    drawn: str = ""  # text read from the pixels ("" when they were not read)
    resource_words: str = ""  # the resource id as words: "com.app:id/btn_pay" -> "btn pay"

    @property
    def seen(self) -> str:
        """The visible lines as one label ("A | B")."""
        return " | ".join(self.lines)

    @property
    def is_content(self) -> bool:
        return len(self.lines) >= _CONTENT_LINES


def read_press(element: UIElement, screen: Screen, read_text: TextReader | None = None) -> PressReading:
    """Every reading of ``element``: the lines it shows, its description, its resource id, and its
    pixels (OCR, through ``read_text``) where it shows no text of its own."""
    lines = [part.strip() for part in element.text.split(" | ") if part.strip()]
    lines += [line for line in _lines_inside(element, screen) if line not in lines]
    description = element.content_desc.strip()
    resource_words = " ".join(w for w in _ID_SPLIT.split(element.resource_id.rpartition("/")[2]) if w)
    if lines:
        return PressReading(lines=tuple(lines), seen_in="text", description=description,
                            resource_words=resource_words)
    drawn = ""
    area = screen.width * screen.height
    if read_text is not None and element.bounds.area > 0 and (
            not description or element.bounds.area <= _DRAWN_SHARE * area):
        # The pixels are what a person sees; a description is only what the app says of them.
        drawn = read_text(element).strip()
    if drawn:
        return PressReading(lines=(drawn,), seen_in="pixels", description=description, drawn=drawn,
                            resource_words=resource_words)
    seen = (description,) if description else ()
    return PressReading(lines=seen, seen_in="description" if seen else "", resource_words=resource_words)


def declines(reading: PressReading) -> bool:
    """Whether the element is a refusal ("Cancel", "不允许") that nothing else about it contradicts:
    no description or pixels naming an act without declining too."""
    if not reading.lines or not is_refusal(reading.seen):
        return False
    return not any(_names_act_without_declining(other) for other in (reading.description, reading.drawn)
                   if other and other != reading.seen)


def find_press_act(reading: PressReading) -> tuple[Act, str] | None:
    """The act pressing the element would do, and where it is said ("its text", "its description",
    "its pixels", "its resource id"), or None."""
    seen = reading.seen
    if reading.is_content:
        act = next((a for a in map(starts_as_act, reading.lines) if a is not None), None)
    else:
        act = find_act(seen) if seen else None
    if act is not None:
        return act, f"its {reading.seen_in}"
    folded = fold_for_matching(seen)
    for source, other in (("description", reading.description), ("pixels", reading.drawn)):
        if not other or reading.seen_in == source:
            continue
        act = starts_as_act(other) if reading.is_content else find_act(other)
        if act is not None and act.word not in folded:
            return act, f"its {source}"
    if reading.resource_words and not reading.lines:
        act = find_act(reading.resource_words)  # nothing else names it: its id is its name
    elif reading.resource_words and not reading.is_content:
        act = _names_only_an_act(reading.resource_words)
    else:
        act = None
    if act is not None and act.word not in folded:
        return act, "its resource id"
    return None


def _lines_inside(element: UIElement, screen: Screen) -> list[str]:
    """The texts inside ``element``, top to bottom: non-clickable labelled elements it holds and
    OCR lines mostly over it. A page-sized clickable holds a page, not its lines."""
    if element.bounds.area <= 0 or element.bounds.area > _PAGE_SHARE * screen.width * screen.height:
        return []
    inside = [
        e for e in screen.elements
        if e is not element and e.label.strip() and not e.clickable and (
            element.bounds.encloses(e.bounds)
            or (e.source is ElementSource.OCR and e.bounds.area > 0
                and element.bounds.intersection(e.bounds) >= _OCR_OVERLAP * e.bounds.area))
    ]
    inside.sort(key=lambda e: (e.bounds.top, e.bounds.left))
    return [e.label.strip() for e in inside]


def _names_act_without_declining(text: str) -> bool:
    return find_act(text) is not None and _REFUSAL_WORDS.search(fold_for_matching(text)) is None


def _names_only_an_act(words: str) -> Act | None:
    """The act of a resource id whose words are nothing but an act ("btn_pay", "confirmPay",
    "buy_now"); a name for a topic ("pay_order", "pay_code", "tab_post_list") is none."""
    folded = fold_for_matching(words)
    rest = folded
    for _, pattern in never_tap_patterns():
        rest = pattern.sub(" ", rest)
    rest = _URGE_WORDS.sub(" ", rest)
    if rest == folded or any(w not in _WIDGET_WORDS for w in rest.split()):
        return None
    return find_act(folded)
