"""Numbers with their units, read from one line of screen text.

``"Big Mac Meal ¥25.5 Sold 2k+"`` -> price 25.5 ¥ and sales 2000; ``"月售 2000+"``
-> sales 2000; ``"30分钟"`` -> delivery time 30 min. The patterns cover what
shopping, food-delivery and review apps print in Chinese and English. They are
tried in a fixed order (more specific first) and a span already claimed is not
read twice, so ``"4.8分"`` is a rating while ``"30分钟"`` stays a duration.
Every quantifier is bounded or anchored on a literal, so no pattern can
backtrack catastrophically on long input.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from inference.rules.answer_shape import read_magnitude
from inference.vocabulary import load_vocabulary

__all__ = ["Measure", "MeasureKind", "read_measures", "strip_measures"]


class MeasureKind(StrEnum):
    """What a number on a screen means; the value is the table attribute's name."""

    PRICE = "Price"
    ORIGINAL_PRICE = "Original price"
    DELIVERY_FEE = "Delivery fee"
    MIN_ORDER = "Minimum order"
    SALES = "Sales"
    DELIVERY_TIME = "Delivery time"
    RATING = "Rating"
    REVIEWS = "Reviews"
    DISTANCE = "Distance"
    PROMOTION = "Promotions"
    GIFT = "Bundled gifts"
    PAYMENT_DISCOUNT = "Payment discounts"
    MEMBER_DISCOUNT = "Membership discounts"
    TRADE_IN = "Trade-in"
    TIME_OF_DAY = "Time"


