"""What a question asks of the answer's shape, without a model: format, order, count, filters.

``read_answer_request("Trending items under $10, only the names")`` ->
names only, price at most 10 $. Understood, in English and Chinese:

- format: a table ("as a table", "表格"), only the names ("only the names", "只要名字"),
  one sentence ("in one sentence", "一句话");
- order and count: the cheapest / most expensive / highest rated (one record, or N with
  "the 3 cheapest"), the newest ("the last time", "最近一次": one record), the most often
  listed across a page's lists ("most frequent", "出现次数最多"), the top N / first N ("top 5",
  "前5", "前三");
- position: one record by its place on a list ("number 7", "#7", "the 7th film", "第7名",
  "排名第三"): the record ranked so, by the rank it shows or else its place;
- filters: a number range with its unit ("under $10", "500元以下", "between 100 and 300",
  "不超过200"), a count of something the records show ("more than a million followers",
  "over 10k reviews", "粉丝超过100万", "播放量过百万"), a state the records show ("which
  permissions were denied", "还在路上的快递", "unpaid orders"), a time of day ("in the
  afternoon", "下午", "after 18:00", "晚上"), a date
  relative to the phone's clock ("last month", "上个月", "last week", "最近一周", "yesterday",
  "昨天", "today", "in 2024", "2024年").

Each filter says in words what it keeps, so the report can say what it applied.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from enum import StrEnum

from core.models import Frozen
from inference.vocabulary import load_vocabulary

__all__ = [
    "MAGNITUDE",
    "AnswerFormat",
    "AnswerRequest",
    "CountRange",
    "DateRange",
    "NumberRange",
    "Order",
    "RecordState",
    "TimeOfDay",
    "read_answer_request",
    "read_magnitude",
    "record_state",
    "strip_answer_shape",
]


class AnswerFormat(StrEnum):
    LIST = "list"
    TABLE = "table"
    NAMES = "names"
    SENTENCE = "sentence"


class Order(StrEnum):
    AS_SHOWN = "as shown"
    CHEAPEST = "cheapest first"
    DEAREST = "most expensive first"
    BEST_RATED = "highest rated first"
    NEWEST = "newest first"
    MOST_FREQUENT = "most often listed first"


class NumberRange(Frozen):
    """Values between ``low`` and ``high`` (either open), in ``unit`` ("" = any unit)."""

    low: float | None = None
    high: float | None = None
    unit: str = ""
    words: str  # as the question said it

    def holds(self, value: float) -> bool:
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)


class CountRange(NumberRange):
    """A number range over what the records count: ``counted`` are the words a question or a
    record may use for it ("followers", "fans", "粉丝"), the question's own word first."""

    counted: tuple[str, ...]


class RecordState(Frozen):
    """A state a record may be in ("in transit", "denied"), as the question said it (``words``)."""

    state: str
    words: str


class TimeOfDay(Frozen):
    """Clock times from ``start`` to ``end`` minutes after midnight."""

    start: int
    end: int
    words: str

    def holds(self, minutes: int) -> bool:
        return self.start <= minutes < self.end


class DateRange(Frozen):
    """Days relative to the phone's date: ``days_back`` before it (a rolling window) or a calendar span."""

    kind: str  # last_month | this_month | last_week | this_week | yesterday | today | year:<n> | days:<n>
    # | months:<first>:<last> (calendar months of any year: "from May to August", "5月到8月")
    words: str

    def months(self) -> tuple[int, int] | None:
        """The first and last calendar month a month range keeps (None: another kind)."""
        if not self.kind.startswith("months:"):
            return None
        first, last = self.kind.split(":")[1:]
        return int(first), int(last)

    def span(self, today: date) -> tuple[date, date]:
        """The first and last day the filter keeps, counted from ``today`` (the phone's date)."""
        if self.kind == "today":
            return today, today
        if self.kind == "yesterday":
            day = today - timedelta(days=1)
            return day, day
        if self.kind == "this_month":
            return today.replace(day=1), today
        if self.kind == "last_month":
            last = today.replace(day=1) - timedelta(days=1)
            return last.replace(day=1), last
        if self.kind == "this_week":
            return today - timedelta(days=today.weekday()), today
        if self.kind == "last_week":
            return today - timedelta(days=7), today
        if self.kind.startswith("year:"):
            year = int(self.kind[5:])
            return date(year, 1, 1), date(year, 12, 31)
        days = int(self.kind.partition(":")[2] or 7)
        return today - timedelta(days=days), today


