"""Extractive synthesis: the report written without any model, and saying so.

What it does: per app, it lists the items on the captured pages that best
match the query's terms (names, values with units: prices, sales, delivery
minutes, ratings, distances, promotions; a product page's gifts, payment and
membership discounts), and when two or more apps answer the same attributes
it adds a comparison table whose every cell cites the element the value was
read from. Each app's column is its best-matching item that shows a value; an
attribute that item lacks but its page states for everything on it (a store's
delivery time and rating) is taken from the page's header and marked so; a
header with a price of its own is another product and lends nothing. Every
attribute any app answers gets a row, "not shown" where an app's pages do not say. The only arithmetic is picking the lowest
price / shortest time / highest rating among values with the same unit.
When the best match is the title of a captured page and names a kind of
thing rather than a product ("App permissions"), the page itself is the
answer: its rows are listed, each cited, though they share no word with the
question. When no line matches the question's words at all (an English
question about a Chinese article), the captured pages are shown top to bottom
under their titles, every line cited: the copilot judged them the answer. Those
lines copy pages rather than state an answer, and :func:`write_extractive`
says which they are (``page_dumps``, kept on the report for scorers).

What it does not do: understand the question, reconcile different items
(a "Big Mac" and a "Big Mac Meal" are compared as the best match each app
offers), read reviews for opinions, or notice what the captures lack.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from pydantic import BaseModel, ConfigDict

from core.models import AppStatus, Capture, LineSpan, PageMode, Query
from inference.rules import find_goal_concepts
from inference.rules.answer_shape import read_answer_request
from inference.rules.decomposer import choose_page_mode
from tasks.synthesis.app_items import (
    TABLE_KINDS,
    Answer,
    AppItems,
    cell,
    cite,
    cite_in_table,
    cite_name,
    cite_name_in_table,
    group_apps,
)
from tasks.synthesis.items import read_query_terms
from tasks.synthesis.records import SUGGESTIONS
from tasks.synthesis.sections import Section, write_app_section
from tasks.synthesis.values import MeasureKind

__all__ = [
    "EXTRACTIVE_BANNER",
    "EXTRACTIVE_NAME",
    "ExtractiveMarkdown",
    "write_extractive",
    "write_extractive_markdown",
]

EXTRACTIVE_NAME = "extractive (no model configured)"
EXTRACTIVE_BANNER = (
    "> **Extractive summary: no language model is configured.** The lines below are copied "
    "from the captured screens and picked by matching your question's words; nothing was "
    "interpreted or checked for completeness. Open a citation to see its evidence. "
    "Configure `llm.synthesizer` for a written answer."
)
_FROM_PAGE = "†"
# Which way is better, for the one-line verdicts under the table.
_LOWER_IS_BETTER = {MeasureKind.PRICE: "Lowest price", MeasureKind.DELIVERY_TIME: "Fastest delivery",
                    MeasureKind.DELIVERY_FEE: "Lowest delivery fee"}
_HIGHER_IS_BETTER = {MeasureKind.RATING: "Highest rating", MeasureKind.SALES: "Most sales"}


def _comparison(apps: list[AppItems]) -> list[str]:
    answers = [a for app in apps if (a := app.answer()) is not None]
    if len(answers) < 2:
        return []
    answered = {k: sum(1 for a in answers if a.cell(k)) for k in TABLE_KINDS}
    if max(answered.values()) < 2:
        return []  # nothing two apps both show: no comparison to draw
    kinds = [k for k in TABLE_KINDS if answered[k] >= 1]
    lines = ["## Comparison", "",
             "| | " + " | ".join(cell(a.app.label) for a in answers) + " |",
             "|---|" + "---|" * len(answers),
             "| Item | " + " | ".join(f"{cell(a.item.name)} {cite_name_in_table(a.item)}"
                                     for a in answers) + " |"]
    borrowed: dict[str, Answer] = {}
    for kind in kinds:
        cells = []
        for answer in answers:
            found = answer.cell(kind)
            if found is None:
                cells.append("not shown")
                continue
            owner, value = found
            mark = "" if owner is answer.item else f" {_FROM_PAGE}"
            if mark:
                borrowed[answer.app.label] = answer
            cells.append(f"{cell(value.text)} {cite_in_table(owner, value)}{mark}")
        lines.append(f"| {kind.value} | " + " | ".join(cells) + " |")
    lines.append("")
    if borrowed:
        pages = "; ".join(f"{cell(label)}: {cell(a.page.name)} {cite_name(a.page)}"
                          for label, a in borrowed.items() if a.page is not None)
        lines += [f"{_FROM_PAGE} Stated by the page the item is on, for everything on it ({pages}).", ""]
    lines.extend(_verdicts(answers, kinds))
    return lines


def _verdicts(answers: list[Answer], kinds: list[MeasureKind]) -> list[str]:
    verdicts: list[str] = []
    for kind in kinds:
        title = _LOWER_IS_BETTER.get(kind) or _HIGHER_IS_BETTER.get(kind)
        if title is None:
            continue
        values = [(a.app, owner, v) for a in answers
                  if (found := a.cell(kind)) is not None
                  for owner, v in (found,) if v.value is not None]
        if len(values) < 2 or len({v.unit for _, _, v in values}) != 1:
            continue  # different currencies or scales: not comparable without a model
        pick = min if kind in _LOWER_IS_BETTER else max
        target = pick(v.value for _, _, v in values if v.value is not None)
        winners = [(app, item, v) for app, item, v in values if v.value == target]
        names = " and ".join(f"{app.label} ({cell(v.text)} {cite(item, v)})"
                             for app, item, v in winners)
        tie = " (tie)" if len(winners) > 1 else ""
        verdicts.append(f"- {title}: {names}{tie}")
    return [*verdicts, ""] if verdicts else []


class ExtractiveMarkdown(BaseModel):
    """The extractive report body, and which of its lines copy captured pages (not an answer)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    markdown: str
    page_dumps: tuple[LineSpan, ...] = ()
    # Per app section, in order: the app's label and the strategy that wrote it
    # (tasks.synthesis.sections.STRATEGIES: "records", "best_matches", "page_dump", ...).
    decided_by: tuple[tuple[str, str], ...] = ()


