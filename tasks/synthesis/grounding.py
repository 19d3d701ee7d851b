"""Ground each cited quote to a box on its capture (DroidRetriever section 4.7).

A quote is fuzzy-matched (rapidfuzz) against every element of the cited
capture, hierarchy text and OCR lines alike, and against short runs of
neighbouring elements on one visual row (a model often quotes ``"Big Mac ¥25.5"``
where the screen has two elements). The best match wins; it counts as
grounded when its score reaches the threshold (``settings.budgets.
grounding_threshold``, 0.8 by default). Scores:

- whole-text similarity (``fuzz.ratio``);
- for a quote shorter than the element, the best aligned substring
  (``fuzz.partial_ratio``), discounted a little by how much of the element the
  quote covers, so an element that *is* the quote beats one that merely
  contains it: ``"¥25.5"`` grounds in ``"Big Mac Meal ¥25.5 Sold 2k+"`` but
  prefers an element reading exactly ``"¥25.5"``;
- numbers are facts, not characters: when the quote holds numbers, a candidate
  lacking any of them scores 0 (``"¥25.5"`` never grounds on ``"¥26.5"`` or
  ``"¥125.5"``, although their strings are 80% alike).

A citation that matches nothing, or names a capture that does not exist, is
returned with ``grounded=False`` and its best score; it is never dropped.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict
from rapidfuzz import fuzz

from core.models import Bounds, Capture, Citation, UIElement
from tasks.synthesis.citations import CitationRef

__all__ = [
    "GroundingCandidate",
    "ground_citation",
    "ground_citations",
    "list_candidates",
    "normalize_text",
    "resolve_capture",
]

_SPACES = re.compile(r"\s+")
_NUMBERS = re.compile(r"\d+(?:[.,]\d+)*")
_MAX_RUN = 3  # neighbouring elements merged into one candidate


class GroundingCandidate(BaseModel):
    """Text a quote may match: one element, or a run of neighbours on one row."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    element_id: str
    text: str  # normalized
    box: Bounds


def normalize_text(text: str) -> str:
    """NFKC (full-width ``￥２５`` -> ``¥25``), case-folded, single-spaced."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text)).casefold().strip()


def _numbers(text: str) -> set[float]:
    values: set[float] = set()
    for token in _NUMBERS.findall(text):
        try:
            values.add(float(token.replace(",", "")))
        except ValueError:  # "1.2.3": a version, not a number; compare as text
            continue
    return values


def _same_row(a: Bounds, b: Bounds) -> bool:
    overlap = min(a.bottom, b.bottom) - max(a.top, b.top)
    return overlap > 0.5 * min(a.height, b.height) and b.left >= a.left


def _union(boxes: Iterable[Bounds]) -> Bounds:
    listed = list(boxes)
    return Bounds(left=min(b.left for b in listed), top=min(b.top for b in listed),
                  right=max(b.right for b in listed), bottom=max(b.bottom for b in listed))


def list_candidates(elements: Sequence[UIElement]) -> tuple[GroundingCandidate, ...]:
    """Every element with a label, plus runs of up to three row neighbours joined by spaces."""
    labelled = sorted((e for e in elements if e.label.strip()),
                      key=lambda e: (e.bounds.top, e.bounds.left))
    singles = [GroundingCandidate(element_id=e.id, text=normalize_text(e.label), box=e.bounds)
               for e in labelled]
    runs: list[GroundingCandidate] = []
    for index, first in enumerate(labelled):
        run = [first]
        for other in labelled[index + 1 : index + 1 + 4 * _MAX_RUN]:
            if len(run) == _MAX_RUN:
                break
            if other.source == first.source and _same_row(run[-1].bounds, other.bounds):
                run.append(other)
                runs.append(GroundingCandidate(
                    element_id=first.id,
                    text=" ".join(normalize_text(e.label) for e in run),
                    box=_union(e.bounds for e in run),
                ))
    return tuple(singles + runs)


def _score(quote: str, quote_numbers: set[float], candidate: GroundingCandidate) -> float:
    text = candidate.text
    if not quote or not text:
        return 0.0
    if quote_numbers and not quote_numbers <= _numbers(text):
        return 0.0
    score = fuzz.ratio(quote, text) / 100.0
    if len(quote) < len(text):
        coverage = len(quote) / len(text)
        partial = fuzz.partial_ratio(quote, text) / 100.0
        score = max(score, partial * (0.85 + 0.15 * coverage))
    return score


def resolve_capture(capture_id: str, captures: Sequence[Capture]) -> Capture | None:
    """The capture a citation names: its id, case-insensitively, or its 1-based position.

    The position form is the paper's "interface id" (``[2(...)]``), which a model
    prompted with numbered interfaces writes.
    """
    for capture in captures:
        if capture.id == capture_id:
            return capture
    folded = capture_id.casefold()
    for capture in captures:
        if capture.id.casefold() == folded:
            return capture
    if capture_id.isdigit() and 1 <= int(capture_id) <= len(captures):
        return captures[int(capture_id) - 1]
    return None


def ground_citation(
    ref: CitationRef,
    captures: Sequence[Capture],
    threshold: float,
    candidates: dict[str, tuple[GroundingCandidate, ...]] | None = None,
) -> Citation:
    """Match one quote against its capture's elements; the best candidate wins."""
    capture = resolve_capture(ref.capture_id, captures)
    if capture is None:
        return Citation(capture_id=ref.capture_id, quote=ref.quote, grounded=False)
    pool = (candidates or {}).get(capture.id)
    if pool is None:
        pool = list_candidates(capture.elements)
    quote = normalize_text(ref.quote)
    quote_numbers = _numbers(quote)
    best: GroundingCandidate | None = None
    best_score = 0.0
    for candidate in pool:
        score = _score(quote, quote_numbers, candidate)
        # Ties go to the tighter box: it points at the quote more precisely.
        if score > best_score or (best is not None and score == best_score
                                  and candidate.box.area < best.box.area):
            best, best_score = candidate, score
    if best is None or best_score < threshold:
        return Citation(capture_id=capture.id, quote=ref.quote, grounded=False,
                        score=round(best_score, 4))
    return Citation(capture_id=capture.id, quote=ref.quote, grounded=True, box=best.box,
                    score=round(min(best_score, 1.0), 4), element_id=best.element_id)


def ground_citations(
    refs: Iterable[CitationRef], captures: Sequence[Capture], threshold: float
) -> tuple[Citation, ...]:
    """Ground every ref, in order; candidates are built once per capture."""
    cache = {capture.id: list_candidates(capture.elements) for capture in captures}
    return tuple(ground_citation(ref, captures, threshold, cache) for ref in refs)
