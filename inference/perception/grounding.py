"""Grounding (VT Grounding): element id or text -> box and tap point.

- ``ground_element``: an id from the navigator -> its box and centre.
- ``ground_text``: "tap [Search]" -> the element whose label best matches,
  fuzzily (rapidfuzz), actionable elements first on ties.

Report citations are grounded by ``tasks.synthesis.grounding``, which adds what
evidence needs and a tap does not: numbers in a quote must be on the element,
and neighbouring elements of one row are tried together.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field
from rapidfuzz import fuzz, utils

from droidretriever.models import Bounds, Point, UIElement
from inference.errors import GroundingError

__all__ = ["Grounding", "ground_element", "ground_instruction", "ground_text"]

_BRACKETS = re.compile(r"\[([^\[\]]+)\]")
_PART_SEPARATOR = " | "  # how the parser joins texts merged into a clickable parent


class Grounding(BaseModel):
    """Where an element, text or quote is on screen, and how sure the match is."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    element_id: str
    box: Bounds
    point: Point
    score: float = Field(ge=0.0, le=1.0)
    matched_text: str = ""


def _grounding(element: UIElement, score: float, text: str) -> Grounding:
    return Grounding(
        element_id=element.id, box=element.bounds, point=element.bounds.center,
        score=min(1.0, score), matched_text=text,
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


def _best(elements: tuple[UIElement, ...], query: str) -> tuple[UIElement, float, str] | None:
    best: tuple[tuple[float, int, int, int, str], UIElement, str] | None = None
    for element in elements:
        actionable = int(element.clickable or element.editable or element.checkable)
        for candidate in _candidates(element):
            score = _score(query, candidate)
            # Higher score, then actionable, then the smallest (most specific) box, then id.
            rank = (score, actionable, -element.bounds.area, -len(candidate), element.id)
            if best is None or rank > best[0]:
                best = (rank, element, candidate)
    if best is None:
        return None
    return best[1], best[0][0], best[2]


def ground_text(
    elements: tuple[UIElement, ...], query: str, *, threshold: float = 0.8
) -> Grounding:
    """The element whose label best matches ``query``; raises below ``threshold``."""
    found = _best(elements, query.strip())
    if found is None or found[1] < threshold:
        closest = f" (closest: {found[2]!r}, score {found[1]:.2f})" if found else ""
        raise GroundingError(
            f"no element on this screen reads {query!r}{closest}",
            hint="scroll to reveal it, or describe the screen again and choose a visible element",
        )
    element, score, text = found
    return _grounding(element, score, text)


def ground_instruction(elements: tuple[UIElement, ...], instruction: str, *, threshold: float = 0.8) -> Grounding:
    """Ground the first ``[bracketed]`` target of "Tap [Search]"-style instructions."""
    match = _BRACKETS.search(instruction)
    if match is None:
        raise GroundingError(
            f"the instruction {instruction!r} names no [target]",
            hint="write the target in brackets, e.g. Tap [Search]",
        )
    return ground_text(elements, match.group(1), threshold=threshold)