class AnswerRequest(Frozen):
    """The shape the question asks its answer in."""

    format: AnswerFormat = AnswerFormat.LIST
    order: Order = Order.AS_SHOWN
    limit: int | None = None
    position: int | None = None  # the record at this place on the list ("number 7", "第7名")
    price: NumberRange | None = None
    count: CountRange | None = None
    state: RecordState | None = None
    time_of_day: TimeOfDay | None = None
    dates: DateRange | None = None

    @property
    def filters(self) -> tuple[str, ...]:
        """The filters in words, as the question put them."""
        found = (self.price, self.count, self.state, self.time_of_day, self.dates)
        return tuple(f.words for f in found if f is not None)

    @property
    def shaped(self) -> bool:
        """Whether the question asks for anything beyond "list what the page shows"."""
        return (self.format is not AnswerFormat.LIST or self.order is not Order.AS_SHOWN
                or self.limit is not None or self.position is not None or bool(self.filters))


_NUM = r"(\d+(?:\.\d+)?)"
_CUR = r"(?:[$¥￥€£]|元|块|rmb|usd|dollars?|yuan)"
_CN_DIGITS = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}

_SHAPE_WORDS = load_vocabulary("answer_shape")  # inference/vocabulary/answer_shape.yaml
_TABLE = re.compile(_SHAPE_WORDS.alternation("table"))
_NAMES = re.compile(_SHAPE_WORDS.alternation("names"))
_SENTENCE = re.compile(_SHAPE_WORDS.alternation("sentence"))
_CHEAPEST = re.compile(_SHAPE_WORDS.alternation("cheapest"))
_DEAREST = re.compile(_SHAPE_WORDS.alternation("dearest"))
_BEST_RATED = re.compile(_SHAPE_WORDS.alternation("best_rated"))
# One record, the newest: "the last time", "最近一次" (not "last week", a date filter).
# Across lists: "the movies that appear most often across the charts", "出现次数最多".
_MOST_FREQUENT = re.compile(_SHAPE_WORDS.alternation("most_frequent"))
_NEWEST = re.compile(_SHAPE_WORDS.alternation("newest"))
_TOP_N = re.compile(r"\b(?:top|first)\s+(\d+|one|two|three|four|five|ten)\b|前\s*(\d+|[一两二三四五六七八九十])\s*(?:名|个|条|位|首|部)?")
# How many records an order keeps: "the 3 cheapest", "which 2 films ... most often", "最便宜的3款".
_N_CHEAPEST = re.compile(r"\b(\d+|two|three|four|five) (?:cheapest|most expensive)\b|"
                         r"\bwhich (\d{1,2}|two|three|four|five|ten)\b|"
                         r"(?:最便宜|价格最低|最低价|最贵|价格最高)的?\s*(\d+|[一两二三四五六七八九十])\s*(?:个|条|家|款|件|部)")
_EN_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "ten": 10}

_UNDER = re.compile(rf"\b(?:under|below|less than|cheaper than|at most|up to|no more than)\s*{_CUR}?\s*{_NUM}\s*{_CUR}?")
_OVER = re.compile(rf"\b(?:over|above|more than|at least|from)\s*{_CUR}?\s*{_NUM}\s*{_CUR}?(?!\s*(?:to|-)\s*\d)")
_BETWEEN = re.compile(rf"\bbetween\s*{_CUR}?\s*{_NUM}\s*{_CUR}?\s*and\s*{_CUR}?\s*{_NUM}|"
                      rf"{_CUR}?\s*{_NUM}\s*(?:-|–|~|到|至)\s*{_CUR}?\s*{_NUM}\s*{_CUR}")
_CN_UNDER = re.compile(rf"(?:不超过|不到|低于|少于|小于){_CUR}?\s*{_NUM}\s*{_CUR}?|{_CUR}?\s*{_NUM}\s*{_CUR}?\s*(?:以下|以内|之内)")
_CN_OVER = re.compile(rf"(?:超过|高于|大于|多于){_CUR}?\s*{_NUM}\s*{_CUR}?|{_CUR}?\s*{_NUM}\s*{_CUR}?\s*以上")

