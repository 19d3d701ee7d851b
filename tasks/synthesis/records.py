"""The records of a list page, each with all its fields, filtered and shaped as the question asks.

A record is an item of a captured page that carries more than a name: a card
whose texts perception merged (``"天河城 → 广州塔 | 2025-06-22 18:42 · 快车 | ¥21.30"``), or
a name with its lines and values (a ride, a song with its artist, a train with its
times, a specification row). A page with two or more records is a list: when the
copilot judged it the answer, its records are the answer, every one with every
field, then only those passing the question's filters (a price range, a time of
day, dates relative to the phone's clock), in the order and number it asks for
(the cheapest, the top 5), and the report says which filters and order it applied
(:mod:`inference.rules.answer_shape`). Navigation labels, headings and the search box are
no records: one field, no values.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from datetime import date, timedelta
from typing import NamedTuple

from core.models import Capture, UIElement
from core.text import has_cjk
from inference.rules.answer_shape import (
    MAGNITUDE,
    AnswerFormat,
    AnswerRequest,
    CountRange,
    Order,
    read_magnitude,
    record_state,
)
from inference.vocabulary import load_vocabulary
from tasks.synthesis.citations import format_citation
from tasks.synthesis.items import Item, ItemValue, dedupe_elements
from tasks.synthesis.values import MeasureKind, read_measures

__all__ = [
    "SUGGESTIONS",
    "Listing",
    "describe_listing",
    "describe_record",
    "find_records",
    "in_named_section",
    "listed_most",
    "record_fields",
    "select_records",
]

_FIELD_SPLIT = re.compile(r"\s*\|\s*")
_SPACES = re.compile(r"[\s|]+")  # spaces and the "|" joining a card's texts
_MIN_RECORDS = 2
_FIELD_CHARS = 40  # a field of a record (a name, an artist, a route) is shorter than this
_HEADING_CHARS = 24
# A section heading over the app's suggestions, not the page's own records (en, zh, ko, ja).
SUGGESTIONS = re.compile(rf"(?:{load_vocabulary('suggestions').alternation('suggestions')})\W*")
_LINE_GAP = 0.4  # lines of one record sit closer than this share of the shorter line's height
_DATE = re.compile(r"(?<!\d)(20\d\d)[-/.年](\d{1,2})[-/.月](\d{1,2})|(20\d\d)年(\d{1,2})月(?!\d)|"
                   r"(?<![\d-])(\d{1,2})[-/月](\d{1,2})日?(?![\d:])")
_ANY_YEAR = date(2000, 1, 1)  # a leap year: a month range reads a yearless "2月29日" too
_CLOCK = re.compile(r"(?<!\d)([01]?\d|2[0-3]):([0-5]\d)(?!\d)")
# A count as records show it, before or after what it counts: "1.2M followers", "120万粉丝",
# "粉丝 120万", "Likes: 3,400" (its patterns ignore case).
_COUNT_NUMBER = rf"(?<![\d.,])(?P<n>\d+(?:,\d{{3}})*(?:\.\d+)?)\s*(?P<mag>{MAGNITUDE})?"
# A rank a record starts with: "7. 美丽人生", "No.7", "#7", "TOP7".
_RANK = re.compile(r"^\s*(?:no\.?\s*|#\s*|top\s*)?(\d{1,3})(?:[.、):：]|\s|$)", re.IGNORECASE)


def record_fields(item: Item) -> tuple[str, ...]:
    """Every field of ``item``, in reading order: its name's parts, its lines, its values read elsewhere."""
    fields = [f for f in _FIELD_SPLIT.split(item.name) if f]
    # A line repeating the card's fields (its cut copy at a seam of the stitched page) adds none.
    fields += [line for line in item.lines if line not in fields and not set(_FIELD_SPLIT.split(line)) <= set(fields)]
    # A value read from the name's element is a field too when the name no longer shows it (a
    # dish's card "<dish> | 月售<n> · 好评率<n>% | ¥<price>" is named without its sales and price).
    shown = _SPACES.sub("", " ".join(fields))
    fields += [v.text for v in item.values
               if _SPACES.sub("", v.text) not in shown and v.quote not in item.lines]
    return tuple(dict.fromkeys(fields))


