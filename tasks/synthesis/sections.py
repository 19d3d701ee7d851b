"""One app's section of the extractive report: an ordered table of named strategies.

Each strategy is for one kind of capture and question; :data:`STRATEGIES` are tried in order and
the first that applies writes the section's body (under the app's heading, its status and the
rows the question names). :func:`write_app_section` returns which one did, and
:class:`~tasks.synthesis.extractive.ExtractiveMarkdown` keeps it per app (``decided_by``):

1. ``no_capture``     no screen was captured in the app;
2. ``most_frequent``  the pages are lists, and the question asks what they name most often
                      ("the movies that appear most often across the charts");
3. ``records``        the pages are lists of records, and what matched the question's words is a
                      label or nothing, or the question filters them (dates, prices, times of
                      day), or asks which of them are of a kind only some name;
4. ``best_matches``   items that match the question's words, and the listing of a page that is
                      itself the answer (titled by what it asks for);
5. ``page_subject``   a details page whose subject no word of the question names, which the
                      copilot judged the answer: its subject and values;
6. ``page_dump``      otherwise the captured pages as they are, top to bottom, every line cited
                      (marked as copying pages, not an answer).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from functools import cached_property

from core.models import Capture, LineSpan, SubTaskStatus
from inference.rules import load_lexicon, match_concept
from inference.rules.answer_shape import AnswerFormat, AnswerRequest, Order
from tasks.synthesis.app_items import (
    ITEMS_PER_APP,
    AppItems,
    cell,
    cite,
    cite_name,
    cite_name_in_table,
    same_text,
)
from tasks.synthesis.citations import format_citation
from tasks.synthesis.items import Item, QueryTerms, dedupe_elements
from tasks.synthesis.records import (
    describe_listing,
    describe_record,
    find_records,
    in_named_section,
    listed_most,
    record_fields,
    select_records,
)
from tasks.synthesis.rows import find_named_rows
from tasks.synthesis.values import MeasureKind

__all__ = ["STRATEGIES", "Section", "SectionStrategy", "write_app_section"]

_ENTRY_CHARS = 24  # a header's or a tab's text is short; longer texts are content
_PAGE_LINES = 20  # lines of a captured page shown when no line matches the question's words
_LINE_CHARS = 160
_STATUS_WORDS = {
    SubTaskStatus.COMPLETED: "completed",
    SubTaskStatus.NEEDS_USER: "needs a person",
    SubTaskStatus.FAILED: "failed",
    SubTaskStatus.BUDGET_EXHAUSTED: "ran out of steps",
    SubTaskStatus.STOPPED: "stopped by a person",
    SubTaskStatus.PENDING: "not started",
    SubTaskStatus.RUNNING: "stopped before finishing",
    SubTaskStatus.NOT_DONE: "not done",
}


class Section:
    """One app's captures and the question, with what the strategies read of them, each read once.

    ``several``: the question asks for a list of things ("which", "有哪些"), not one of them;
    ``suggested``: it asks for the app's suggestions ("what does it recommend"); ``question``: its
    words, which may name the heading of one of a page's lists (one chart among several).
    """

    def __init__(self, app: AppItems, request: AnswerRequest, today: date | None, terms: QueryTerms,
                 sections: Sequence[str], search_terms: Sequence[str] = (), several: bool = False,
                 suggested: bool = False, question: str = "") -> None:
        self.app = app
        self.request = request
        self.today = today
        self.terms = terms
        self.sections = sections
        self.search_terms = search_terms
        self.several = several
        self.suggested = suggested
        self.question = question

    @cached_property
    def matches(self) -> list[Item]:
        return self.app.matches

    @cached_property
    def _listing_and_records(self) -> tuple[tuple[Item, list[Item]] | None, list[Item]]:
        app, request = self.app, self.request
        listing = app.page_listing()
        records = find_records(app.captures, app.items, suggested=self.suggested) if listing is None else []
        if listing is None and not any(item.values for item in self.matches) and not (records and request.shaped):
            # A page titled by what the question asks for is listed whole, as it shows it (the rules
            # and the questions under them), unless its records are all it shows, or the question
            # filters or shapes them ("last month", "as a table").
            titled = app.concept_listing(self.sections)
            if titled is not None and (not records or _shows_more_than(titled[1], records)):
                listing, records = titled, []
        return listing, records

    @property
    def listing(self) -> tuple[Item, list[Item]] | None:
        """A captured page that is itself the answer: its title and its items."""
        return self._listing_and_records[0]

    @property
    def records(self) -> list[Item]:
        """The records of the captured pages, when no page is itself the answer."""
        return self._listing_and_records[1]


# A strategy's body: its lines, and the span of them that copies captured pages (None: none).
_Body = tuple[list[str], LineSpan | None]


@dataclass(frozen=True)
class SectionStrategy:
    """One way an app's section is written: its name, when it applies, what it writes."""

    name: str
    applies: Callable[[Section], bool]
    write: Callable[[Section], _Body]