_COUNTS = load_vocabulary("counts")  # inference/vocabulary/counts.yaml
# What list records count, each with the words (en, zh) a question or a record may use for it:
# general vocabulary of apps' lists, no app's or task's own labels.
_COUNTED: tuple[tuple[str, ...], ...] = tuple(
    _COUNTS.words(group) for group in _COUNTS.groups if group.startswith("counted_"))
# Words after a number that make it an amount of something else (money, time, distance, size).
_NOT_COUNTED = frozenset(_COUNTS.words("not_counted"))
_MAGNITUDES = {"k": 1e3, "thousand": 1e3, "千": 1e3, "w": 1e4, "万": 1e4, "m": 1e6, "million": 1e6,
               "mn": 1e6, "b": 1e9, "bn": 1e9, "billion": 1e9, "亿": 1e8}
# A magnitude after a number ("10k", "1.2M", "2 million", "120万"), matched ignoring case.
MAGNITUDE = r"(?:thousand|million|billion|bn|mn|[kmbw](?![a-z])|[千万亿])"
_CN_NUMERAL = r"[一两二三四五六七八九十百千]+"


def _count_number(group: str = "") -> str:
    """A count as a question writes it ("1,000", "10k", "a million", "100万", "百万"), its groups
    named ``n`` and ``mag`` with ``group`` after them."""
    return (rf"(?P<n{group}>\d+(?:,\d{{3}})*(?:\.\d+)?|an?|one|{_CN_NUMERAL}(?=[万亿]))"
            rf"\s*(?P<mag{group}>{MAGNITUDE})?")


_MORE = _COUNTS.alternation("more_en")
_FEWER = _COUNTS.alternation("fewer_en")
_EN_COUNT = re.compile(rf"\b(?P<cmp>{_MORE}|{_FEWER})\s+{_count_number()}\+?\s+(?P<noun>[a-z]{{3,}})")
_CN_MORE = _COUNTS.alternation("more_zh")
_CN_FEWER = _COUNTS.alternation("fewer_zh")
_CN_NOUNS = "|".join(sorted((w for words in _COUNTED for w in words if not w.isascii()), key=len, reverse=True))
_CN_UNIT = r"\s*[个位人次条]?\s*"
# "粉丝超过100万", "超过1万人评价", "10万粉丝以上".
_CN_COUNT = re.compile(
    rf"(?P<noun>{_CN_NOUNS})(?:数量|数|量)?\s*(?P<cmp>{_CN_FEWER}|{_CN_MORE})\s*{_count_number()}"
    rf"|(?P<cmp2>{_CN_FEWER}|{_CN_MORE})\s*{_count_number('2')}{_CN_UNIT}(?P<noun2>{_CN_NOUNS})"
    rf"|{_count_number('3')}{_CN_UNIT}(?P<noun3>{_CN_NOUNS})(?:数量|数|量)?\s*(?P<cmp3>以上|以下)")

# States of a list's records (a parcel, a permission, an order, a message), each with the words
# (en, zh) that name it: general vocabulary, no app's own labels (inference/vocabulary/record_states.yaml).
_STATES: dict[str, tuple[str, ...]] = {
    group.replace("_", " "): words for group, words in load_vocabulary("record_states").groups.items()}
_STATE_WORDS = sorted(((w, state) for state, words in _STATES.items() for w in words),
                      key=lambda pair: len(pair[0]), reverse=True)
_STATE = re.compile("|".join(
    rf"(?<![a-z]){re.escape(w)}(?![a-z])" if w.isascii() else re.escape(w) for w, _ in _STATE_WORDS))
_STATE_OF = dict(_STATE_WORDS)

# One record by its place: "number 7", "#7", "No. 7", "ranked 3rd", "the 7th film", "第7名", "排名第三".
_EN_ORDINALS = {"second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
                "ninth": 9, "tenth": 10}
_POSITION = re.compile(
    r"\b(?:number|no\.)\s*(\d{1,3})\b|(?<![\w#])#\s*(\d{1,3})\b|"
    r"\brank(?:ed|s|ing)?\s+(?:number\s+|no\.\s*|#\s*)?(\d{1,3})(?:st|nd|rd|th)?\b|"
    r"(?<!\bon )\bthe\s+(\d{1,3})(?:st|nd|rd|th)\s+(?!of\b|day\b|week\b|month\b|year\b)[a-z]{3,}|"
    r"\bthe\s+(" + "|".join(_EN_ORDINALS) + r")\s+(?!of\b|day\b|week\b|month\b|year\b|half\b)[a-z]{3,}|"
    r"排(?:名|行)?第\s*(\d{1,3}|[一两二三四五六七八九十百]+)|"
    r"第\s*(\d{1,3}|[一两二三四五六七八九十百]+)\s*(?:名|位|个|部|首|条|本|款|家|项|本书|支)")

