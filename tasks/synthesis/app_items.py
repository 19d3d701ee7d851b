"""The captured items of one app, as the extractive report reads them (no model).

:class:`AppItems` holds an app's captures and the items found on them
(:mod:`tasks.synthesis.items`): the items best matching the question, the listing of a page that
is itself the answer (a page titled by what the question asks for, or whose title is the best
match), and the app's answer for a comparison table (:class:`Answer`: its best-matching item with
a comparable value, and the page header that states page-wide values for it). The citation helpers
quote what an element shows, so every citation grounds exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.models import AppStatus, Capture
from inference.rules import load_lexicon, match_concept
from tasks.synthesis.citations import format_citation
from tasks.synthesis.items import Item, ItemValue, QueryTerms, detect_items
from tasks.synthesis.values import MeasureKind

__all__ = [
    "ITEMS_PER_APP",
    "TABLE_KINDS",
    "Answer",
    "AppItems",
    "cell",
    "cite",
    "cite_in_table",
    "cite_name",
    "cite_name_in_table",
    "group_apps",
    "same_text",
]

TABLE_KINDS = (
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
ITEMS_PER_APP = 5
_LISTED_ITEMS = 30  # rows of a page that is itself the answer (a list of permissions, of mails)
_BAR_ITEMS = 3  # items a page's bar holds above its heading: back, title, one action


def cell(text: str) -> str:
    """``text`` for a Markdown table cell or bullet: its "|" escaped, on one line."""
    return text.replace("|", "\\|").replace("\n", " ")


def cite(item: Item, value: ItemValue) -> str:
    """The citation of ``value``: the element it was read from, quoted."""
    return format_citation(item.capture_id, value.quote)


def cite_name(item: Item) -> str:
    """The citation of ``item``'s name: the element it was read from, quoted."""
    return format_citation(item.capture_id, item.name_quote)


def _segment(quote: str, part: str) -> str:
    """The piece of a card's ``a | b | c`` text that holds ``part`` (its first piece if none)."""
    pieces = [p.strip() for p in quote.split("|") if p.strip()]
    return next((p for p in pieces if part and part in p), pieces[0] if pieces else quote)


# In a table cell a "|" ends the cell, and escaping it inside a citation would spoil the
# quote, so a table cites the piece of a card's text that holds the value.
def cite_in_table(item: Item, value: ItemValue) -> str:
    """:func:`cite` for a table cell: a card's piece that holds the value, never its "|"."""
    quote = value.quote if "|" not in value.quote else _segment(value.quote, value.span)
    return format_citation(item.capture_id, quote)


def cite_name_in_table(item: Item) -> str:
    """:func:`cite_name` for a table cell: the first piece of a card's text."""
    quote = item.name_quote if "|" not in item.name_quote else _segment(item.name_quote, "")
    return format_citation(item.capture_id, quote)


class AppItems:
    """One app's captures and the items found on them, with its status (None: not in the plan)."""

    def __init__(self, label: str, package: str, status: AppStatus | None) -> None:
        self.label = label
        self.package = package
        self.status = status
        self.captures: list[Capture] = []
        self.items: list[Item] = []

    @property
    def matches(self) -> list[Item]:
        """The items close to the best match of the question (at least half its relevance), best
        first: most relevant, a page's own subject, most values; five at most."""
        best = max((i.relevance for i in self.items), default=0.0)
        if best <= 0.0:
            return []
        # Keep items close to the best match; order: most relevant, a page's own subject, most values.
        kept = [i for i in self.items if i.relevance >= 0.5 * best]
        return sorted(kept, key=lambda i: (-i.relevance, not i.page, -len(i.values)))[:ITEMS_PER_APP]

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
                same_text(title.name, capture.title) or self._heads_its_page(title, capture)):
            return None
        return self._listed_under(title, exclude=matches)

    def _heads_its_page(self, title: Item, capture: Capture) -> bool:
        """Whether ``title`` is the heading under the page's bar: a question page's question, with
        its answers below ("问题" in the bar, the question the person asked as the heading)."""
        above = [i for i in self.items if i.capture_id == title.capture_id and i is not title
                 and i.name_box.bottom <= title.name_box.top]
        return any(same_text(i.name, capture.title) for i in above) and len(above) <= _BAR_ITEMS

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
                          and same_text(i.name, capture.title)), None)
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
                      and i.capture_id == capture.id and same_text(i.name, capture.title)), None)
        if title is not None:
            return f"page **{cell(title.name)}** {cite_name(title)} lists"
        return "pages list" if len(self.captures) > 1 else "page lists"

    def answer(self) -> Answer | None:
        """The best-matching item that shows a comparable value, with its page's header."""
        for item in self.matches:
            if any(v.kind in TABLE_KINDS for v in item.values):
                # A page header with a price of its own is another product (the item is a
                # recommendation on its page): its offers are not the item's.
                page = next((i for i in self.items if i.page and i.capture_id == item.capture_id
                             and i is not item and i.value(MeasureKind.PRICE) is None), None)
                return Answer(self, item, page)
        return None


@dataclass(frozen=True)
class Answer:
    """One app's column of the comparison table."""

    app: AppItems
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


def same_text(a: str, b: str) -> bool:
    """Whether two texts are the same but for case and spacing."""
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def group_apps(captures: Sequence[Capture], apps: Sequence[AppStatus],
               terms: QueryTerms) -> list[AppItems]:
    """The apps of the plan (and of any capture) with their captures and items, in plan order."""
    grouped: dict[str, AppItems] = {a.package: AppItems(a.app_label, a.package, a) for a in apps}
    for capture in captures:
        app = grouped.setdefault(capture.package, AppItems(capture.package, capture.package, None))
        app.captures.append(capture)
        app.items.extend(detect_items(capture, terms))
    return list(grouped.values())
