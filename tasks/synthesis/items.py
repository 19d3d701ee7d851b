"""Items on a captured page (a dish, a phone listing, a shop) and how well each answers the query.

A results list repeats one card per item; a details page is one item. An item
is its name plus the values printed near it (:mod:`tasks.synthesis.values`).
Cards are found two ways, geometry only, so hierarchy, OCR and detector
elements all work:

1. containers: an element without text (a hierarchy container, a detector
   box) that encloses at least two text elements is a card; each text goes to
   the smallest card around it;
2. reading order, for text outside any card: a text line without numbers
   starts an item unless it sits right under a name that has no values yet
   (then it is that item's description); values attach to the item above.
   A line whose words around the numbers are only filler (``"约 · 送达"``)
   attaches too, unless the item already has a value of that kind.

Detail pages say one thing many times: the top bar, the photo's description
and the title all name the product (``"Big Mac"``, ``"Big Mac photo"``,
``"Big Mac"``). A name line that repeats the current item's name continues
that item and marks it as the page's own subject (``Item.page``); the lines
right under its title (the shop, ``"· 月销2万+"``) and its labelled rows
(:mod:`tasks.synthesis.offers`: gifts, payment and membership discounts)
belong to it. A store page's header is such an item too, so a dish on it can
borrow the store's delivery time, rating and offers in a comparison.

Query relevance is the share of the query's terms (English words; Chinese
character bigrams) found in the item's text, after app names and question
words are removed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict
from rapidfuzz import fuzz

from core.models import Bounds, Capture, ElementSource, UIElement
from inference.vocabulary import load_vocabulary
from tasks.synthesis.grounding import normalize_text
from tasks.synthesis.offers import AttributeRow, read_attribute_row
from tasks.synthesis.values import Measure, MeasureKind, read_measures, strip_measures

__all__ = [
    "Item",
    "ItemValue",
    "QueryTerms",
    "dedupe_elements",
    "detect_items",
    "read_query_terms",
    "score_relevance",
]

_WORD = re.compile(r"[a-z0-9][a-z0-9.\-']*[a-z0-9]|[a-z0-9]")
_CJK_RUN = re.compile(r"[\u3400-\u9fff]+")
_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)
_STOP_WORDS = load_vocabulary("stop_words")  # inference/vocabulary/stop_words.yaml
_EN_STOP = frozenset(_STOP_WORDS.words("relevance_en"))
_CJK_STOP = _STOP_WORDS.words("relevance_zh")
_QUOTE_LIMIT = 60  # longer element texts are cited by the value alone
# Words a photo's description adds to the name it repeats.
_ITEM_WORDS = load_vocabulary("item_words")  # inference/vocabulary/item_words.yaml
_IMAGE_WORDS = re.compile(_ITEM_WORDS.alternation("photo"))
_FILLER_WORDS = re.compile(_ITEM_WORDS.alternation("filler"))
_TOKEN_SPLIT = re.compile(r"[\s·•|,;:/()（）]+")
_SAME_NAME = 90  # fuzz.ratio of two names that are the same name
# Kinds an item may show several of (a page lists several promotions).
_REPEATABLE = frozenset({MeasureKind.PROMOTION, MeasureKind.TIME_OF_DAY})


class QueryTerms(BaseModel):
    """What to look for: English words and Chinese bigrams, plus the phrase left after stop words."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    terms: tuple[str, ...]
    phrase: str


class ItemValue(BaseModel):
    """A value of an item, with the element it was read from (the citation target)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: MeasureKind
    value: float | None
    unit: str
    text: str  # what the report shows
    quote: str  # what the citation quotes: the element's own text, so grounding is exact
    span: str = ""  # the exact words the value was read from, a part of ``quote``
    element_id: str
    box: Bounds


class Item(BaseModel):
    """One thing on a page: its name, values and description lines."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    capture_id: str
    package: str
    name: str
    name_quote: str
    name_box: Bounds
    label: str = ""  # the first element's whole text, values included (a numbered rule with its fee)
    values: tuple[ItemValue, ...] = ()
    lines: tuple[str, ...] = ()
    relevance: float = 0.0
    page: bool = False  # the page's own subject: a detail page's product, a store page's header

    def value(self, kind: MeasureKind) -> ItemValue | None:
        """The first value of ``kind`` (nearest the name), if any."""
        return next((v for v in self.values if v.kind is kind), None)


def read_query_terms(text: str, exclude: Sequence[str] = ()) -> QueryTerms:
    """Terms of ``text`` worth matching, without the app names in ``exclude``."""
    folded = normalize_text(text)
    for name in sorted((normalize_text(n) for n in exclude if n.strip()), key=len, reverse=True):
        folded = folded.replace(name, " ")
    # A lone letter is what is left of a possessive ("Bilibili's" without the app name).
    words = [w for w in _WORD.findall(folded) if w not in _EN_STOP and not (len(w) == 1 and w.isalpha())]
    bigrams: list[str] = []
    residue: list[str] = []
    for run in _CJK_RUN.findall(folded):
        for stop in _CJK_STOP:
            run = run.replace(stop, " ")
        for piece in run.split():
            residue.append(piece)
            bigrams.extend(piece[i : i + 2] for i in range(max(1, len(piece) - 1)))
    terms = tuple(dict.fromkeys(words + bigrams))
    return QueryTerms(terms=terms, phrase=" ".join(words + residue))