_TIME_WORDS = load_vocabulary("time_words")  # inference/vocabulary/time_words.yaml
# Times of day, in minutes after midnight.
_PARTS_OF_DAY: tuple[tuple[re.Pattern[str], int, int], ...] = (
    (re.compile(_TIME_WORDS.alternation("question_morning")), 0, 12 * 60),
    (re.compile(_TIME_WORDS.alternation("question_noon")), 11 * 60, 14 * 60),
    (re.compile(_TIME_WORDS.alternation("question_afternoon")), 12 * 60, 18 * 60),
    (re.compile(_TIME_WORDS.alternation("question_evening")), 18 * 60, 24 * 60),
)
_AFTER_CLOCK = re.compile(r"\bafter\s+(\d{1,2})(?::(\d{2}))?\s*(am|pm)?|(\d{1,2})(?:[:点](\d{2}))?\s*点?(?:以后|之后|后)")
_BEFORE_CLOCK = re.compile(r"\bbefore\s+(\d{1,2})(?::(\d{2}))?\s*(am|pm)?|(\d{1,2})(?:[:点](\d{2}))?\s*点?(?:以前|之前|前)")

_DATES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(_TIME_WORDS.alternation(f"question_{kind}")), kind)
    for kind in ("last_month", "this_month", "last_week", "this_week", "yesterday", "today"))
_YEAR = re.compile(r"\bin (20\d\d)\b|(20\d\d)\s*年")
_MONTH_NAMES = ("january february march april may june july august september october november december")
_MONTHS = {name: number for number, name in enumerate(_MONTH_NAMES.split(), 1)} | {
    name[:3]: number for number, name in enumerate(_MONTH_NAMES.split(), 1)}
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december|" \
         r"jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)"
_EN_MONTH_RANGE = re.compile(rf"\b(?:from|between)\s+{_MONTH}\s+(?:to|and|through|till|until)\s+{_MONTH}\b|"
                             rf"\b{_MONTH}\s*(?:-|–|to)\s*{_MONTH}\b")
_CN_MONTH_RANGE = re.compile(r"(\d{1,2})\s*月?\s*(?:-|–|~|到|至)\s*(\d{1,2})\s*月")


# An amount of money, distance or time ("500元以内", "1 km", "$10"): what a filter compares against.
_AMOUNT = re.compile(
    r"[$¥￥€£]\s*\d[\d.,]*|\d[\d.,]*\s*(?:元|块钱|块|公里|千米|米|分钟|小时|km\b|kilomet\w*|miles?\b|mins?\b|"
    r"minutes?\b|hours?\b|%)(?:以下|以上|以内|之内|左右)?", re.IGNORECASE)
# A date or a time of day ("Sept 12", "12 May", "9月12日", "9点前", "after 18:00", "this afternoon"):
# when the answer happened, which a filter or the page's own date picker settles, never a search.
_MONTH_WORD = (r"(?:january|february|march|april|may|june|july|august|september|october|november|december|"
               r"jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?")
_WHEN = re.compile(
    rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_WORD}|{_MONTH_WORD}(?:\s+\d{{1,2}}(?:st|nd|rd|th)?"
    rf"(?:\s*[-–]\s*\d{{1,2}})?)?)(?![\w'])|\d{{1,2}}\s*月\s*(?:\d{{1,2}}\s*[日号])?|(?<![\d.])\d{{1,2}}\s*[日号](?![线楼])|"
    r"(?<![\w.])(?:20\d\d\s*年|[12]?\d(?::\d\d)?\s*(?:am|pm)\b|[12]?\d:\d\d)|(?<![\d.])[12]?\d\s*点(?:\s*\d{1,2}\s*分?|半)?"
    r"(?:以前|之前|以后|之后|前|后)?|" + "|".join(p.pattern for p, _, _ in _PARTS_OF_DAY)
    + "|" + "|".join(p.pattern for p, _ in _DATES) + r"|\bright now\b", re.IGNORECASE)
