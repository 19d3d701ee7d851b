"""How recent an item of a list says it is, from the time or date it shows (no model).

Mail, messages, posts and orders show when they arrived: "10:24", "昨天",
"Yesterday 18:02", "3 小时前", "6月23日", "06-23 08:42", "Jun 23", "2025-06-23".
:func:`read_item_time` reads that stamp from an item's lines into an
:class:`ItemTime` whose ``key`` orders items newest last, so "the latest"
item of a list is the one with the largest key, whatever the app's order.

Only a line (or a ``·``-separated part of one) that is a time and nothing else
counts: dates inside a mail's summary (a due date after "到期还款日") are content, not
the item's stamp. Relative stamps rank above absolute dates (a list that says
"10:24" for today says "06-21" for older days); apps show the year only for
dates of earlier years, so a date without one is taken as this year's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from inference.vocabulary import load_vocabulary

__all__ = ["ItemTime", "read_item_time", "read_time"]

_TODAY = 1000  # age ranks: today, then one less per day back; absolute dates rank 0
_WEEK = _TODAY - 4  # a weekday name: some day of the past week
_MINUTES_A_DAY = 24 * 60
_THIS_YEAR = 9999  # a date shown without its year is of the current year, newer than any shown with one

_TIME_WORDS = load_vocabulary("time_words")  # inference/vocabulary/time_words.yaml
_CLOCK = (rf"(?:(?P<half>{_TIME_WORDS.alternation('clock_half')})\s*)?"
          r"(?P<hour>[01]?\d|2[0-3])[:：](?P<minute>[0-5]\d)"
          r"(?:\s*(?P<half2>am|pm|a\.m\.|p\.m\.))?")
_OPT_CLOCK = rf"(?:[\s,]*{_CLOCK})?"
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH_NAME = r"(?P<mname>jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"

_NOW = re.compile(_TIME_WORDS.alternation("stamp_now"))
_AGO = re.compile(
    r"(?P<n>\d+)\s*(?:"
    rf"(?P<min>{_TIME_WORDS.alternation('stamp_minutes_ago')})|"
    rf"(?P<hr>{_TIME_WORDS.alternation('stamp_hours_ago')})|"
    rf"(?P<day>{_TIME_WORDS.alternation('stamp_days_ago')}))"
)
_RELATIVE_DAY = re.compile(
    rf"(?:(?P<today>{_TIME_WORDS.alternation('stamp_today')})|"
    rf"(?P<yesterday>{_TIME_WORDS.alternation('stamp_yesterday')})|"
    rf"(?P<before>{_TIME_WORDS.alternation('stamp_day_before_yesterday')})|"
    rf"(?P<weekday>(?:周|星期|週)[一二三四五六日天]|(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?|[월화수목금토일]요일))"
    rf"{_OPT_CLOCK}"
)
_DATES = (
    re.compile(rf"(?P<year>\d{{4}})[-/.](?P<month>\d{{1,2}})[-/.](?P<day>\d{{1,2}}){_OPT_CLOCK}"),
    re.compile(rf"(?:(?P<year>\d{{4}})\s*年\s*)?(?P<month>\d{{1,2}})\s*月\s*(?P<day>\d{{1,2}})\s*[日号]{_OPT_CLOCK}"),
    re.compile(rf"(?P<month>\d{{1,2}})[-/](?P<day>\d{{1,2}}){_OPT_CLOCK}"),
    re.compile(rf"{_MONTH_NAME}\s*(?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s*(?P<year>\d{{4}}))?{_OPT_CLOCK}"),
    re.compile(rf"(?P<day>\d{{1,2}})\s+{_MONTH_NAME}(?:\s*(?P<year>\d{{4}}))?{_OPT_CLOCK}"),
)
_CLOCK_ONLY = re.compile(_CLOCK)
_PARTS = re.compile(r"\s*(?:[·•|]|\s{2,})\s*")


class ItemTime(BaseModel):
    """When an item says it arrived: an age rank (today 1000, yesterday 999, dates 0) and a stamp."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rank: int
    year: int = 0  # 0: not shown
    month: int = 0
    day: int = 0
    minutes: int = 0  # into the day (a relative "3 hours ago" counts back from midnight)

    @property
    def key(self) -> tuple[int, int, int, int, int]:
        """Larger is newer."""
        return (self.rank, self.year or _THIS_YEAR, self.month, self.day, self.minutes)


def read_time(text: str) -> ItemTime | None:
    """The time ``text`` is, when it is a time or date and nothing else ("06-23 08:42", "昨天")."""
    folded = text.strip().casefold()
    if not folded or len(folded) > 32:
        return None
    if _NOW.fullmatch(folded):
        return ItemTime(rank=_TODAY, minutes=_MINUTES_A_DAY)
    if (match := _AGO.fullmatch(folded)) is not None:
        n = int(match["n"])
        if match["day"]:
            return ItemTime(rank=_TODAY - n)
        back = n if match["min"] else n * 60
        return ItemTime(rank=_TODAY, minutes=max(0, _MINUTES_A_DAY - back))
    if (match := _RELATIVE_DAY.fullmatch(folded)) is not None:
        rank = (_TODAY if match["today"] else _TODAY - 1 if match["yesterday"]
                else _TODAY - 2 if match["before"] else _WEEK)
        return ItemTime(rank=rank, minutes=_clock_minutes(match))
    if (match := _CLOCK_ONLY.fullmatch(folded)) is not None:
        return ItemTime(rank=_TODAY, minutes=_clock_minutes(match))
    for pattern in _DATES:
        match = pattern.fullmatch(folded)
        if match is None:
            continue
        groups = match.groupdict()
        month = _MONTHS.index(groups["mname"][:3]) + 1 if groups.get("mname") else int(groups["month"])
        day = int(match["day"])
        if 1 <= month <= 12 and 1 <= day <= 31:
            year = int(groups["year"]) if groups.get("year") else 0
            return ItemTime(rank=0, year=year, month=month, day=day, minutes=_clock_minutes(match))
    return None


def read_item_time(lines: Iterable[str]) -> ItemTime | None:
    """The stamp of an item from its lines: the last line (or ``·`` part of one) that is a time."""
    for line in reversed(list(lines)):
        for part in reversed(_PARTS.split(line.strip())):
            stamp = read_time(part)
            if stamp is not None:
                return stamp
    return None


def _clock_minutes(match: re.Match[str]) -> int:
    groups = match.groupdict()
    if not groups.get("hour"):
        return 0
    hour, minute = int(groups["hour"]), int(groups["minute"])
    half = (groups.get("half") or groups.get("half2") or "").replace(".", "")
    if half in ("pm", "下午", "晚上") and hour < 12:
        hour += 12
    elif half in ("am", "凌晨", "早上") and hour == 12:
        hour = 0
    return hour * 60 + minute
