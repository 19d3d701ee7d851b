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
from dataclasses import dataclass
from datetime import date

from pydantic import BaseModel, ConfigDict

from droidretriever.models import AppStatus, Capture, LineSpan, PageMode, Query, SubTaskStatus
from inference.rules import find_goal_concepts, load_lexicon, match_concept
from inference.rules.asks import AnswerFormat, AnswerRequest, Order, read_answer_request
from inference.rules.decomposer import choose_page_mode
from tasks.synthesis.citations import format_citation
from tasks.synthesis.items import (
    Item,
    ItemValue,
    QueryTerms,
    dedupe_elements,
    detect_items,
    read_query_terms,
)
from tasks.synthesis.records import (
    SUGGESTIONS,
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
_TABLE_KINDS = (
    MeasureKind.PRICE, MeasureKind.ORIGINAL_PRICE, MeasureKind.SALES, MeasureKind.DELIVERY_TIME,
    MeasureKind.DELIVERY_FEE, MeasureKind.MIN_ORDER, MeasureKind.RATING, MeasureKind.REVIEWS,
    MeasureKind.DISTANCE, MeasureKind.PROMOTION, MeasureKind.GIFT, MeasureKind.PAYMENT_DISCOUNT,
    MeasureKind.MEMBER_DISCOUNT, MeasureKind.TRADE_IN,
)
# What a page says for everything on it: a dish on a store page has the store's delivery time.
_PAGE_KINDS = frozenset({
    MeasureKind.DELIVERY_TIME, MeasureKind.DELIVERY_FEE, MeasureKind.MIN_ORDER, MeasureKind.RATING,
    MeasureKind.DISTANCE, MeasureKind.PROMOTION, MeasureKind.GIFT, MeasureKind.PAYMENT_DISCOUNT,
    MeasureKind.MEMBER_DISCOUNT, MeasureKind.TRADE_IN,
})
_FROM_PAGE = "†"
# Which way is better, for the one-line verdicts under the table.
_LOWER_IS_BETTER = {MeasureKind.PRICE: "Lowest price", MeasureKind.DELIVERY_TIME: "Fastest delivery",
                    MeasureKind.DELIVERY_FEE: "Lowest delivery fee"}
_HIGHER_IS_BETTER = {MeasureKind.RATING: "Highest rating", MeasureKind.SALES: "Most sales"}
_ITEMS_PER_APP = 5
_ENTRY_CHARS = 24  # a header's or a tab's text is short; longer texts are content
_LISTED_ITEMS = 30  # rows of a page that is itself the answer (a list of permissions, of mails)
_PAGE_LINES = 20  # lines of a captured page shown when no line matches the question's words
_LINE_CHARS = 160
_BAR_ITEMS = 3  # items a page's bar holds above its heading: back, title, one action
_STATUS_WORDS = {
    SubTaskStatus.COMPLETED: "completed",
    SubTaskStatus.NEEDS_USER: "needs a person",
    SubTaskStatus.FAILED: "failed",
    SubTaskStatus.BUDGET_EXHAUSTED: "ran out of steps",
    SubTaskStatus.PENDING: "not started",
    SubTaskStatus.RUNNING: "stopped before finishing",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _cite(item: Item, value: ItemValue) -> str:
    return format_citation(item.capture_id, value.quote)


def _cite_name(item: Item) -> str:
    return format_citation(item.capture_id, item.name_quote)


def _segment(quote: str, part: str) -> str:
    """The piece of a card's ``a | b | c`` text that holds ``part`` (its first piece if none)."""
    pieces = [p.strip() for p in quote.split("|") if p.strip()]
    return next((p for p in pieces if part and part in p), pieces[0] if pieces else quote)


# In a table cell a "|" ends the cell, and escaping it inside a citation would spoil the
# quote, so a table cites the piece of a card's text that holds the value.
def _cite_in_table(item: Item, value: ItemValue) -> str:
    quote = value.quote if "|" not in value.quote else _segment(value.quote, value.span)
    return format_citation(item.capture_id, quote)


def _cite_name_in_table(item: Item) -> str:
    quote = item.name_quote if "|" not in item.name_quote else _segment(item.name_quote, "")
    return format_citation(item.capture_id, quote)


class _App:
    def __init__(self, label: str, package: str, status: AppStatus | None) -> None:
        self.label = label
        self.package = package
        self.status = status
        self.captures: list[Capture] = []
        self.items: list[Item] = []

    @property
    def matches(self) -> list[Item]:
        best = max((i.relevance for i in self.items), default=0.0)
        if best <= 0.0:
            return []
        # Keep items close to the best match; order: most relevant, a page's own subject, most values.
        kept = [i for i in self.items if i.relevance >= 0.5 * best]
        return sorted(kept, key=lambda i: (-i.relevance, not i.page, -len(i.values)))[:_ITEMS_PER_APP]

    def page_listing(self) -> tuple[Item, list[Item]] | None:
        """When the best match is the title of a captured page, that page is the answer: its items.

        "Which permissions does Meituan have?" matches the page titled "App permissions";
        the permissions themselves are rows under it that share no word with the question.
        A title with values of its own (a price) names a product, and its page is that
        product's details, already described with the item.
        """
        matches = self.matches
        if not matches or matches[0].values:
            return None
        title = matches[0]
        capture = next((c for c in self.captures if c.id == title.capture_id), None)
        if capture is None or not capture.title or not (
                _same_text(title.name, capture.title) or self._heads_its_page(title, capture)):
            return None
        return self._listed_under(title, exclude=matches)

    def _heads_its_page(self, title: Item, capture: Capture) -> bool:
        """Whether ``title`` is the heading under the page's bar: a question page's question, with
        its answers below ("问题" in the bar, the question the person asked as the heading)."""
        above = [i for i in self.items if i.capture_id == title.capture_id and i is not title
                 and i.name_box.bottom <= title.name_box.top]
        return any(_same_text(i.name, capture.title) for i in above) and len(above) <= _BAR_ITEMS

    def _listed_under(self, title: Item, exclude: Sequence[Item] = ()) -> tuple[Item, list[Item]] | None:
        """The page under ``title`` as a listing: its items below the title (at least two)."""
        below = [i for i in self.items if i.capture_id == title.capture_id and i is not title
                 and i.name_box.top >= title.name_box.bottom and i not in exclude]
        return (title, below[:_LISTED_ITEMS]) if len(below) >= 2 else None

    def concept_listing(self, sections: Sequence[str]) -> tuple[Item, list[Item]] | None:
        """A captured page whose title names a concept the question asks for is the answer: its items.

        "Check the ticket refund policy" in English, the page titled "退改签说明" in Chinese: no word
        is shared, the lexicon's refund concept is. Its rules and questions are listed as the page
        shows them, each cited.
        """
        concepts = [load_lexicon().concepts[c] for c in sections]
        if not concepts:
            return None
        for capture in self.captures:
            if not capture.title or not any(match_concept(capture.title, c) for c in concepts):
                continue
            title = next((i for i in self.items if i.capture_id == capture.id
                          and _same_text(i.name, capture.title)), None)
            listing = self._listed_under(title) if title is not None else None
            if listing is not None:
                return listing
        return None

    def pages_of(self, records: Sequence[Item]) -> str:
        """What lists ``records``, as the intro names it: the page by its cited title when they are
        all on one titled page ("page **账单** [..] lists"), else "page lists" / "pages list"."""
        ids = {r.capture_id for r in records}
        capture = next((c for c in self.captures if c.id in ids), None) if len(ids) == 1 else None
        title = next((i for i in self.items if capture is not None and capture.title
                      and i.capture_id == capture.id and _same_text(i.name, capture.title)), None)
        if title is not None:
            return f"page **{_cell(title.name)}** {_cite_name(title)} lists"
        return "pages list" if len(self.captures) > 1 else "page lists"

    def answer(self) -> _Answer | None:
        """The best-matching item that shows a comparable value, with its page's header."""
        for item in self.matches:
            if any(v.kind in _TABLE_KINDS for v in item.values):
                # A page header with a price of its own is another product (the item is a
                # recommendation on its page): its offers are not the item's.
                page = next((i for i in self.items if i.page and i.capture_id == item.capture_id
                             and i is not item and i.value(MeasureKind.PRICE) is None), None)
                return _Answer(self, item, page)
        return None


@dataclass(frozen=True)
class _Answer:
    """One app's column of the comparison table."""

    app: _App
    item: Item
    page: Item | None  # the page's subject (a store), when the item is something on it

    def cell(self, kind: MeasureKind) -> tuple[Item, ItemValue] | None:
        """The item's own value of ``kind``, else the page header's for page-wide kinds."""
        value = self.item.value(kind)
        if value is not None:
            return self.item, value
        if self.page is not None and kind in _PAGE_KINDS:
            page_value = self.page.value(kind)
            if page_value is not None:
                return self.page, page_value
        return None


def _same_text(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def _group_apps(captures: Sequence[Capture], apps: Sequence[AppStatus],
                terms: QueryTerms) -> list[_App]:
    grouped: dict[str, _App] = {a.package: _App(a.app_label, a.package, a) for a in apps}
    for capture in captures:
        app = grouped.setdefault(capture.package, _App(capture.package, capture.package, None))
        app.captures.append(capture)
        app.items.extend(detect_items(capture, terms))
    return list(grouped.values())


def _describe_item(item: Item) -> str:
    parts = [f"**{_cell(item.name)}** {_cite_name(item)}"]
    seen: set[MeasureKind] = set()
    for value in item.values:
        if value.kind in seen:
            continue
        seen.add(value.kind)
        parts.append(f"{value.kind.value.lower()} {_cell(value.text)} {_cite(item, value)}")
    return ", ".join(parts)


def _as_shown(item: Item) -> list[str]:
    """An item of a page that is itself the answer, as the page shows it: its whole text (values
    in place, "退票费最低按2元计收"), the values it was given from other lines, then its lines."""
    text = item.label or item.name
    shown = text if len(text) <= _LINE_CHARS else text[:_LINE_CHARS] + "…"
    parts = [f"**{_cell(shown)}** {format_citation(item.capture_id, text)}"]
    parts += [f"{v.kind.value.lower()} {_cell(v.text)} {_cite(item, v)}"
              for v in item.values if v.span not in text]
    return [f"- {', '.join(parts)}", *_cited_lines(item)]


def _cited_lines(item: Item, bullet: str = "  - ") -> list[str]:
    """The item's own lines, each a bullet citing itself."""
    return [f"{bullet}{_cell(line)} {format_citation(item.capture_id, line)}" for line in item.lines]


def _comparison(apps: list[_App]) -> list[str]:
    answers = [a for app in apps if (a := app.answer()) is not None]
    if len(answers) < 2:
        return []
    answered = {k: sum(1 for a in answers if a.cell(k)) for k in _TABLE_KINDS}
    if max(answered.values()) < 2:
        return []  # nothing two apps both show: no comparison to draw
    kinds = [k for k in _TABLE_KINDS if answered[k] >= 1]
    lines = ["## Comparison", "",
             "| | " + " | ".join(_cell(a.app.label) for a in answers) + " |",
             "|---|" + "---|" * len(answers),
             "| Item | " + " | ".join(f"{_cell(a.item.name)} {_cite_name_in_table(a.item)}"
                                     for a in answers) + " |"]
    borrowed: dict[str, _Answer] = {}
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
            cells.append(f"{_cell(value.text)} {_cite_in_table(owner, value)}{mark}")
        lines.append(f"| {kind.value} | " + " | ".join(cells) + " |")
    lines.append("")
    if borrowed:
        pages = "; ".join(f"{_cell(label)}: {_cell(a.page.name)} {_cite_name(a.page)}"
                          for label, a in borrowed.items() if a.page is not None)
        lines += [f"{_FROM_PAGE} Stated by the page the item is on, for everything on it ({pages}).", ""]
    lines.extend(_verdicts(answers, kinds))
    return lines


def _verdicts(answers: list[_Answer], kinds: list[MeasureKind]) -> list[str]:
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
        names = " and ".join(f"{app.label} ({_cell(v.text)} {_cite(item, v)})"
                             for app, item, v in winners)
        tie = " (tie)" if len(winners) > 1 else ""
        verdicts.append(f"- {title}: {names}{tie}")
    return [*verdicts, ""] if verdicts else []


class ExtractiveMarkdown(BaseModel):
    """The extractive report body, and which of its lines copy captured pages (not an answer)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    markdown: str
    page_dumps: tuple[LineSpan, ...] = ()


def _named_rows(app: _App, terms: QueryTerms, sections: Sequence[str]) -> list[str]:
    """The rows of the app's pages whose label the question names, each cited, label and value."""
    rows = find_named_rows(app.captures, terms, sections)
    if not rows:
        return []
    lines = ["Rows the question names, as the pages show them:", ""]
    lines += [f"- **{_cell(r.label)}**: {_cell(r.value)} {format_citation(r.capture_id, r.label)} "
              f"{format_citation(r.capture_id, r.value)}" for r in rows]
    return [*lines, ""]


def _app_section(app: _App, request: AnswerRequest, today: date | None,
                 terms: QueryTerms, sections: Sequence[str],
                 search_terms: Sequence[str] = (), several: bool = False,
                 suggested: bool = False, question: str = "") -> tuple[list[str], LineSpan | None]:
    """The app's lines, and the span of them that copies its pages (relative to the section).
    ``several``: the question asks for a list of things ("which", "有哪些"), not one of them;
    ``suggested``: it asks for the app's suggestions ("what does it recommend"); ``question``: its
    words, which may name the heading of one of a page's lists ("一生必看的电影")."""
    status = app.status.status if app.status else SubTaskStatus.COMPLETED
    lines = [f"## {_cell(app.label)} ({_STATUS_WORDS.get(status, status.value)})", ""]
    dump: LineSpan | None = None
    if app.status and app.status.reason and status is not SubTaskStatus.COMPLETED:
        lines += [f"Why: {_cell(app.status.reason)}", ""]
    if not app.captures:
        lines += ["No screen was captured in this app.", ""]
        return lines, dump
    lines += _named_rows(app, terms, sections)
    matches = app.matches
    listing = app.page_listing()
    records = find_records(app.captures, app.items, suggested=suggested) if listing is None else []
    if listing is None and not any(item.values for item in matches) and not (records and request.shaped):
        # A page titled by what the question asks for is listed whole, as it shows it (the rules
        # and the questions under them), unless its records are all it shows, or the question
        # filters or shapes them ("last month", "as a table").
        titled = app.concept_listing(sections)
        if titled is not None and (not records or _shows_more_than(titled[1], records)):
            listing, records = titled, []
    if records and request.order is Order.MOST_FREQUENT:
        # "The movies that appear most often across the charts": what the page's lists name
        # most, each with every list naming it.
        listings = listed_most(app.captures, records, request.limit or 1)
        lines += [f"The captured {app.pages_of(records)} {len(records)} records; applied: "
                  f"{request.order.value}, the first {len(listings)}:", ""]
        lines += [f"- {describe_listing(listing)}" for listing in listings]
    elif records and (not any(item.values for item in matches) or request.filters
                      or (several and _naming_the_term(records, (), sections)[1])):
        # The pages are lists of records, and what matched the question's words is a label
        # (a tab, a heading) or nothing, or the question filters (dates, prices, times of day),
        # or it asks which of them are of a kind only some name ("which video memberships"):
        # the records are the answer, those naming the search term when only some do.
        records, under = in_named_section(app.captures, records, question)
        records, named = _naming_the_term(records, search_terms, sections)
        kept, said = select_records(records, request, today)
        said = [*under, *named, *said]
        applied = f"; applied: {'; '.join(said)}" if said else ""
        lines += [f"The captured {app.pages_of(records)} {len(records)} "
                  f"record{'s' if len(records) != 1 else ''}, each with all its fields{applied}"
                  f" ({len(kept)} shown):", ""]
        lines += _record_lines(kept, request) or ["- no record passes the question's filters"]
    elif matches or listing is not None:
        others = [item for item in matches if listing is None or item is not listing[0]]
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
                records = _among(items, find_records(app.captures, app.items, suggested=suggested))
                if records:
                    count = f"{len(records)} record{'s' if len(records) != 1 else ''}"
                kept, said = select_records(records or items, request, today)
                lines += [f"The page **{_cell(title.name)}** {_cite_name(title)} lists {count}; "
                          f"applied: {'; '.join(said) or 'nothing (no field to apply it to)'} "
                          f"({len(kept)} shown):", ""]
                lines += _listed_lines(kept, request) or ["- none passes the filters"]
            else:
                lines += [f"The page **{_cell(title.name)}** {_cite_name(title)} lists "
                          f"({count}, top to bottom):", ""]
                # The heading's own lines first: a post's text under its author's name.
                lines += _cited_lines(title, bullet="- ")
                lines += [line for item in items for line in _as_shown(item)]
    elif subjects := [item for item in app.items if item.page and item.values]:
        # A details page whose own subject no word of the question names ("a dessert", the page
        # of one): the copilot judged it the answer, so its subject and values are stated.
        lines += ["No line on the captured pages names the question's words; the page the copilot "
                  "judged the answer is about:", ""]
        lines += [f"- {describe_record(item, request)}" for item in subjects[:_ITEMS_PER_APP]]
    else:
        # The copilot judged these pages the answer; without a model to read them, show them.
        lines += ["No line on the captured pages matches the question's words. "
                  "What the captured pages say, top to bottom:", ""]
        start = len(lines)
        for capture in app.captures:
            lines += _page_text(capture)
        dump = LineSpan(start=start, end=len(lines))
    lines.append("")
    return lines, dump


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
    for, in any language ("高德打车" among the bills for a taxi ride), and what was applied; else all."""
    for term in search_terms:
        folded = term.casefold()
        naming = [r for r in records if folded in " ".join([r.name, *r.lines, *(v.quote for v in r.values)]).casefold()]
        if 0 < len(naming) < len(records):
            return naming, [f"naming {term!r}"]
    for concept in (load_lexicon().concepts[c] for c in sections):
        # By its name: a post that mentions a cinema in passing is no more about films than the
        # others under the same film, and a bill is named by its payee ("高德打车").
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
        rows.append(f"| {_cell(fields[0])} {_cite_name_in_table(item)} | "
                    f"{' · '.join(_cell(f) for f in fields[1:])} |")
    return rows


def _listed_lines(items: Sequence[Item], request: AnswerRequest) -> list[str]:
    """A page listing's items as the question asks: names only, a table, or each with its values."""
    if request.format is AnswerFormat.NAMES:
        return [f"- {describe_record(item, request)}" for item in items]
    if request.format is not AnswerFormat.TABLE:
        return [f"- {_describe_item(item)}" for item in items]
    rows = ["| Item | Details |", "|---|---|"]
    for item in items:
        shown = dict.fromkeys(f"{v.kind.value.lower()} {_cell(v.text)} {_cite(item, v)}" for v in item.values)
        rows.append(f"| {_cell(item.name)} {_cite_name_in_table(item)} | {' · '.join(shown)} |")
    return rows


def _page_text(capture: Capture) -> list[str]:
    """The page under its title in reading order, each line cited (long ones shortened)."""
    texts = [e for e in dedupe_elements(capture.elements) if e.text.strip()]
    title = next((e for e in texts if capture.title and _same_text(e.label, capture.title)), None)
    below = [e for e in texts if title is None or (e is not title and e.bounds.top >= title.bounds.top)]
    heading = f"**{_cell(capture.title)}** {format_citation(capture.id, title.label)}" if title else ""
    lines = [f"- {heading}"] if heading else []
    for element in below[:_PAGE_LINES]:
        shown = element.label if len(element.label) <= _LINE_CHARS else element.label[:_LINE_CHARS] + "…"
        lines.append(f"  - {_cell(shown)} {format_citation(capture.id, element.label)}")
    if len(below) > _PAGE_LINES:
        lines.append(f"  - … {len(below) - _PAGE_LINES} more lines on the capture")
    return lines


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
    grouped = _group_apps(captures, apps, terms)
    request = read_answer_request(query.text)
    sections = find_goal_concepts(query.text).targets  # "specs": the rows under 规格参数
    several = choose_page_mode(query.text)[0] is PageMode.LIST_VIEW
    suggested = SUGGESTIONS.search(query.text.casefold()) is not None
    lines = [f"# {_cell(query.text)}", "", EXTRACTIVE_BANNER, ""]
    lines += _comparison(grouped)
    dumps: list[LineSpan] = []
    for app in grouped:
        section, dump = _app_section(app, request, today, terms, sections, search_terms, several, suggested,
                                     query.text)
        if dump is not None and dump.end > dump.start:
            dumps.append(LineSpan(start=len(lines) + dump.start, end=len(lines) + dump.end))
        lines += section
    return ExtractiveMarkdown(markdown="\n".join(lines).rstrip() + "\n", page_dumps=tuple(dumps))


def write_extractive_markdown(
    query: Query,
    captures: Sequence[Capture],
    apps: Sequence[AppStatus] = (),
    search_terms: Sequence[str] = (),
) -> str:
    """The Markdown of :func:`write_extractive` alone."""
    return write_extractive(query, captures, apps, search_terms).markdown