def find_records(captures: Sequence[Capture], items: Sequence[Item], *,
                 suggested: bool = False) -> list[Item]:
    """The records of the captured pages: per page, its merged cards or its repeated blocks of lines,
    whichever list is longer; none when a page shows fewer than two. The same record seen twice
    (at a seam of the stitched capture) is listed once. Under a heading of suggestions ("猜你喜欢",
    "You may also like") below the page's own records, the app's suggestions are not the page's
    records (the cart's items are), unless ``suggested``: the question asks for them."""
    records: list[Item] = []
    for capture in captures:
        # A card by its element's whole text: a name that lost its "|" with a value read out of it
        # (a reward "<coupon> | <n> 积分" named "<coupon> <n> 积分") is still a card.
        whole = [_whole_card(capture, i) for i in items if i.capture_id == capture.id and not i.page]
        cards = [c for c in whole if "|" in c.name and len(record_fields(c)) >= 2]
        blocks = _block_records(capture)
        found = cards if len(cards) >= len(blocks) else blocks
        if not suggested:
            found = _above_suggestions(capture, found)
        if len(found) >= _MIN_RECORDS:
            records += found
    # The same fields where a record already stands are that record seen twice at a seam of the
    # stitched page; elsewhere on the page they are another listing of the same thing (a film on
    # two charts).
    unique: list[Item] = []
    placed: dict[tuple[str, tuple[str, ...]], list[Item]] = {}
    for record in records:
        same = placed.setdefault((record.capture_id, record_fields(record)), [])
        if not any(_same_place(record, seen) for seen in same):
            same.append(record)
            unique.append(record)
    return unique


def _same_place(record: Item, other: Item) -> bool:
    a, b = record.name_box, other.name_box
    return abs(a.top - b.top) < max(a.height, b.height, 1)


def in_named_section(captures: Sequence[Capture], records: list[Item],
                     question: str) -> tuple[list[Item], list[str]]:
    """The records under a heading the question names, when a page has several lists under headings
    (one chart among the four of a charts page); and what was applied. Else all of them, nothing said.

    A heading is a short text that is no part of a record and no button; the named heading's
    section runs down to the next heading."""
    wanted = _SPACES.sub("", question).casefold()
    kept: list[Item] = []
    named: list[str] = []
    for capture in captures:
        own = [r for r in records if r.capture_id == capture.id]
        headings = _headings(capture, own)
        chosen = next((h for h in headings if _names_heading(wanted, h.label)), None)
        if chosen is None or not own:
            kept += own
            continue
        below = [h.bounds.top for h in headings if h.bounds.top > chosen.bounds.top]
        end = min(below, default=None)
        section = [r for r in own if r.name_box.top >= chosen.bounds.bottom and (end is None or r.name_box.top < end)]
        if section and len(section) < len(own):
            kept += section
            named.append(f"under {chosen.label.strip()!r}")
        else:
            kept += own
    return kept, list(dict.fromkeys(named))


class Listing(NamedTuple):
    """One thing the records list, and each record listing it with the heading it is under."""

    name: str
    records: tuple[tuple[Item, UIElement | None], ...]


def listed_most(captures: Sequence[Capture], records: Sequence[Item], limit: int) -> list[Listing]:
    """The ``limit`` things the records list most often, most first (ties in reading order): the
    same film on several charts of a page, each listing with the heading of its list."""
    listings: dict[str, list[tuple[Item, UIElement | None]]] = {}
    names: dict[str, str] = {}
    for capture in captures:
        own = [r for r in records if r.capture_id == capture.id]
        headings = _headings(capture, own)
        for record in own:
            name = _unranked(record)
            key = _SPACES.sub("", name).casefold()
            above = [h for h in headings if h.bounds.bottom <= record.name_box.top]
            listings.setdefault(key, []).append((record, above[-1] if above else None))
            names.setdefault(key, name)
    ranked = sorted(listings, key=lambda k: -len(listings[k]))  # stable: ties keep reading order
    return [Listing(name=names[k], records=tuple(listings[k])) for k in ranked[:limit]]