_SHAPE = re.compile("|".join(p.pattern for p in (_TABLE, _NAMES, _SENTENCE, _AMOUNT, _WHEN, _TOP_N, _POSITION)),
                    re.IGNORECASE)


def strip_answer_shape(question: str) -> str:
    """``question`` without the words that only shape the answer: its format ("as a table",
    "列个表", "only the names"), its count ("top 5", "前五名"), the amounts its filters compare
    against ("1 km", "500元以内") and its dates and times ("Sept 12", "9月12日", "早上9点前",
    "tonight"). They are never part of what to look for, and cut out they never join a name
    ("上海500元")."""
    return _SHAPE.sub(",", question)


def read_answer_request(question: str) -> AnswerRequest:
    """The format, order, count and filters ``question`` asks for (defaults: a list, as shown)."""
    text = question.casefold()
    fmt = (AnswerFormat.TABLE if _TABLE.search(text) else AnswerFormat.NAMES if _NAMES.search(text)
           else AnswerFormat.SENTENCE if _SENTENCE.search(text) else AnswerFormat.LIST)
    order, limit = _order(text)
    count = _count_range(text)
    # "More than 1000 followers" counts followers; it is no price.
    price = _price(text.replace(count.words, " ") if count else text)
    said = _STATE.search(text)
    state = RecordState(state=_STATE_OF[said.group(0)], words=said.group(0)) if said else None
    return AnswerRequest(format=fmt, order=order, limit=limit, position=_position(text), price=price,
                         count=count, state=state, time_of_day=_time_of_day(text), dates=_dates(text))


def record_state(text: str) -> str | None:
    """The state ``text`` shows, by its longest state word ("Not allowed": denied); None: none."""
    found = [_STATE_OF[m.group(0)] for m in _STATE.finditer(text.casefold())]
    return found[0] if len(set(found)) == 1 else None


def read_magnitude(number: str, magnitude: str | None) -> float | None:
    """``number`` (digits, "a", "one" or a Chinese numeral) times ``magnitude`` ("k", "million",
    "万"...); None when it is no number or a word alone ("a" without "million")."""
    factor = _MAGNITUDES.get((magnitude or "").casefold(), 1.0)
    word = number.casefold()
    if word in ("a", "an", "one"):
        return factor if magnitude else None
    if re.fullmatch(_CN_NUMERAL, word):
        value = _cn_numeral(word)
        return value * factor if value is not None else None
    try:
        return float(word.replace(",", "")) * factor
    except ValueError:
        return None


def _cn_numeral(word: str) -> int | None:
    """A Chinese numeral below ten thousand ("七", "十二", "三百", "百", "两千五百")."""
    total, digit = 0, None
    for char in word:
        if char in _CN_DIGITS and char != "十":
            digit = _CN_DIGITS[char]
        elif char in "十百千":
            total += (digit if digit is not None else 1) * {"十": 10, "百": 100, "千": 1000}[char]
            digit = None
        else:
            return None
    return total + (digit or 0)


def _counted_words(noun: str) -> tuple[str, ...] | None:
    """The words for what ``noun`` counts, ``noun`` first; None when it counts no such thing."""
    folded = noun.casefold()
    singular = folded[:-1] if folded.endswith("s") and not folded.endswith("ss") else folded
    for words in _COUNTED:
        if folded in words or f"{singular}s" in words:
            return tuple(dict.fromkeys((folded, *words)))
    if folded in _NOT_COUNTED or not folded.endswith("s") or folded.endswith("ss") or not folded.isascii():
        return None
    return (folded, singular)  # a plural noun the table does not know counts itself


def _count_range(text: str) -> CountRange | None:
    for match in _EN_COUNT.finditer(text):
        value = read_magnitude(match["n"], match["mag"])
        counted = _counted_words(match["noun"])
        if value is not None and counted is not None:
            side = "low" if re.fullmatch(_MORE, match["cmp"]) else "high"
            return CountRange(**{side: value}, unit=counted[0], counted=counted, words=match.group(0).strip())
    for match in _CN_COUNT.finditer(text):
        number, magnitude, noun, comparison = next(
            (match[f"n{i}"], match[f"mag{i}"], match[f"noun{i}"], match[f"cmp{i}"])
            for i in ("", "2", "3") if match[f"n{i}"])
        value = read_magnitude(number, magnitude)
        counted = _counted_words(noun)
        if value is not None and counted is not None:
            more = comparison == "以上" or (comparison != "以下" and re.fullmatch(_CN_MORE, comparison))
            side = "low" if more else "high"
            return CountRange(**{side: value}, unit=counted[0], counted=counted, words=match.group(0).strip())
    return None


