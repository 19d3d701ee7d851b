"""Labelled rows the question names: a specification table's ``电池容量 | <capacity>mAh``, kept in the report.

A details page often lays its attributes out as rows of two texts side by side:
a short label on the left, its value on the right (``机身重量`` / ``约229g``). No
value reader knows every attribute, so when the question names one (its words
or Chinese bigrams in the label: "电池" in ``电池容量``; or a concept of the lexicon it names, in
any of its languages: "how heavy" names ``机身重量``), the row is reported as
it stands, both texts cited, for every app that shows it: a comparison keeps the
attributes the question asks about even where no rule reads their values.

A question may name the section instead of its rows ("compare their specs"): every row
under a heading that names one of the question's concepts (``规格参数`` for "specs", in the
lexicon's languages) is reported, down to the next text that is not a row.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.models import Capture, Frozen, UIElement
from inference.rules import load_lexicon, match_concept
from tasks.synthesis.items import QueryTerms, dedupe_elements, score_relevance

__all__ = ["NamedRow", "find_named_rows"]

_LABEL_CHARS = 12  # a row's label is short: "电池容量", "Battery"
_SAME_ROW = 0.5  # share of the label's height two texts' tops may differ by on one row


class NamedRow(Frozen):
    """One labelled row of a page whose label the question names."""

    capture_id: str
    label: str
    value: str


def find_named_rows(captures: Sequence[Capture], terms: QueryTerms,
                    sections: Sequence[str] = ()) -> list[NamedRow]:
    """Rows (a short label, its value right of it on the same line) whose label the question names,
    and every row under a heading naming one of ``sections`` (lexicon concept ids the question names)."""
    concepts = [load_lexicon().concepts[c] for c in sections]
    rows: dict[tuple[str, str], NamedRow] = {}
    for capture in captures:
        texts = [e for e in dedupe_elements(capture.elements) if not e.clickable and not e.editable]
        texts.sort(key=lambda e: (e.bounds.top, e.bounds.left))
        paired = {id(e): v for e in texts if 0 < len(e.label.strip()) <= _LABEL_CHARS
                  and (v := _value_right_of(e, texts)) is not None}
        values = {id(v) for v in paired.values()}
        in_section = False
        for label in texts:
            name = label.label.strip()
            value = paired.get(id(label))
            if value is None and id(label) not in values:
                # A text that is not part of a row: a heading opens (or closes) a named section.
                in_section = any(match_concept(name, c) for c in concepts) and len(name) <= _LABEL_CHARS
                continue
            if value is None or not (in_section or score_relevance(terms, name) > 0.0
                                     or any(match_concept(name, c) for c in concepts)):
                continue
            rows.setdefault((capture.id, name), NamedRow(capture_id=capture.id, label=name,
                                                         value=value.label.strip()))
    return list(rows.values())


def _value_right_of(label: UIElement, texts: Sequence[UIElement]) -> UIElement | None:
    box = label.bounds
    beside = [e for e in texts if e is not label and e.bounds.left >= box.right
              and abs(e.bounds.top - box.top) <= _SAME_ROW * max(box.height, 1)]
    return min(beside, key=lambda e: e.bounds.left, default=None)