class Measure(BaseModel):
    """One value read from a text: what it is, the number, its unit, and the words it came from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: MeasureKind
    value: float | None  # None for promotions worded without a single number
    unit: str
    text: str  # the exact substring, used as the citation quote
    start: int
    end: int


_NUM = r"\d{1,3}(?:,\d{3}){1,4}(?:\.\d{1,4})?|\d{1,9}(?:\.\d{1,4})?"
_MAG = r"[kKwW万千]"
_CURRENCY = {"¥": "¥", "￥": "¥", "元": "¥", "块": "¥", "RMB": "¥", "CNY": "¥", "yuan": "¥",
             "$": "$", "US$": "$", "USD": "$", "€": "€", "EUR": "€", "£": "£"}

# Words just before a price that change what the price means (same element).
_MEASURE_WORDS = load_vocabulary("measure_words")  # inference/vocabulary/measure_words.yaml
_PRICE_CONTEXT: tuple[tuple[MeasureKind, tuple[str, ...]], ...] = tuple(
    (kind, _MEASURE_WORDS.words(f"price_{kind.name.lower()}"))
    for kind in (MeasureKind.DELIVERY_FEE, MeasureKind.MIN_ORDER, MeasureKind.ORIGINAL_PRICE))


def _number(text: str) -> float:
    return float(text.replace(",", ""))


_Reader = Callable[[re.Match[str]], tuple[float | None, str]]


def _count(match: re.Match[str]) -> tuple[float | None, str]:
    return read_magnitude(match.group("n"), match.group("mag")), ""


def _minutes(match: re.Match[str]) -> tuple[float | None, str]:
    return _number(match.group("n") or match.group("n1")), "min"


def _price(match: re.Match[str]) -> tuple[float | None, str]:
    if match.group("n") is not None:
        symbol = match.group("cur")
        return _number(match.group("n")), _CURRENCY.get(symbol.upper(), symbol)
    symbol = match.group("suffix")
    return _number(match.group("n2")), _CURRENCY.get(symbol, symbol)


def _rating(match: re.Match[str]) -> tuple[float | None, str]:
    value = _number(match.group("n") or match.group("n2"))
    return (value, "/5") if value <= 5 else (value, "/10")


def _distance(match: re.Match[str]) -> tuple[float | None, str]:
    km = match.group("u").lower() in ("km", "公里")
    return _number(match.group("n")), "km" if km else "m"


def _promotion(match: re.Match[str]) -> tuple[float | None, str]:
    if match.group("z"):
        return _number(match.group("z")), "折"
    if match.group("pct"):
        return _number(match.group("pct")), "%"
    number = match.group("n")
    return (_number(number) if number else None), ""


def _clock(match: re.Match[str]) -> tuple[float | None, str]:
    hours, minutes = match.group(0).split(":")
    return int(hours) + int(minutes) / 60.0, "h"


_PATTERNS: tuple[tuple[MeasureKind, re.Pattern[str], _Reader], ...] = (
    (MeasureKind.PROMOTION,
     re.compile(rf"满\s?(?:{_NUM})\s?减\s?(?P<n>{_NUM})|(?P<pct>\d{{1,2}})\s?%\s?off|(?P<z>{_NUM})\s?折"
                rf"|(?:{_MEASURE_WORDS.alternation('promotion')})",
                re.IGNORECASE), _promotion),
    (MeasureKind.SALES,
     re.compile(rf"(?:{_MEASURE_WORDS.alternation('sales_before')})\s?(?P<n>{_NUM})\s?(?P<mag>{_MAG})?\+?",
                re.IGNORECASE), _count),
    (MeasureKind.REVIEWS,
     re.compile(rf"(?P<n>{_NUM})\s?(?P<mag>{_MAG})?\+?\s?(?:{_MEASURE_WORDS.alternation('reviews_after')})",
                re.IGNORECASE), _count),
    # Not a reading, watching or video length ("阅读时长约 6 分钟", "6 min read", "时长 12分钟").
    (MeasureKind.DELIVERY_TIME,
     re.compile(rf"(?<![\d.])(?<!时长)(?<!时长约)(?<!时长 )(?<!时长约 )"
                rf"(?:(?:{_NUM})\s?[-~–]\s?(?P<n>{_NUM})\s?(?:分钟|mins?\b|minutes)"
                rf"|(?P<n1>{_NUM})\s?(?:分钟|mins?\b|minutes))(?!\s?(?:read|watch|video|long))",
                re.IGNORECASE), _minutes),
    (MeasureKind.PRICE,
     re.compile(rf"(?P<cur>US\$|[¥￥$€£]|RMB|CNY|USD|EUR)\s?(?P<n>{_NUM})"
                rf"|(?P<n2>{_NUM})\s?(?P<suffix>元|块|yuan|RMB|CNY)", re.IGNORECASE), _price),
    # After prices, so "¥25.5 2k+ sold" does not read "25.5 sold".
    (MeasureKind.SALES,
     re.compile(rf"(?P<n>{_NUM})\s?(?P<mag>{_MAG})?\+?\s?(?:{_MEASURE_WORDS.alternation('sold_after')})",
                re.IGNORECASE), _count),
    (MeasureKind.RATING,
     re.compile(r"(?:rating|评分|★|⭐)\s?(?P<n>\d(?:\.\d)?)(?![\d.])"
                r"|(?<![\d.])(?P<n2>\d(?:\.\d)?)\s?(?:分(?!钟)|★|stars?\b)", re.IGNORECASE), _rating),
    # Metres are a lower-case "m": "1.2M followers" counts a million and more.
    (MeasureKind.DISTANCE, re.compile(rf"(?P<n>{_NUM})\s?(?P<u>[kK][mM]|公里|米|m\b)"), _distance),
    (MeasureKind.TIME_OF_DAY, re.compile(r"(?<!\d)(?:[01]?\d|2[0-3]):[0-5]\d(?!\d)"), _clock),
)


def _price_kind(text: str, start: int) -> MeasureKind:
    # The nearest keyword wins: in "配送费 ¥3 起送 ¥20" the second price is the minimum order.
    before = text[max(0, start - 16) : start].lower()
    best, best_at = MeasureKind.PRICE, -1
    for kind, words in _PRICE_CONTEXT:
        for word in words:
            at = before.rfind(word)
            if at > best_at:
                best, best_at = kind, at
    return best


def read_measures(text: str) -> tuple[Measure, ...]:
    """Every number-with-unit in ``text``, in reading order, spans never overlapping."""
    taken: list[tuple[int, int]] = []
    found: list[Measure] = []
    for kind, pattern, reader in _PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(start < t_end and t_start < end for t_start, t_end in taken):
                continue
            value, unit = reader(match)
            actual = _price_kind(text, start) if kind is MeasureKind.PRICE else kind
            taken.append((start, end))
            found.append(Measure(kind=actual, value=value, unit=unit,
                                 text=match.group(0).strip(), start=start, end=end))
    return tuple(sorted(found, key=lambda m: m.start))


_EMPTY_BRACKETS = re.compile(r"\(\s*\)|（\s*）|\[\s*\]")
_EDGE_PUNCTUATION = " \t|·•,;:/+-"


def strip_measures(text: str, measures: tuple[Measure, ...]) -> str:
    """``text`` without its measures: the item name in ``"Big Mac Meal ¥25.5 Sold 2k+"``."""
    if not measures:
        return text.strip()
    kept: list[str] = []
    cursor = 0
    for measure in sorted(measures, key=lambda m: m.start):
        kept.append(text[cursor : measure.start])
        cursor = max(cursor, measure.end)
    kept.append(text[cursor:])
    joined = _EMPTY_BRACKETS.sub(" ", " ".join(part.strip(_EDGE_PUNCTUATION) for part in kept))
    return " ".join(joined.split()).strip(_EDGE_PUNCTUATION)
