"""Text templates, conditions and seeded daily variation of app data.

Templates (``"{name} ¥{price:.2f}"``) read a :class:`Scope`: the list item,
then the screen's record, then globals. Conditions (``"status == Allowed"``)
use the same lookup. Both are documented in ``device_farm/sim/README.md``.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, field
from datetime import date, timedelta

from pydantic import JsonValue

from device_farm.sim.spec import Record, Variation

__all__ = [
    "Scope",
    "apply_variation",
    "check_condition",
    "expand_template",
    "is_visible_on",
    "seeded_random",
]

_FIELD_RE = re.compile(r"\{\{|\}\}|\{([A-Za-z_][\w.]*)(?::([^{}]*))?\}")
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


@dataclass(frozen=True)
class Scope:
    """Where template fields come from, innermost first."""

    item: Record | None = None
    record: Record | None = None
    globals: dict[str, str] = field(default_factory=dict)
    logged_in: bool = False
    start_day: date = date(2025, 6, 23)

    def with_item(self, item: Record) -> Scope:
        """The same scope with ``item`` as the innermost record."""
        return Scope(item, self.record, self.globals, self.logged_in, self.start_day)

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


def _format(value: JsonValue, spec: str | None, scope: Scope) -> str:
    if value is None:
        return ""
    if spec in ("date", "md", "weekday") and isinstance(value, int | float):
        day = scope.start_day + timedelta(days=int(value))
        if spec == "date":
            return day.isoformat()
        return f"{day:%m-%d}" if spec == "md" else _WEEKDAYS[day.weekday()]
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
        return _format(scope.lookup(match.group(1)), match.group(2), scope)

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


def seeded_random(*parts: object) -> random.Random:
    """A Random seeded stably (not with ``hash()``, which varies per process)."""
    digest = hashlib.blake2b("|".join(str(p) for p in parts).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


def _vary_value(value: JsonValue, rule: Variation, rng: random.Random) -> JsonValue:
    if rule.spread and isinstance(value, int | float) and not isinstance(value, bool):
        varied = value * (1 + rng.uniform(-rule.spread, rule.spread))
        rounded = round(round(varied / rule.step) * rule.step, 6)
        return int(rounded) if isinstance(value, int) else rounded
    if rule.pick and isinstance(value, list):
        keep = sorted(rng.sample(range(len(value)), min(rule.pick, len(value))))
        return [value[i] for i in keep]
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
            if rule.field in changed:
                rng = seeded_random(seed, day, source, record.get("id", index), rule.field)
                changed[rule.field] = _vary_value(changed[rule.field], rule, rng)
        out.append(changed)
    return out
