"""Citation syntax of the report: ``[capture_id(original text)]`` and groups ``[[1(a)][2(b)]]``.

The format is DroidRetriever's (LLM4 prompt, Appendix B.4). The text comes
from a model or from our own extractive writer, so the parser is a small
hand-written scanner rather than a regular expression: it must never hang
on adversarial input (unbalanced brackets, megabyte-long quotes) and it runs
in O(n log n): every ``[`` is tried at most twice, and the closing ``)]`` of a
quote is found by bisecting a list built in one pass.

Rules, each chosen so that ordinary Markdown is left alone:

- the id is 1-64 characters of ``A-Za-z0-9_.-`` followed directly by ``(``;
- the quote runs to the first ``)]`` on the same line (so parentheses inside a
  quote are fine: ``[c1(Big Mac (large))]`` quotes ``Big Mac (large)``) and is
  at most :data:`MAX_QUOTE` characters;
- a ``]`` followed by ``(`` is a Markdown link (``[Meituan(cheap)](https://...)``),
  never a citation;
- a group is ``[`` + one or more citations (optionally separated by spaces,
  commas or semicolons) + ``]``; a malformed group falls back to its inner
  citations, so nothing that parses on its own is lost.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator

from pydantic import BaseModel, ConfigDict

__all__ = [
    "MAX_QUOTE",
    "CitationMark",
    "CitationRef",
    "format_citation",
    "format_citations",
    "iter_citation_marks",
    "parse_citations",
    "replace_citations",
]

MAX_QUOTE = 500
_MAX_ID = 64
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_SEPARATORS = frozenset(" \t,;")
_SPACES = re.compile(r"\s+")


class CitationRef(BaseModel):
    """One cited quote: which capture, and the text as the writer quoted it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    capture_id: str
    quote: str


class CitationMark(BaseModel):
    """A citation (or a group of them) found in a text, with its span ``[start, end)``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    start: int
    end: int
    refs: tuple[CitationRef, ...]


class _Scanner:
    """One pass over ``text``; positions of ``)]`` and newlines are indexed up front."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.closes = [m.start() for m in re.finditer(r"\)\]", text)]
        self.newlines = [m.start() for m in re.finditer(r"\n", text)]

    def _next_at_or_after(self, positions: list[int], index: int) -> int:
        found = bisect.bisect_left(positions, index)
        return positions[found] if found < len(positions) else len(self.text)

    def single(self, start: int) -> tuple[CitationRef, int] | None:
        """Parse ``[id(quote)]`` at ``start``; return the ref and the index after ``]``."""
        text = self.text
        cursor = start + 1
        limit = min(len(text), cursor + _MAX_ID)
        while cursor < limit and text[cursor] in _ID_CHARS:
            cursor += 1
        if cursor == start + 1 or cursor >= len(text) or text[cursor] != "(":
            return None
        quote_start = cursor + 1
        close = self._next_at_or_after(self.closes, quote_start)
        if close >= len(text):
            return None
        if close > self._next_at_or_after(self.newlines, quote_start):
            return None
        if close - quote_start > MAX_QUOTE:
            return None
        end = close + 2
        if end < len(text) and text[end] == "(":
            return None  # "[label(x)](url)": a Markdown link whose label has parentheses
        quote = _SPACES.sub(" ", text[quote_start:close]).strip()
        return CitationRef(capture_id=text[start + 1 : cursor], quote=quote), end

    def group(self, start: int) -> CitationMark | None:
        """Parse ``[[a(x)][b(y)]]`` at ``start``."""
        text = self.text
        cursor = start + 1
        refs: list[CitationRef] = []
        while cursor < len(text) and text[cursor] == "[":
            parsed = self.single(cursor)
            if parsed is None:
                return None
            ref, cursor = parsed
            refs.append(ref)
            while cursor < len(text) and text[cursor] in _SEPARATORS:
                cursor += 1
        if not refs or cursor >= len(text) or text[cursor] != "]":
            return None
        end = cursor + 1
        if end < len(text) and text[end] == "(":
            return None
        return CitationMark(start=start, end=end, refs=tuple(refs))


def iter_citation_marks(text: str) -> Iterator[CitationMark]:
    """Yield every citation or citation group in ``text``, left to right, never overlapping."""
    scanner = _Scanner(text)
    index = text.find("[")
    while index != -1:
        mark: CitationMark | None = None
        if index + 1 < len(text) and text[index + 1] == "[":
            mark = scanner.group(index)
        if mark is None:
            parsed = scanner.single(index)
            if parsed is not None:
                ref, end = parsed
                mark = CitationMark(start=index, end=end, refs=(ref,))
        if mark is None:
            index = text.find("[", index + 1)
        else:
            yield mark
            index = text.find("[", mark.end)


def parse_citations(text: str) -> tuple[CitationMark, ...]:
    """All citation marks in ``text`` (see :func:`iter_citation_marks`)."""
    return tuple(iter_citation_marks(text))


def replace_citations(text: str, render: Callable[[CitationMark], str]) -> str:
    """``text`` with each citation mark replaced by ``render(mark)``; the rest kept verbatim."""
    pieces: list[str] = []
    cursor = 0
    for mark in iter_citation_marks(text):
        pieces.append(text[cursor : mark.start])
        pieces.append(render(mark))
        cursor = mark.end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _clean_quote(quote: str) -> str:
    # A quote may not contain ")]" or a newline, or it would end early; keep it
    # recognisable for the fuzzy grounding rather than escaping it.
    cleaned = _SPACES.sub(" ", quote).replace(")]", ") ]").strip()
    return cleaned[:MAX_QUOTE].rstrip()


def format_citation(capture_id: str, quote: str) -> str:
    """Write one citation, ``[capture_id(quote)]``, in the form :func:`parse_citations` reads."""
    return f"[{capture_id}({_clean_quote(quote)})]"


def format_citations(refs: tuple[CitationRef, ...]) -> str:
    """One citation, or a group ``[[a(x)][b(y)]]`` for several."""
    parts = [format_citation(ref.capture_id, ref.quote) for ref in refs]
    if len(parts) == 1:
        return parts[0]
    return "[" + "".join(parts) + "]"
