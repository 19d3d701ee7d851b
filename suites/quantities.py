"""Numbers with their units, read the same way from Chinese and English text.

Scoring compares values, not spellings: ``15小时12分`` and ``15 h 12 min`` are
both 912 minutes, ``¥25.5`` and ``25.50元`` both 25.5 yuan, ``3.1M`` and
``310万`` both 3,100,000. :func:`read_quantities` finds every such value in a
text; :func:`read_quantity` reads a text that is one value and nothing else
(a scoring point such as ``¥68.00``), or returns None.

Kinds and the units they accept (case-insensitive unless noted):

    money      ¥ ￥ 元 块 RMB CNY 人民币 yuan (yuan); $ US$ USD 美元 dollars (USD);
               € EUR, £ GBP, HK$ HKD, JP¥ JPY; prefix or suffix, with 万 / 亿
    duration   小时 h hr hours, 分钟 min minutes, 天 days (in minutes); ``15小时12分``
    distance   公里 千米 km, 米 m (lower case), mi miles (in metres)
    weight     克 g, 千克 公斤 kg (in grams)
    data       KB MB GB TB (either case), G after a number (in megabytes)
    percent    %
    score      分 after a number that is not a duration (``9.4分``: a rating)
    count      a bare number, with 千 万 亿 or K / M / B (upper case) as multipliers

Times of day (``17:26``), dates (``2024-05-06``) and numbers inside words
(``G7371``, ``i5-8400``) are not quantities: they are compared as text.
Chinese numerals (一百) are not read.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Quantity", "QuantityKind", "read_quantities", "read_quantity"]


class QuantityKind(StrEnum):
    MONEY = "money"
    DURATION = "duration"  # minutes
    DISTANCE = "distance"  # metres
    WEIGHT = "weight"  # grams
    DATA = "data"  # megabytes
    PERCENT = "percent"
    SCORE = "score"
    COUNT = "count"


@dataclass(frozen=True)
class Quantity:
    """A value of one kind; money also has its currency (``CNY``, ``USD``...)."""

    kind: QuantityKind
    value: float
    currency: str = ""

    def same_kind(self, other: Quantity) -> bool:
        return self.kind is other.kind and self.currency == other.currency


_NUMBER = r"\d+(?:,\d{3})*(?:\.\d+)?"
_CURRENCY_PREFIX = {
    "us$": "USD", "hk$": "HKD", "ca$": "CAD", "au$": "AUD", "jp¥": "JPY", "$": "USD", "usd": "USD",
    "¥": "CNY", "rmb": "CNY", "cny": "CNY", "€": "EUR", "eur": "EUR", "£": "GBP", "gbp": "GBP",
}
_CURRENCY_SUFFIX = {
    "美元": "USD", "usd": "USD", "dollars": "USD", "dollar": "USD", "元": "CNY", "块": "CNY",
    "人民币": "CNY", "rmb": "CNY", "cny": "CNY", "yuan": "CNY", "eur": "EUR", "欧元": "EUR",
    "日元": "JPY", "港币": "HKD",
}
_CN_MULTIPLIER = {"千": 1e3, "万": 1e4, "亿": 1e8}
_EN_MULTIPLIER = {"K": 1e3, "M": 1e6, "B": 1e9}


def _alternatives(words: Iterable[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


# Each pattern reads one quantity; they are tried in this order, and a span taken by one is not
# read again by the next (so "15小时12分" is one duration, not a duration and a score).
_DURATION = re.compile(
    rf"(?P<h>{_NUMBER})\s*(?:个)?(?:小时|hours?|hrs?|h)(?![a-z])"
    rf"(?:\s*(?P<m>\d+)\s*(?:分钟|分|minutes?|mins?)(?![a-z]))?"
    rf"|(?P<mo>{_NUMBER})\s*(?:分钟|minutes?|mins?)(?![a-z])"
    rf"|(?P<d>{_NUMBER})\s*(?:天|days?)(?![a-z])", re.IGNORECASE)
_MONEY_PREFIX = re.compile(
    rf"(?P<cur>{_alternatives(_CURRENCY_PREFIX)})\s*(?P<n>{_NUMBER})\s*(?P<mul>[千万亿])?", re.IGNORECASE)
_MONEY_SUFFIX = re.compile(
    rf"(?P<n>{_NUMBER})\s*(?P<mul>[千万亿])?\s*(?P<cur>{_alternatives(_CURRENCY_SUFFIX)})", re.IGNORECASE)
_DISTANCE = re.compile(rf"(?P<n>{_NUMBER})\s*(?P<u>公里|千米|km|miles?|mi|米|m)(?![a-zA-Z])")
_WEIGHT = re.compile(rf"(?P<n>{_NUMBER})\s*(?P<u>千克|公斤|克|kg|g)(?![a-zA-Z])")
_DATA = re.compile(rf"(?P<n>{_NUMBER})\s*(?P<u>[KMGT]B|[kmgt]b|G)(?![a-zA-Z])")
_PERCENT = re.compile(rf"(?P<n>{_NUMBER})\s*%")
_SCORE = re.compile(rf"(?P<n>{_NUMBER})\s*分(?!钟)")
_COUNT = re.compile(rf"(?P<n>{_NUMBER})\s*(?P<mul>[千万亿]|[KMB](?![a-zA-Z]))?")
# Digits that belong to a time, a date, a version or a word (G7371, i5-8400): not quantities.
_NOT_A_QUANTITY = re.compile(
    r"\d+(?::\d+)+|\d+(?:[-/.]\d+){2,}|[A-Za-z]+[-_]?\d[\w-]*|\d+[A-Za-z]+\d[\w-]*")

_DISTANCE_M = {"公里": 1000.0, "千米": 1000.0, "km": 1000.0, "mi": 1609.344, "mile": 1609.344,
               "miles": 1609.344, "米": 1.0, "m": 1.0}
_WEIGHT_G = {"千克": 1000.0, "公斤": 1000.0, "kg": 1000.0, "克": 1.0, "g": 1.0}
_DATA_MB = {"kb": 1 / 1024, "mb": 1.0, "gb": 1024.0, "g": 1024.0, "tb": 1024.0 * 1024.0}


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _read(text: str) -> list[tuple[int, int, Quantity]]:
    """Every quantity in ``text`` (NFKC-normalised) with its span, in reading order."""
    taken: list[tuple[int, int]] = [m.span() for m in _NOT_A_QUANTITY.finditer(text)]
    found: list[tuple[int, int, Quantity]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in taken)

    def take(match: re.Match[str], quantity: Quantity) -> None:
        taken.append(match.span())
        found.append((match.start(), match.end(), quantity))

    for match in _DURATION.finditer(text):
        if not free(*match.span()):
            continue
        if match["h"]:
            minutes = _number(match["h"]) * 60 + (int(match["m"]) if match["m"] else 0)
        elif match["mo"]:
            minutes = _number(match["mo"])
        else:
            minutes = _number(match["d"]) * 1440
        take(match, Quantity(QuantityKind.DURATION, minutes))
    for pattern in (_MONEY_PREFIX, _MONEY_SUFFIX):
        table = _CURRENCY_PREFIX if pattern is _MONEY_PREFIX else _CURRENCY_SUFFIX
        for match in pattern.finditer(text):
            if free(*match.span()):
                value = _number(match["n"]) * _CN_MULTIPLIER.get(match["mul"] or "", 1.0)
                take(match, Quantity(QuantityKind.MONEY, value, table[match["cur"].casefold()]))
    for match in _DISTANCE.finditer(text):
        if free(*match.span()):
            take(match, Quantity(QuantityKind.DISTANCE, _number(match["n"]) * _DISTANCE_M[match["u"]]))
    for match in _WEIGHT.finditer(text):
        if free(*match.span()):
            take(match, Quantity(QuantityKind.WEIGHT, _number(match["n"]) * _WEIGHT_G[match["u"]]))
    for match in _DATA.finditer(text):
        if free(*match.span()):
            take(match, Quantity(QuantityKind.DATA, _number(match["n"]) * _DATA_MB[match["u"].casefold()]))
    for pattern, kind in ((_PERCENT, QuantityKind.PERCENT), (_SCORE, QuantityKind.SCORE)):
        for match in pattern.finditer(text):
            if free(*match.span()):
                take(match, Quantity(kind, _number(match["n"])))
    for match in _COUNT.finditer(text):
        if free(*match.span()) and not _inside_word(text, match.start()):
            multiplier = match["mul"] or ""
            factor = _CN_MULTIPLIER.get(multiplier) or _EN_MULTIPLIER.get(multiplier, 1.0)
            take(match, Quantity(QuantityKind.COUNT, _number(match["n"]) * factor))
    return sorted(found, key=lambda item: item[0])


def _inside_word(text: str, start: int) -> bool:
    """A digit run glued to a preceding digit or decimal point was part of something already read."""
    return start > 0 and (text[start - 1].isdigit() or text[start - 1] == ".")


def read_quantities(text: str) -> list[Quantity]:
    """Every quantity in ``text``, in reading order."""
    return [quantity for _, _, quantity in _read(_normalise(text))]


def read_quantity(text: str) -> Quantity | None:
    """The one quantity ``text`` consists of (punctuation and spaces aside), else None."""
    normalised = _normalise(text)
    found = _read(normalised)
    if len(found) != 1:
        return None
    start, end, quantity = found[0]
    rest = normalised[:start] + normalised[end:]
    return quantity if all(not c.isalnum() for c in rest) else None