def _position(text: str) -> int | None:
    match = _POSITION.search(text)
    if match is None:
        return None
    word = next(g for g in match.groups() if g)
    value = int(word) if word.isdigit() else _EN_ORDINALS.get(word) or _cn_numeral(word)
    return value if value else None


def _count(word: str) -> int:
    if word.isdigit():
        return int(word)
    return _EN_NUMBERS.get(word) or _CN_DIGITS.get(word, 1)


def _order(text: str) -> tuple[Order, int | None]:
    top = _TOP_N.search(text)
    limit = _count(next(g for g in top.groups() if g)) if top else None
    several = _N_CHEAPEST.search(text)
    for pattern, order in ((_CHEAPEST, Order.CHEAPEST), (_DEAREST, Order.DEAREST), (_BEST_RATED, Order.BEST_RATED),
                           (_NEWEST, Order.NEWEST), (_MOST_FREQUENT, Order.MOST_FREQUENT)):
        if pattern.search(text):
            # "the cheapest one" is one record; "the 3 cheapest" or "top 5 cheapest" are more.
            return order, limit or (_count(next(g for g in several.groups() if g)) if several else 1)
    return Order.AS_SHOWN, limit


def _price(text: str) -> NumberRange | None:
    between = _BETWEEN.search(text)
    if between:
        low, high = (float(g) for g in between.groups() if g)
        return NumberRange(low=min(low, high), high=max(low, high), words=between.group(0).strip())
    for pattern, side in ((_UNDER, "high"), (_CN_UNDER, "high"), (_OVER, "low"), (_CN_OVER, "low")):
        match = pattern.search(text)
        if match:
            value = float(next(g for g in match.groups() if g))
            return NumberRange(**{side: value}, words=match.group(0).strip())
    return None


def _clock(hour: str, minute: str | None, half: str | None) -> int:
    value = int(hour) % 24
    if half == "pm" and value < 12:
        value += 12
    return value * 60 + int(minute or 0)


def _time_of_day(text: str) -> TimeOfDay | None:
    after = _AFTER_CLOCK.search(text)
    if after:
        hour, minute, half = (after.group(1), after.group(2), after.group(3)) if after.group(1) else (
            after.group(4), after.group(5), None)
        return TimeOfDay(start=_clock(hour, minute, half), end=24 * 60, words=after.group(0).strip())
    before = _BEFORE_CLOCK.search(text)
    if before and (before.group(1) or "点" in before.group(0) or ":" in before.group(0)):
        hour, minute, half = (before.group(1), before.group(2), before.group(3)) if before.group(1) else (
            before.group(4), before.group(5), None)
        return TimeOfDay(start=0, end=_clock(hour, minute, half), words=before.group(0).strip())
    for pattern, start, end in _PARTS_OF_DAY:
        match = pattern.search(text)
        if match:
            return TimeOfDay(start=start, end=end, words=match.group(0))
    return None


def _month_range(text: str) -> DateRange | None:
    english = _EN_MONTH_RANGE.search(text)
    if english:
        first, last = (_MONTHS[g[:3] if g not in _MONTHS else g] for g in english.groups() if g)
        return DateRange(kind=f"months:{first}:{last}", words=english.group(0).strip())
    chinese = _CN_MONTH_RANGE.search(text)
    if chinese and 1 <= int(chinese.group(1)) <= 12 and 1 <= int(chinese.group(2)) <= 12:
        return DateRange(kind=f"months:{int(chinese.group(1))}:{int(chinese.group(2))}",
                         words=chinese.group(0).strip())
    return None


def _dates(text: str) -> DateRange | None:
    months = _month_range(text)
    if months is not None:
        return months
    for pattern, kind in _DATES:
        match = pattern.search(text)
        if match:
            return DateRange(kind=kind, words=match.group(0))
    year = _YEAR.search(text)
    if year:
        return DateRange(kind=f"year:{year.group(1) or year.group(2)}", words=year.group(0).strip())
    return None