def _captured_nothing(section: Section) -> bool:
    return not section.app.captures


def _no_capture(section: Section) -> _Body:
    """No screen was captured in the app: the section says so."""
    return ["No screen was captured in this app."], None


def _asks_most_frequent(section: Section) -> bool:
    return bool(section.records) and section.request.order is Order.MOST_FREQUENT


def _most_frequent(section: Section) -> _Body:
    """Pages of lists, for a question about what they list most often ("the movies that appear
    most often across the charts"): what the page's lists name most, each with every list naming it."""
    app, request, records = section.app, section.request, section.records
    listings = listed_most(app.captures, records, request.limit or 1)
    lines = [f"The captured {app.pages_of(records)} {len(records)} records; applied: "
             f"{request.order.value}, the first {len(listings)}:", ""]
    lines += [f"- {describe_listing(listing)}" for listing in listings]
    return lines, None


def _asks_records(section: Section) -> bool:
    records = section.records
    return bool(records) and (not any(item.values for item in section.matches) or bool(section.request.filters)
                              or (section.several and bool(_naming_the_term(records, (), section.sections)[1])))


def _records(section: Section) -> _Body:
    """Pages that are lists of records, where what matched the question's words is a label (a tab,
    a heading) or nothing, or the question filters them (dates, prices, times of day), or asks
    which of them are of a kind only some name ("which video memberships"): the records are the
    answer, every one with all its fields, those under the heading the question names and those
    naming the search term when only some do, filtered and ordered as it asks."""
    app, request = section.app, section.request
    records, under = in_named_section(app.captures, section.records, section.question)
    records, named = _naming_the_term(records, section.search_terms, section.sections)
    kept, said = select_records(records, request, section.today)
    said = [*under, *named, *said]
    applied = f"; applied: {'; '.join(said)}" if said else ""
    lines = [f"The captured {app.pages_of(records)} {len(records)} "
             f"record{'s' if len(records) != 1 else ''}, each with all its fields{applied}"
             f" ({len(kept)} shown):", ""]
    lines += _record_lines(kept, request) or ["- no record passes the question's filters"]
    return lines, None


def _has_matches(section: Section) -> bool:
    return bool(section.matches) or section.listing is not None


def _best_matches(section: Section) -> _Body:
    """Items matching the question's words (a product, a post's author, a store), each with its
    values and lines; and a captured page that is itself the answer (titled by what the question
    asks for, or by its best match: a permissions page), listed as it shows it, or with the
    question's filters, order and count applied ("just the cheapest one", "only the names")."""
    app, request, listing, today = section.app, section.request, section.listing, section.today
    lines: list[str] = []
    others = [item for item in section.matches if listing is None or item is not listing[0]]
    if len(others) >= 2 and request.shaped:
        others, said = select_records(others, request, today)
        lines += [f"Best-matching items on the captured pages ({'; '.join(said) or 'as shown'}):", ""]
        lines += [f"- {describe_record(item, request)}" for item in others] or ["- none passes the filters"]
    elif others:
        # Each with its lines: under a post's author or a question, they are what it says.
        lines += ["Best-matching items on the captured pages:", ""]
        for item in others:
            lines += [f"- {_describe_item(item)}", *_cited_lines(item)]
    if listing is not None:
        title, items = listing
        lines += [""] if others else []
        count = f"{len(items)} item{'s' if len(items) != 1 else ''}"
        if request.shaped:
            # "Just the cheapest one", "only the names", "under $10": the listing is the
            # answer once the question's filters, order and count are applied to it.
            # They apply to the page's records when it has some: "the top 5" counts songs,
            # not the caption over them.
            records = _among(items, find_records(app.captures, app.items, suggested=section.suggested))
            if records:
                count = f"{len(records)} record{'s' if len(records) != 1 else ''}"
            kept, said = select_records(records or items, request, today)
            lines += [f"The page **{cell(title.name)}** {cite_name(title)} lists {count}; "
                      f"applied: {'; '.join(said) or 'nothing (no field to apply it to)'} "
                      f"({len(kept)} shown):", ""]
            lines += _listed_lines(kept, request) or ["- none passes the filters"]
        else:
            lines += [f"The page **{cell(title.name)}** {cite_name(title)} lists "
                      f"({count}, top to bottom):", ""]
            # The heading's own lines first: a post's text under its author's name.
            lines += _cited_lines(title, bullet="- ")
            lines += [line for item in items for line in _as_shown(item)]
    return lines, None


