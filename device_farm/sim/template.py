"""Text templates, conditions and seeded daily variation of app data.

Templates (``"{name} ¥{price:.2f}"``) read a :class:`Scope`: the list item,
then the screen's record, then globals. Conditions (``"status == Allowed"``)
use the same lookup. Both are documented in ``device_farm/sim/README.md``.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, field, replace
from datetime import date, timedelta

from pydantic import JsonValue

from device_farm.sim.spec import Record, Variation

__all__ = [
    "Scope",
    "apply_variation",
    "check_condition",
    "expand_template",
    "is_on_date",
    "is_visible_on",
    "resolve_day",
    "seeded_random",
]

# ``{field}``, ``{field:spec}``, and date arithmetic on the simulated day: ``{today+2:%m-%d}``.
_FIELD_RE = re.compile(r"\{\{|\}\}|\{(today[+-]\d+|[A-Za-z_][\w.]*)(?::([^{}]*))?\}")
_DAY_EXPR_RE = re.compile(r"^today(?:([+-])(\d+))?$")
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


@dataclass(frozen=True)
class Scope:
    """Where template fields come from, innermost first."""

    item: Record | None = None
    record: Record | None = None
    globals: dict[str, str] = field(default_factory=dict)
    logged_in: bool = False
    start_day: date = date(2025, 6, 23)
    today: date | None = None  # the simulated date; None = ``start_day``

    def with_item(self, item: Record) -> Scope:
        """The same scope with ``item`` as the innermost record."""
        return replace(self, item=item)

    def lookup(self, name: str) -> JsonValue:
        """The value of ``name`` (dotted for nested records); None when missing."""
        head, _, rest = name.partition(".")
        if head == "record" and rest:
            return _dig(self.record, rest)
        for source in (self.item, self.record):
            if source is not None and head in source:
                return _dig(source, name)
        return self.globals.get(name)


def _dig(record: Record | None, dotted: str) -> JsonValue:
    value: JsonValue = record
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def resolve_day(expression: str, today: date) -> date | None:
    """``today``, ``today+N`` or ``today-N`` as a date; None when it is not such an expression."""
    match = _DAY_EXPR_RE.match(expression.strip())
    if match is None:
        return None
    sign, count = match.groups()
    days = int(count or 0)
    return today + timedelta(days=-days if sign == "-" else days)


def _format_date(day: date, spec: str | None) -> str:
    """``date`` (ISO), ``md`` (MM-DD), ``weekday`` (Mon), or any strftime spec (``%m月%d日``)."""
    if not spec or spec == "date":
        return day.isoformat()
    if spec == "md":
        return f"{day:%m-%d}"
    if spec == "weekday":
        return _WEEKDAYS[day.weekday()]
    return day.strftime(spec)


def _format(value: JsonValue, spec: str | None, scope: Scope) -> str:
    if value is None:
        return ""
    if spec in ("date", "md", "weekday") and isinstance(value, int | float):
        return _format_date(scope.start_day + timedelta(days=int(value)), spec)
    if spec:
        try:
            return format(value, spec)
        except (ValueError, TypeError):
            return str(value)  # a wrong spec in data shows the raw value, like a lenient app
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def expand_template(text: str, scope: Scope) -> str:
    """Fill ``{field}`` / ``{field:spec}`` placeholders from ``scope``."""
    if "{" not in text and "}" not in text:
        return text

    def _sub(match: re.Match[str]) -> str:
        whole = match.group(0)
        if whole in ("{{", "}}"):
            return whole[0]
        name, spec = match.group(1), match.group(2)
        if name.startswith("today"):
            day = resolve_day(name, scope.today or scope.start_day)
            if day is not None:
                return _format_date(day, spec)
        return _format(scope.lookup(name), spec, scope)

    return _FIELD_RE.sub(_sub, text)


def _truthy(value: JsonValue) -> bool:
    if isinstance(value, str):
        return value.strip().lower() not in ("", "false", "0", "no")
    return bool(value)


def check_condition(condition: str | None, scope: Scope) -> bool:
    """Evaluate a README condition (``logged_in``, ``not x``, ``x == y``, ``x != y``)."""
    if condition is None:
        return True
    text = condition.strip()
    for op in ("==", "!="):
        if op in text:
            left, right = (part.strip() for part in text.split(op, 1))
            equal = _format(scope.lookup(left), None, scope) == expand_template(right, scope)
            return equal if op == "==" else not equal
    negate = text.startswith("not ")
    name = text[4:].strip() if negate else text
    if name in ("true", "false"):
        result = name == "true"
    elif name == "logged_in":
        result = scope.logged_in
    else:
        result = _truthy(scope.lookup(name))
    return not result if negate else result


def is_visible_on(record: Record, day: int) -> bool:
    """Records with a ``day`` field appear on that simulated day."""
    when = record.get("day")
    return not isinstance(when, int | float) or isinstance(when, bool) or when <= day


def is_on_date(value: JsonValue, day: date, today: date, start_day: date) -> bool:
    """Whether a record's date field names ``day``.

    The field may hold an ISO date (``"2025-06-25"``), a day number relative to
    the clock's start day (like ``day``), or ``today+N`` (relative to the
    simulated day, so the record repeats: the same showtimes every day).
    """
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, int | float):
        return start_day + timedelta(days=int(value)) == day
    if not isinstance(value, str):
        return False
    relative = resolve_day(value, today)
    if relative is not None:
        return relative == day
    try:
        return date.fromisoformat(value.strip()) == day
    except ValueError:
        return False


def seeded_random(*parts: object) -> random.Random:
    """A Random seeded stably (not with ``hash()``, which varies per process)."""
    digest = hashlib.blake2b("|".join(str(p) for p in parts).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")


def _vary_number(value: float, rule: Variation, rng: random.Random) -> float:
    varied = value * (1 + rng.uniform(-rule.spread, rule.spread))
    return round(round(varied / rule.step) * rule.step, 6)


def _vary_text(text: str, rule: Variation, rng: random.Random) -> str:
    """Vary the numbers written in ``text`` (``in_text``), keeping each one's decimals."""
    matches = list(_NUMBER_RE.finditer(text))
    if rule.in_text == "first":
        matches = matches[:1]
    elif rule.in_text == "last":
        matches = matches[-1:]
    out, end = [], 0
    for match in matches:
        written = match.group(0)
        decimals = len(written.partition(".")[2])
        out += [text[end:match.start()], f"{_vary_number(float(written), rule, rng):.{decimals}f}"]
        end = match.end()
    return "".join(out) + text[end:]