def score_relevance(terms: QueryTerms, text: str) -> float:
    """Share of query terms in ``text`` (0..1); a close fuzzy match of the whole phrase counts too."""
    if not terms.terms:
        return 0.0
    folded = normalize_text(text)
    found = sum(1 for term in terms.terms if term in folded)
    share = found / len(terms.terms)
    if terms.phrase and len(terms.phrase) >= 3:
        # Only a close match counts: partial ratios of unrelated short texts sit around 0.5.
        fuzzy = fuzz.partial_ratio(terms.phrase, folded) / 100.0
        if fuzzy >= 0.8:
            share = max(share, 0.9 * fuzzy)
    return round(share, 4)


def dedupe_elements(elements: Sequence[UIElement]) -> tuple[UIElement, ...]:
    """Labelled elements in reading order; an OCR line repeating a hierarchy text is dropped."""
    labelled = [e for e in elements if e.label.strip()]
    primary = [e for e in labelled if e.source is not ElementSource.OCR]
    kept = list(primary)
    for element in labelled:
        if element.source is not ElementSource.OCR:
            continue
        duplicate = any(
            element.bounds.intersection(other.bounds) >= 0.5 * min(element.bounds.area, other.bounds.area)
            and fuzz.ratio(normalize_text(element.label), normalize_text(other.label)) >= 80
            for other in primary)
        if not duplicate:
            kept.append(element)
    ordered = sorted(kept, key=lambda e: (e.bounds.top, e.bounds.left))
    return tuple(e for i, e in enumerate(ordered)
                 if not any(_is_cut_copy(e, other, i < j) for j, other in enumerate(ordered) if i != j))


def _is_cut_copy(element: UIElement, other: UIElement, earlier: bool) -> bool:
    """``element`` is a piece of ``other`` cut at a frame seam of the stitched capture.

    The same row seen in two frames: same left and right edges, inside the
    other's box, its text a part of the other's. Of two equal copies the
    later one goes.
    """
    a, b = element.bounds, other.bounds
    if (a.left, a.right) != (b.left, b.right) or b.intersection(a) < a.area or a.area > b.area:
        return False
    text, whole = normalize_text(element.label), normalize_text(other.label)
    if text not in whole:
        return False
    return a.area < b.area or len(text) < len(whole) or not earlier


def _containers(capture: Capture, texts: Sequence[UIElement]) -> list[Bounds]:
    page_area = capture.width * capture.height
    boxes: list[Bounds] = []
    for element in capture.elements:
        box = element.bounds
        if element.label.strip() or box.area == 0 or box.area > 0.5 * page_area:
            continue
        inside = sum(1 for t in texts if box.intersection(t.bounds) >= 0.9 * t.bounds.area)
        if inside >= 2 and box.height < 0.5 * capture.width * 3:
            boxes.append(box)
    return boxes


def _same_name(a: str, b: str) -> bool:
    first, second = (normalize_text(_IMAGE_WORDS.sub(" ", x)) for x in (a, b))
    return bool(first) and fuzz.ratio(first, second) >= _SAME_NAME


def _is_filler(name: str) -> bool:
    """Only filler around the numbers: ``"约 · 送达 · 配送费"``, ``"起送 · 配送"``."""
    tokens = [t for t in _TOKEN_SPLIT.split(_FILLER_WORDS.sub(" ", normalize_text(name))) if t]
    return all(len(t) <= 2 for t in tokens)