def _subjects(section: Section) -> list[Item]:
    return [item for item in section.app.items if item.page and item.values]


def _has_subject(section: Section) -> bool:
    return bool(_subjects(section))


def _page_subject(section: Section) -> _Body:
    """A details page whose own subject no word of the question names ("a dessert", the page of
    one): the copilot judged it the answer, so its subject and values are stated."""
    lines = ["No line on the captured pages names the question's words; the page the copilot "
             "judged the answer is about:", ""]
    lines += [f"- {describe_record(item, section.request)}" for item in _subjects(section)[:ITEMS_PER_APP]]
    return lines, None


def _always(section: Section) -> bool:
    return True


def _page_dump(section: Section) -> _Body:
    """Nothing on the captured pages matches the question's words: the copilot judged these pages
    the answer, and without a model to read them they are shown top to bottom, every line cited,
    and marked as copying pages (never scored as an answer)."""
    lines = ["No line on the captured pages matches the question's words. "
             "What the captured pages say, top to bottom:", ""]
    start = len(lines)
    for capture in section.app.captures:
        lines += _page_text(capture)
    return lines, LineSpan(start=start, end=len(lines))


# The strategies, in the order they are tried; the first that applies writes the section.
STRATEGIES: tuple[SectionStrategy, ...] = (
    SectionStrategy("no_capture", _captured_nothing, _no_capture),
    SectionStrategy("most_frequent", _asks_most_frequent, _most_frequent),
    SectionStrategy("records", _asks_records, _records),
    SectionStrategy("best_matches", _has_matches, _best_matches),
    SectionStrategy("page_subject", _has_subject, _page_subject),
    SectionStrategy("page_dump", _always, _page_dump),
)


def write_app_section(section: Section) -> tuple[list[str], LineSpan | None, str]:
    """The app's lines, the span of them that copies its pages (relative to the section), and the
    name of the strategy that wrote its body."""
    app = section.app
    status = app.status.status if app.status else SubTaskStatus.COMPLETED
    lines = [f"## {cell(app.label)} ({_STATUS_WORDS.get(status, status.value)})", ""]
    if app.status and app.status.reason and status is not SubTaskStatus.COMPLETED:
        lines += [f"Why: {cell(app.status.reason)}", ""]
    if app.captures:
        lines += _named_rows(app, section.terms, section.sections)
    strategy = next(s for s in STRATEGIES if s.applies(section))
    body, dump = strategy.write(section)
    offset = len(lines)
    lines += [*body, ""]
    span = None if dump is None else LineSpan(start=offset + dump.start, end=offset + dump.end)
    return lines, span, strategy.name


def _describe_item(item: Item) -> str:
    parts = [f"**{cell(item.name)}** {cite_name(item)}"]
    seen: set[MeasureKind] = set()
    for value in item.values:
        if value.kind in seen:
            continue
        seen.add(value.kind)
        parts.append(f"{value.kind.value.lower()} {cell(value.text)} {cite(item, value)}")
    return ", ".join(parts)


def _as_shown(item: Item) -> list[str]:
    """An item of a page that is itself the answer, as the page shows it: its whole text (values
    in place: a rule's line stating the least fee), the values it was given from other lines, then its lines."""
    text = item.label or item.name
    shown = text if len(text) <= _LINE_CHARS else text[:_LINE_CHARS] + "…"
    parts = [f"**{cell(shown)}** {format_citation(item.capture_id, text)}"]
    parts += [f"{v.kind.value.lower()} {cell(v.text)} {cite(item, v)}"
              for v in item.values if v.span not in text]
    return [f"- {', '.join(parts)}", *_cited_lines(item)]


def _cited_lines(item: Item, bullet: str = "  - ") -> list[str]:
    """The item's own lines, each a bullet citing itself."""
    return [f"{bullet}{cell(line)} {format_citation(item.capture_id, line)}" for line in item.lines]


