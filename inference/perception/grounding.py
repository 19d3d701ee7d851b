"""Grounding (VT Grounding): element id or text -> box and tap point.

- ``ground_element``: an id from the navigator -> its box and centre.
- ``ground_text``: "tap [Search]" -> the element whose label best matches,
  fuzzily (rapidfuzz). Among equally good matches: the one whose neighbours
  read like the ``context`` given, then the topmost (drawn last: a drawer's
  item, not the tab under it; covered elements are already gone from a
  perceived screen), then actionable, then the smallest box. With the view
  ``tree``, the result also names the quoted text's own box (``text_box``): a
  text folded into its clickable row keeps its box for highlights.

Report citations are grounded by ``tasks.synthesis.grounding``, which adds what
evidence needs and a tap does not: numbers in a quote must be on the element,
and neighbouring elements of one row are tried together.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field
from rapidfuzz import fuzz, utils

from core.models import Bounds, Point, UIElement
from inference.errors import GroundingError
from inference.perception.hierarchy import ViewTree

__all__ = ["Grounding", "ground_element", "ground_instruction", "ground_text"]

_BRACKETS = re.compile(r"\[([^\[\]]+)\]")
_PART_SEPARATOR = " | "  # how the parser joins texts merged into a clickable parent


class Grounding(BaseModel):
    """Where an element, text or quote is on screen, and how sure the match is."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    element_id: str
    box: Bounds  # the element's box: what a tap aims at
    point: Point
    score: float = Field(ge=0.0, le=1.0)
    matched_text: str = ""
    text_box: Bounds | None = None  # the matched text's own box (highlights); None: the element's

    @property
    def highlight(self) -> Bounds:
        """The box to highlight: the text's own box when known, else the element's."""
        return self.text_box or self.box


def _grounding(element: UIElement, score: float, text: str, text_box: Bounds | None = None) -> Grounding:
    return Grounding(
        element_id=element.id, box=element.bounds, point=element.bounds.center,
        score=min(1.0, score), matched_text=text, text_box=text_box,
    )


def ground_element(elements: tuple[UIElement, ...], element_id: str) -> Grounding:
    """The box and centre of ``element_id``; raises :class:`GroundingError` if absent."""
    for element in elements:
        if element.id == element_id:
            return _grounding(element, 1.0, element.label)
    raise GroundingError(
        f"no element {element_id!r} on this screen",
        hint="the screen changed since it was described: observe again and pick a current element",
    )


def _candidates(element: UIElement) -> list[str]:
    parts = [p for p in element.text.split(_PART_SEPARATOR) if p] if element.text else []
    if element.text and len(parts) > 1:
        parts.append(element.text)
    if element.content_desc:
        parts.append(element.content_desc)
    return parts


def _score(query: str, candidate: str) -> float:
    return fuzz.ratio(query, candidate, processor=utils.default_process) / 100.0


_TIE = 0.02  # scores this close are a tie the context and drawing order decide


def _context_score(element: UIElement, elements: tuple[UIElement, ...], context: str) -> float:
    """How much the labels around ``element`` (its row and its neighbours) read like ``context``."""
    if not context:
        return 0.0
    box = element.bounds
    band = max(box.height, 1)
    near = [e.label for e in elements if e is not element and e.label
            and abs(e.bounds.center.y - box.center.y) <= 2 * band]
    return fuzz.token_set_ratio(context, " ".join(near), processor=utils.default_process) / 100.0


def _best(
    elements: tuple[UIElement, ...], query: str, context: str = ""
) -> tuple[UIElement, float, str] | None:
    scored: list[tuple[float, int, UIElement, str]] = []
    for order, element in enumerate(elements):
        for candidate in _candidates(element):
            scored.append((_score(query, candidate), order, element, candidate))
    if not scored:
        return None
    top = max(score for score, *_ in scored)
    ties = [entry for entry in scored if entry[0] >= top - _TIE]
    # Of two matches on top of each other, the one drawn later (document order) is seen.
    ties = [entry for entry in ties if not any(
        other[1] > entry[1] and other[2].bounds.intersection(entry[2].bounds) >= 0.5 * entry[2].bounds.area > 0
        for other in ties)] or ties

    def rank(entry: tuple[float, int, UIElement, str]) -> tuple[float, float, int, int, int]:
        score, _, element, candidate = entry
        actionable = int(element.clickable or element.editable or element.checkable)
        return (_context_score(element, elements, context), score, actionable,
                -element.bounds.area, -len(candidate))

    score, _, element, candidate = max(ties, key=rank)
    return element, score, candidate


def _text_box(tree: ViewTree | None, element: UIElement, text: str) -> Bounds | None:
    """The box of the node inside ``element`` that carries ``text`` (its own, or a merged child's)."""
    if tree is None:
        return None
    parts = [n for n in tree.nodes if n.element_id == element.id and n.label and n.bounds.area > 0]
    if not parts:
        return None
    best = max(parts, key=lambda n: (_score(text, n.label), -n.bounds.area))
    return best.bounds if _score(text, best.label) >= 0.5 else None


def ground_text(
    elements: tuple[UIElement, ...], query: str, *, threshold: float = 0.8,
    tree: ViewTree | None = None, context: str = "",
) -> Grounding:
    """The element whose label best matches ``query``; raises below ``threshold``.

    ``context`` (words around the quote: a row's other texts, a section name) breaks
    ties between repeated labels; ``tree`` (the perception's view tree) gives the
    matched text's own box as ``text_box``.
    """
    found = _best(elements, query.strip(), context)
    if found is None or found[1] < threshold:
        closest = f" (closest: {found[2]!r}, score {found[1]:.2f})" if found else ""
        raise GroundingError(
            f"no element on this screen reads {query!r}{closest}",
            hint="scroll to reveal it, or describe the screen again and choose a visible element",
        )
    element, score, text = found
    return _grounding(element, score, text, _text_box(tree, element, query.strip()))


def ground_instruction(elements: tuple[UIElement, ...], instruction: str, *, threshold: float = 0.8) -> Grounding:
    """Ground the first ``[bracketed]`` target of "Tap [Search]"-style instructions."""
    match = _BRACKETS.search(instruction)
    if match is None:
        raise GroundingError(
            f"the instruction {instruction!r} names no [target]",
            hint="write the target in brackets, e.g. Tap [Search]",
        )
    return ground_text(elements, match.group(1), threshold=threshold)