def describe_listing(listing: Listing) -> str:
    """A thing listed N times, with where: each list's heading and the record, cited."""
    places = []
    for record, heading in listing.records:
        under = f"under {heading.label.strip()} {format_citation(record.capture_id, heading.label)} " \
            if heading is not None else ""
        places.append(f"{under}as {_FIELD_SPLIT.split(record.name)[0]} "
                      f"{format_citation(record.capture_id, record.name_quote)}")
    times = len(listing.records)
    return f"**{listing.name}** · listed {times} time{'s' if times != 1 else ''}: {'; '.join(places)}"


def _unranked(record: Item) -> str:
    """The record's name without the rank it starts with ("7. 美丽人生 (1997)" -> "美丽人生 (1997)")."""
    name = _name_field(record)
    rank = _RANK.match(name)
    return name[rank.end():].strip() if rank else name.strip()


def _name_field(record: Item) -> str:
    """The record's first field: its name."""
    fields = record_fields(record)
    return fields[0] if fields else record.name


def _headings(capture: Capture, records: Sequence[Item]) -> list[UIElement]:
    """The headings of ``capture``, top to bottom: short texts that are no part of a record and
    no button or field."""
    return sorted(
        (e for e in capture.elements
         if not e.clickable and not e.editable and 0 < len(e.label.strip()) <= _HEADING_CHARS
         and not any(r.name_box.encloses(e.bounds) for r in records)),
        key=lambda e: e.bounds.top)


def _names_heading(question: str, label: str) -> bool:
    """Whether ``question`` (spaces removed, case folded) names the heading ``label``."""
    heading = _SPACES.sub("", label).casefold().strip(".:：·")
    return len(heading) >= (3 if has_cjk(heading) else 6) and heading in question


def _above_suggestions(capture: Capture, records: list[Item]) -> list[Item]:
    """``records`` above the page's heading of suggestions, when some are above it; else all."""
    heading = min((e.bounds.top for e in capture.elements
                   if not e.clickable and 0 < len(e.label.strip()) <= _HEADING_CHARS
                   and SUGGESTIONS.fullmatch(e.label.strip().casefold())), default=None)
    if heading is None:
        return records
    above = [r for r in records if r.name_box.top < heading]
    return above if above else records


def _whole_card(capture: Capture, item: Item) -> Item:
    """The card named by its element's whole text: its name had the values (a time, a fare) taken out,
    and a record shows every field where the page put it."""
    element = next((e for e in capture.elements if e.bounds == item.name_box and "|" in e.label), None)
    if element is None:
        return item
    label = element.label.strip()
    return item.model_copy(update={"name": label, "name_quote": label})


def _block_records(capture: Capture) -> list[Item]:
    """Blocks of two or more lines stacked close together, of the shape most of them share
    (lines per block, left edge): the rows of a list whose cells are separate texts."""
    texts = [e for e in dedupe_elements(capture.elements) if not e.editable and not e.clickable]
    blocks: list[list[UIElement]] = []
    for element in sorted(texts, key=lambda e: (e.bounds.top, e.bounds.left)):
        last = blocks[-1][-1] if blocks else None
        if (last is not None and element.bounds.left == last.bounds.left
                and 0 <= element.bounds.top - last.bounds.bottom
                <= _LINE_GAP * max(min(last.bounds.height, element.bounds.height), 1)):
            blocks[-1].append(element)
        else:
            blocks.append([element])
    # Fields are short, or carry values; a heading over its paragraph is an article's, not a record.
    blocks = [b for b in blocks if len(b) >= 2 and (
        all(len(e.label.strip()) <= _FIELD_CHARS for e in b) or any(read_measures(e.label) for e in b[1:]))]
    shapes = Counter((len(b), b[0].bounds.left) for b in blocks)
    if not shapes:
        return []
    shape, count = shapes.most_common(1)[0]
    if count < _MIN_RECORDS:
        return []
    return [_block_item(capture, b) for b in blocks if (len(b), b[0].bounds.left) == shape]