def _named_rows(app: AppItems, terms: QueryTerms, sections: Sequence[str]) -> list[str]:
    """The rows of the app's pages whose label the question names, each cited, label and value."""
    rows = find_named_rows(app.captures, terms, sections)
    if not rows:
        return []
    lines = ["Rows the question names, as the pages show them:", ""]
    lines += [f"- **{cell(r.label)}**: {cell(r.value)} {format_citation(r.capture_id, r.label)} "
              f"{format_citation(r.capture_id, r.value)}" for r in rows]
    return [*lines, ""]


def _among(items: Sequence[Item], records: Sequence[Item]) -> list[Item]:
    """The items that are records (same page, same name box), in the items' order."""
    boxes = {(r.capture_id, r.name_box) for r in records}
    return [i for i in items if (i.capture_id, i.name_box) in boxes]


def _shows_more_than(items: Sequence[Item], records: Sequence[Item]) -> bool:
    """Whether a page's items hold content besides its records: a paragraph or lines of its own
    (the refund rules above the questions and answers), not only headers and tabs."""
    boxes = {(r.capture_id, r.name_box) for r in records}
    return any((i.capture_id, i.name_box) not in boxes and (i.lines or len(i.label or i.name) > _ENTRY_CHARS)
               for i in items)


def _naming_the_term(records: list[Item], search_terms: Sequence[str],
                     sections: Sequence[str] = ()) -> tuple[list[Item], list[str]]:
    """The records naming one of the plan's search terms, when some do and others do not (the
    "自动充值" rows of a list of top-ups), else those whose name names a concept the question asks
    for, in any language (a bill named by a ride-hailing payee among the bills, for a taxi ride), and what was applied; else all."""
    for term in search_terms:
        folded = term.casefold()
        naming = [r for r in records if folded in " ".join([r.name, *r.lines, *(v.quote for v in r.values)]).casefold()]
        if 0 < len(naming) < len(records):
            return naming, [f"naming {term!r}"]
    for concept in (load_lexicon().concepts[c] for c in sections):
        # By its name: a post that mentions a cinema in passing is no more about films than the
        # others under the same film, and a bill is named by its payee (a ride-hailing service's name).
        naming = [r for r in records if match_concept(record_fields(r)[0], concept)]
        if 0 < len(naming) < len(records):
            return naming, [f"naming {concept.labels[0]!r}"]
    return records, []


def _record_lines(records: Sequence[Item], request: AnswerRequest) -> list[str]:
    if request.format is not AnswerFormat.TABLE:
        return [f"- {describe_record(item, request)}" for item in records]
    rows = ["| Record | Details |", "|---|---|"]
    for item in records:
        fields = record_fields(item)
        rows.append(f"| {cell(fields[0])} {cite_name_in_table(item)} | "
                    f"{' · '.join(cell(f) for f in fields[1:])} |")
    return rows


def _listed_lines(items: Sequence[Item], request: AnswerRequest) -> list[str]:
    """A page listing's items as the question asks: names only, a table, or each with its values."""
    if request.format is AnswerFormat.NAMES:
        return [f"- {describe_record(item, request)}" for item in items]
    if request.format is not AnswerFormat.TABLE:
        return [f"- {_describe_item(item)}" for item in items]
    rows = ["| Item | Details |", "|---|---|"]
    for item in items:
        shown = dict.fromkeys(f"{v.kind.value.lower()} {cell(v.text)} {cite(item, v)}" for v in item.values)
        rows.append(f"| {cell(item.name)} {cite_name_in_table(item)} | {' · '.join(shown)} |")
    return rows


def _page_text(capture: Capture) -> list[str]:
    """The page under its title in reading order, each line cited (long ones shortened)."""
    texts = [e for e in dedupe_elements(capture.elements) if e.text.strip()]
    title = next((e for e in texts if capture.title and same_text(e.label, capture.title)), None)
    below = [e for e in texts if title is None or (e is not title and e.bounds.top >= title.bounds.top)]
    heading = f"**{cell(capture.title)}** {format_citation(capture.id, title.label)}" if title else ""
    lines = [f"- {heading}"] if heading else []
    for element in below[:_PAGE_LINES]:
        shown = element.label if len(element.label) <= _LINE_CHARS else element.label[:_LINE_CHARS] + "…"
        lines.append(f"  - {cell(shown)} {format_citation(capture.id, element.label)}")
    if len(below) > _PAGE_LINES:
        lines.append(f"  - … {len(below) - _PAGE_LINES} more lines on the capture")
    return lines