class _Builder:
    """Accumulates one item while scanning its elements."""

    def __init__(self, capture: Capture, first: UIElement, name: str) -> None:
        self.capture = capture
        self.first = first
        self.name = name or capture.title or first.label
        self.values: list[ItemValue] = []
        self.lines: list[str] = []
        self.last_box = first.bounds
        self.page = False
        self.after_name = True  # the last element added was a name or description line

    def kinds(self) -> set[MeasureKind]:
        return {v.kind for v in self.values}

    def collides(self, measures: Sequence[Measure]) -> bool:
        """A second value of a kind the item has: the line is another item's."""
        return any(m.kind in self.kinds() and m.kind not in _REPEATABLE for m in measures)

    def repeat_name(self, element: UIElement, name: str) -> None:
        """The page names its subject again: keep one item, named by text rather than a photo."""
        if not self.first.text and element.text:
            self.first, self.name = element, name
        self.page = True
        self.after_name = True
        self.last_box = element.bounds

    def add_line(self, element: UIElement, text: str) -> None:
        self.lines.append(text)
        self.last_box = element.bounds
        self.after_name = True

    def add_values(self, element: UIElement, measures: Sequence[Measure]) -> None:
        label = element.label.strip()
        for measure in measures:
            if measure.kind is MeasureKind.TIME_OF_DAY and measure.text == label:
                continue  # a bare clock is the status bar, not a fact about the item
            shown = label if measure.kind is MeasureKind.PROMOTION else measure.text
            quote = label if len(label) <= _QUOTE_LIMIT else measure.text
            self.values.append(ItemValue(kind=measure.kind, value=measure.value, unit=measure.unit,
                                         text=shown[:_QUOTE_LIMIT], quote=quote, span=measure.text,
                                         element_id=element.id, box=element.bounds))
        self.last_box = element.bounds
        self.after_name = False

    def add_row(self, element: UIElement, row: AttributeRow) -> None:
        """A labelled row: an offer is one value (its whole text); other rows are read as usual."""
        if row.kind is None:
            measures = [m for m in read_measures(row.text)
                        if m.kind not in self.kinds() or m.kind in _REPEATABLE]
            if measures:
                self.add_values(element, measures)
            else:  # a plain row ("已选  <colour> <memory>+<storage>"): a line, but not a title to hang lines on
                self.lines.append(row.text)
                self.last_box = element.bounds
                self.after_name = False
            return
        label = element.label.strip()
        quote = label if len(label) <= _QUOTE_LIMIT else row.text[:_QUOTE_LIMIT]
        self.values.append(ItemValue(kind=row.kind, value=None, unit="", text=row.text[:_QUOTE_LIMIT],
                                     quote=quote, span=row.text, element_id=element.id, box=element.bounds))
        self.last_box = element.bounds
        self.after_name = False

    def build(self, terms: QueryTerms) -> Item:
        label = self.first.label.strip()
        text = " ".join([self.name, *self.lines])
        return Item(capture_id=self.capture.id, package=self.capture.package, name=self.name,
                    name_quote=label if len(label) <= _QUOTE_LIMIT else self.name, label=label,
                    name_box=self.first.bounds, values=tuple(self.values),
                    lines=tuple(self.lines), relevance=score_relevance(terms, text), page=self.page)


def _is_close_below(above: Bounds, below: Bounds) -> bool:
    return 0 <= below.top - above.bottom < 0.6 * max(above.height, 1)


def _attaches(current: _Builder, element: UIElement, measures: Sequence[Measure], name: str) -> bool:
    """A line with values and a name part belongs to the current item (not a new one)."""
    if current.collides(measures) or not _is_close_below(current.last_box, element.bounds):
        return False
    # Filler words only, or the line right under a detail page's title (its shop, its sales).
    return _is_filler(name) or (current.page and current.after_name)


def _scan(capture: Capture, elements: Sequence[UIElement], terms: QueryTerms) -> list[Item]:
    items: list[Item] = []
    current: _Builder | None = None
    for element in elements:
        row = read_attribute_row(element.label)
        if current is not None and row is not None and (row.kind is not None or current.page):
            current.add_row(element, row)
            continue
        measures = read_measures(element.label)
        name = strip_measures(element.label, measures)
        is_name = len(name) >= 2 and _LETTER.search(name) is not None
        if current is not None and is_name and not measures and _same_name(current.name, name):
            current.repeat_name(element, name)
            continue
        if current is not None and is_name and measures and _attaches(current, element, measures, name):
            current.add_values(element, measures)
            continue
        # A tappable text is a row of its own (a permission, a setting, a result), not a line
        # of the item above it.
        if is_name and (current is None or (current.values and not current.after_name) or measures
                        or element.clickable
                        or not _is_close_below(current.last_box, element.bounds)):
            if current is not None:
                items.append(current.build(terms))
            current = _Builder(capture, element, name)
        elif is_name and current is not None:
            current.add_line(element, name)
        if measures:
            if current is None:
                current = _Builder(capture, element, name)
            current.add_values(element, measures)
    if current is not None:
        items.append(current.build(terms))
    return items


def detect_items(capture: Capture, terms: QueryTerms) -> tuple[Item, ...]:
    """The items on ``capture``, in reading order, each scored against ``terms``."""
    # A field's text is what someone typed (the agent's own search term), not the page's evidence.
    texts = tuple(e for e in dedupe_elements(capture.elements) if not e.editable)
    boxes = _containers(capture, texts)
    grouped: dict[int, list[UIElement]] = {}
    loose: list[UIElement] = []
    for element in texts:
        around = [i for i, box in enumerate(boxes)
                  if box.intersection(element.bounds) >= 0.9 * element.bounds.area]
        if around:
            grouped.setdefault(min(around, key=lambda i: boxes[i].area), []).append(element)
        else:
            loose.append(element)
    items: list[Item] = []
    for members in grouped.values():
        # One card, one item: merge what the scan found inside it under its first name.
        found = _scan(capture, members, terms)
        if found:
            head = found[0]
            values = tuple(v for item in found for v in item.values)
            rest = found[1:]
            lines = (*head.lines, *(i.name for i in rest), *(ln for i in rest for ln in i.lines))
            items.append(head.model_copy(update={
                "values": values, "lines": lines,
                "relevance": max(i.relevance for i in found)}))
    items.extend(_scan(capture, loose, terms))
    return tuple(sorted(items, key=lambda i: (i.name_box.top, i.name_box.left)))