def _block_item(capture: Capture, block: Sequence[UIElement]) -> Item:
    head, rest = block[0], block[1:]
    values = [
        ItemValue(kind=m.kind, value=m.value, unit=m.unit, text=m.text, quote=e.label.strip(), span=m.text,
                  element_id=e.id, box=e.bounds)
        for e in rest for m in read_measures(e.label)
    ]
    return Item(capture_id=capture.id, package=capture.package, name=head.label.strip(),
                name_quote=head.label.strip(), name_box=head.bounds, values=tuple(values),
                lines=tuple(e.label.strip() for e in rest))


def describe_record(item: Item, request: AnswerRequest) -> str:
    """One record as a claim: its fields joined and cited (only its name when the question asks for names)."""
    if request.format is AnswerFormat.NAMES:
        name = _FIELD_SPLIT.split(item.name)[0]
        return f"**{_cell(name)}** {format_citation(item.capture_id, item.name_quote)}"
    quotes = [item.name_quote, *(v.quote for v in item.values if v.text not in item.name)]
    if not item.values:
        quotes += list(item.lines)  # every line of the record is cited
    cited = " ".join(format_citation(item.capture_id, q) for q in dict.fromkeys(quotes))
    return f"{' · '.join(_cell(f) for f in record_fields(item))} {cited}"


def select_records(records: Sequence[Item], request: AnswerRequest,
                   today: date | None) -> tuple[list[Item], list[str]]:
    """The records passing the question's filters, ordered and counted as it asks; what was applied."""
    kept = list(records)
    said: list[str] = []
    if request.price is not None:
        priced = [r for r in kept if r.value(MeasureKind.PRICE) is not None]
        if priced:
            kept = [r for r in priced if _price_of(r) is not None and request.price.holds(_price_of(r) or 0.0)]
            said.append(f"price {request.price.words}")
    if request.count is not None:
        counts = [(r, _count_of(r, request.count)) for r in kept]
        if any(c is not None for _, c in counts):
            kept = [r for r, c in counts if c is not None and request.count.holds(c)]
            said.append(f"count {request.count.words}")
    if request.state is not None:
        # Only where the records are in different states, some in the one asked for.
        states = [(r, record_state(" ".join(record_fields(r)))) for r in kept]
        shown = {s for _, s in states if s is not None}
        if request.state.state in shown and len(shown) >= 2:
            kept = [r for r, s in states if s == request.state.state]
            said.append(f"state: {request.state.words} ({request.state.state})")
    if request.time_of_day is not None:
        timed = [r for r in kept if _minutes_of(r) is not None]
        if timed:
            window = request.time_of_day
            kept = [r for r in timed if window.holds(_minutes_of(r) or 0)]
            said.append(f"time of day: {window.words}")
    months = request.dates.months() if request.dates is not None else None
    if request.dates is not None and months is not None:
        dated = [(r, _date_of(r, today or _ANY_YEAR)) for r in kept]
        if any(d is not None for _, d in dated):
            first_month, last_month = months
            if first_month <= last_month:
                kept = [r for r, d in dated if d is not None and first_month <= d.month <= last_month]
                said.append(f"dates: {request.dates.words} (months {first_month} to {last_month})")
            else:
                # "From October to August" crosses a new year: the last such span that has ended
                # by the phone's date (without one, those months of any year).
                span = _wrapped_months(first_month, last_month, today)
                kept = [r for r, d in dated if d is not None and (
                    span[0] <= d <= span[1] if span else (d.month >= first_month or d.month <= last_month))]
                where = f"{span[0].isoformat()} to {span[1].isoformat()}" if span else \
                    f"months {first_month} to {last_month} across a new year"
                said.append(f"dates: {request.dates.words} ({where})")
    elif request.dates is not None and today is not None:
        dated = [(r, _date_of(r, today)) for r in kept]
        if any(d is not None for _, d in dated):
            first, last = request.dates.span(today)
            kept = [r for r, d in dated if d is not None and first <= d <= last]
            said.append(f"dates: {request.dates.words} ({first.isoformat()} to {last.isoformat()}, "
                        "by the phone's date)")
    if request.order in (Order.CHEAPEST, Order.DEAREST):
        priced = [r for r in kept if _price_of(r) is not None]
        if priced:
            kept = sorted(priced, key=lambda r: _price_of(r) or 0.0, reverse=request.order is Order.DEAREST)
            said.append(request.order.value)
    elif request.order is Order.BEST_RATED:
        rated = [r for r in kept if r.value(MeasureKind.RATING) is not None]
        if rated:
            kept = sorted(rated, key=lambda r: -(_rating_of(r) or 0.0))
            said.append(request.order.value)
    elif request.order is Order.NEWEST:
        stamped: list[tuple[Item, date]] = []
        for record in kept:
            stamp = _date_of(record, today or _ANY_YEAR)
            if stamp is not None:
                stamped.append((record, stamp))
        if stamped:
            # Newest first; records of one day keep the page's order (lists put the newest on top).
            kept = [r for r, _ in sorted(stamped, key=lambda pair: pair[1], reverse=True)]
            said.append(request.order.value)
    if request.position is not None:
        kept, where = _at_position(kept, request.position, by_rank=request.order is Order.AS_SHOWN)
        said.append(f"number {request.position} {where}")
    if request.limit is not None and len(kept) > request.limit:
        kept = kept[: request.limit]
        said.append(f"the first {request.limit}")
    return kept, said