def _vary_value(value: JsonValue, rule: Variation, rng: random.Random) -> JsonValue:
    if rule.spread and isinstance(value, int | float) and not isinstance(value, bool):
        rounded = _vary_number(value, rule, rng)
        return int(rounded) if isinstance(value, int) else rounded
    if rule.spread and rule.in_text and isinstance(value, str):
        return _vary_text(value, rule, rng)
    if rule.pick and isinstance(value, list):
        keep = sorted(rng.sample(range(len(value)), min(rule.pick, len(value))))
        return [value[i] for i in keep]
    if rule.spread and isinstance(value, list):  # a list of numbers (or texts): each one varies
        return [_vary_value(v, rule, rng) for v in value]
    return value


def _vary_path(value: JsonValue, path: list[str], rule: Variation, rng: random.Random) -> JsonValue:
    """``value`` with the field at ``path`` varied; lists on the way apply the rest to each item."""
    if not path:
        return _vary_value(value, rule, rng)
    if isinstance(value, list):
        return [_vary_path(v, path, rule, rng) for v in value]
    if isinstance(value, dict) and path[0] in value:
        return {**value, path[0]: _vary_path(value[path[0]], path[1:], rule, rng)}
    return value


def apply_variation(
    records: list[Record], rules: tuple[Variation, ...], source: str, seed: int, day: int
) -> list[Record]:
    """``records`` as they look on ``day``: unchanged on day 0, varied per day after."""
    applicable = [r for r in rules if r.source == source]
    if day <= 0 or not applicable:
        return records
    out: list[Record] = []
    for index, record in enumerate(records):
        changed = dict(record)
        for rule in applicable:
            head, *rest = rule.field.split(".")
            if head in changed:
                rng = seeded_random(seed, day, source, record.get("id", index), rule.field)
                changed[head] = _vary_path(changed[head], rest, rule, rng)
        out.append(changed)
    return out