def write_extractive(
    query: Query,
    captures: Sequence[Capture],
    apps: Sequence[AppStatus] = (),
    search_terms: Sequence[str] = (),
    today: date | None = None,
) -> ExtractiveMarkdown:
    """The extractive report body: banner, comparison table when apps share attributes, per-app lines.

    Every value and item name carries a ``[capture_id(original text)]`` citation
    quoting the element it was read from. ``page_dumps`` are the lines that show
    captured pages top to bottom because no line matched the question.
    """
    labels = [a.app_label for a in apps] + [a.package for a in apps]
    terms = read_query_terms(" ".join([query.text, *search_terms]), exclude=labels)
    grouped = group_apps(captures, apps, terms)
    request = read_answer_request(query.text)
    sections = find_goal_concepts(query.text).targets  # "specs": the rows under 规格参数
    several = choose_page_mode(query.text)[0] is PageMode.LIST_VIEW
    suggested = SUGGESTIONS.search(query.text.casefold()) is not None
    lines = [f"# {cell(query.text)}", "", EXTRACTIVE_BANNER, ""]
    lines += _comparison(grouped)
    dumps: list[LineSpan] = []
    decided_by: list[tuple[str, str]] = []
    for app in grouped:
        section, dump, strategy = write_app_section(Section(app, request, today, terms, sections, search_terms,
                                                            several, suggested, query.text))
        if dump is not None and dump.end > dump.start:
            dumps.append(LineSpan(start=len(lines) + dump.start, end=len(lines) + dump.end))
        decided_by.append((app.label, strategy))
        lines += section
    return ExtractiveMarkdown(markdown="\n".join(lines).rstrip() + "\n", page_dumps=tuple(dumps),
                              decided_by=tuple(decided_by))


def write_extractive_markdown(
    query: Query,
    captures: Sequence[Capture],
    apps: Sequence[AppStatus] = (),
    search_terms: Sequence[str] = (),
) -> str:
    """The Markdown of :func:`write_extractive` alone."""
    return write_extractive(query, captures, apps, search_terms).markdown