def _count_of(item: Item, count: CountRange) -> float | None:
    """The number ``item`` shows next to a word for what ``count`` counts, magnitudes read."""
    words = "|".join(rf"(?<![a-z]){re.escape(w)}(?![a-z])" if w.isascii() else re.escape(w)
                     for w in sorted(count.counted, key=len, reverse=True))
    after = re.compile(rf"{_COUNT_NUMBER}\+?\s*[个位人次条]?\s*(?:{words})", re.IGNORECASE)
    before = re.compile(rf"(?:{words})(?:数量|数|量)?\s*[:：]?\s*{_COUNT_NUMBER}", re.IGNORECASE)
    text = " ".join(record_fields(item))
    for pattern in (after, before):
        match = pattern.search(text)
        if match:
            return read_magnitude(match["n"], match["mag"])
    return None


def _at_position(records: list[Item], position: int, *, by_rank: bool) -> tuple[list[Item], str]:
    """The record at ``position``: by the rank the records show ("7. 美丽人生") when most show one
    and ``by_rank``, else by place; and how it was found."""
    ranks = [_RANK.match(_name_field(r)) for r in records]
    if by_rank and records and sum(1 for m in ranks if m) * 2 > len(records):
        ranked = [r for r, m in zip(records, ranks, strict=True) if m and int(m.group(1)) == position]
        return ranked, "by the rank shown"
    return records[position - 1 : position], f"in the order shown (of {len(records)})"


def _wrapped_months(first: int, last: int, today: date | None) -> tuple[date, date] | None:
    """First day of month ``first`` to last day of month ``last`` of the next year, the latest such
    span whose last month has begun by ``today``."""
    if today is None:
        return None
    year = today.year if today.month >= last else today.year - 1
    end = (date(year + 1, 1, 1) if last == 12 else date(year, last + 1, 1)) - timedelta(days=1)
    return date(year - 1, first, 1), end


def _price_of(item: Item) -> float | None:
    value = item.value(MeasureKind.PRICE)
    return value.value if value is not None else None


def _rating_of(item: Item) -> float | None:
    value = item.value(MeasureKind.RATING)
    return value.value if value is not None else None


def _minutes_of(item: Item) -> int | None:
    match = _CLOCK.search(" ".join(record_fields(item)))
    return int(match.group(1)) * 60 + int(match.group(2)) if match else None


def _date_of(item: Item, today: date) -> date | None:
    """The first date a record states (a month alone counts as its first day), in ``today``'s year when
    it gives none."""
    match = _DATE.search(" ".join(record_fields(item)))
    if match is None:
        return None
    groups = match.groups()
    try:
        if groups[0]:
            return date(int(groups[0]), int(groups[1]), int(groups[2]))
        if groups[3]:
            return date(int(groups[3]), int(groups[4]), 1)
        return date(today.year, int(groups[5]), int(groups[6]))
    except ValueError:
        return None


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
