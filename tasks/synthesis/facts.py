"""Typed facts from captures, and what changed between two runs (subscriptions).

A fact is (app, entity, attribute, value, unit, the text it was read from,
the capture). Facts come from the same item detection as the extractive
report, restricted to the items that match the query when any do (a
subscription to "Big Mac price" should not alert on the fries). Two fact sets
are compared by (app, entity, attribute): a changed value, a value that
appeared or disappeared, an item that is new or gone. Equal sets give an
empty :class:`ChangeSummary` whose text says "No change".
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum

from pydantic import Field

from core.models import AppStatus, Capture, Frozen, Query, utcnow
from tasks.synthesis.grounding import normalize_text
from tasks.synthesis.items import Item, detect_items, read_query_terms
from tasks.synthesis.values import MeasureKind

__all__ = ["Change", "ChangeKind", "ChangeSummary", "Fact", "FactSet", "diff_facts", "extract_facts"]



class Fact(Frozen):
    """One value of one item in one app, with its evidence."""

    app: str  # the app's label (its package when no label is known)
    package: str
    entity: str
    attribute: MeasureKind
    value: float | None
    unit: str
    text: str
    capture_id: str

    @property
    def key(self) -> tuple[str, str, MeasureKind]:
        return (self.package, normalize_text(self.entity), self.attribute)


class FactSet(Frozen):
    """The facts of one run of a query."""

    query: str
    run_id: str
    facts: tuple[Fact, ...] = ()
    taken_at: datetime = Field(default_factory=utcnow)


class ChangeKind(StrEnum):
    VALUE_CHANGED = "value_changed"  # price changed, delivery time changed ...
    VALUE_ADDED = "value_added"  # an item now shows an attribute it did not show
    VALUE_REMOVED = "value_removed"
    ITEM_ADDED = "item_added"  # a new item matching the query
    ITEM_REMOVED = "item_removed"


class Change(Frozen):
    """One difference between two runs."""

    kind: ChangeKind
    app: str
    entity: str
    attribute: MeasureKind | None = None
    before: str | None = None
    after: str | None = None
    delta: float | None = None  # after - before, when both are numbers in the same unit
    capture_id: str | None = None  # evidence in the newer run

    def describe(self) -> str:
        """One line a person reads in a notification."""
        where = f"{self.app} · {self.entity}"
        if self.kind is ChangeKind.ITEM_ADDED:
            return f"{where}: new ({self.after})" if self.after else f"{where}: new"
        if self.kind is ChangeKind.ITEM_REMOVED:
            return f"{where}: no longer shown"
        label = self.attribute.value if self.attribute else "value"
        if self.kind is ChangeKind.VALUE_ADDED:
            return f"{where}: {label} now {self.after}"
        if self.kind is ChangeKind.VALUE_REMOVED:
            return f"{where}: {label} no longer shown (was {self.before})"
        delta = f" ({self.delta:+g})" if self.delta is not None else ""
        return f"{where}: {label} {self.before} -> {self.after}{delta}"


class ChangeSummary(Frozen):
    """Every change between two fact sets of the same query."""

    query: str
    before_run: str
    after_run: str
    changes: tuple[Change, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    @property
    def text(self) -> str:
        if not self.changes:
            return f"No change for “{self.query}” since run {self.before_run}."
        lines = [f"{len(self.changes)} change(s) for “{self.query}” since run {self.before_run}:"]
        lines += [f"- {change.describe()}" for change in self.changes]
        return "\n".join(lines)


def _facts_of(item: Item, app: str) -> list[Fact]:
    facts: list[Fact] = []
    seen: set[MeasureKind] = set()
    for value in item.values:
        if value.kind in seen:
            continue  # the first value of a kind is the one next to the name
        seen.add(value.kind)
        facts.append(Fact(app=app, package=item.package, entity=item.name, attribute=value.kind,
                          value=value.value, unit=value.unit, text=value.text,
                          capture_id=item.capture_id))
    return facts


def extract_facts(query: Query, run_id: str, captures: Sequence[Capture],
                  apps: Sequence[AppStatus] = (), search_terms: Sequence[str] = ()) -> FactSet:
    """The facts of a run: values of the items matching the query (all items if none match)."""
    labels = {a.package: a.app_label for a in apps}
    terms = read_query_terms(" ".join([query.text, *search_terms]),
                             exclude=[*labels.values(), *labels.keys()])
    facts: list[Fact] = []
    seen: set[tuple[str, str, MeasureKind]] = set()
    by_package: dict[str, list[Item]] = {}
    for capture in captures:
        by_package.setdefault(capture.package, []).extend(detect_items(capture, terms))
    for package, items in by_package.items():
        with_values = [i for i in items if i.values]
        best = max((i.relevance for i in with_values), default=0.0)
        chosen = [i for i in with_values if i.relevance >= 0.5 * best] if best > 0 else with_values
        for item in chosen:
            for fact in _facts_of(item, labels.get(package, package)):
                if fact.key not in seen:
                    seen.add(fact.key)
                    facts.append(fact)
    return FactSet(query=query.text, run_id=run_id, facts=tuple(facts))


def _same(a: Fact, b: Fact) -> bool:
    if a.value is not None and b.value is not None and a.unit == b.unit:
        return abs(a.value - b.value) < 1e-9
    return normalize_text(a.text) == normalize_text(b.text)


def diff_facts(before: FactSet, after: FactSet) -> ChangeSummary:
    """What changed from ``before`` to ``after``, item by item and attribute by attribute."""
    old = {f.key: f for f in before.facts}
    new = {f.key: f for f in after.facts}
    old_items = {(k[0], k[1]) for k in old}
    new_items = {(k[0], k[1]) for k in new}
    changes: list[Change] = []
    reported_items: set[tuple[str, str]] = set()
    for key, fact in new.items():
        item = (key[0], key[1])
        if item not in old_items:
            if item not in reported_items:
                reported_items.add(item)
                shown = ", ".join(f"{f.attribute.value} {f.text}" for k, f in new.items()
                                  if (k[0], k[1]) == item)
                changes.append(Change(kind=ChangeKind.ITEM_ADDED, app=fact.app, entity=fact.entity,
                                      after=shown, capture_id=fact.capture_id))
            continue
        previous = old.get(key)
        if previous is None:
            changes.append(Change(kind=ChangeKind.VALUE_ADDED, app=fact.app, entity=fact.entity,
                                  attribute=fact.attribute, after=fact.text,
                                  capture_id=fact.capture_id))
        elif not _same(previous, fact):
            delta = None
            if previous.value is not None and fact.value is not None and previous.unit == fact.unit:
                delta = round(fact.value - previous.value, 6)
            changes.append(Change(kind=ChangeKind.VALUE_CHANGED, app=fact.app, entity=fact.entity,
                                  attribute=fact.attribute, before=previous.text, after=fact.text,
                                  delta=delta, capture_id=fact.capture_id))
    for key, fact in old.items():
        item = (key[0], key[1])
        if item not in new_items:
            if item not in reported_items:
                reported_items.add(item)
                changes.append(Change(kind=ChangeKind.ITEM_REMOVED, app=fact.app, entity=fact.entity))
        elif key not in new:
            changes.append(Change(kind=ChangeKind.VALUE_REMOVED, app=fact.app, entity=fact.entity,
                                  attribute=fact.attribute, before=fact.text))
    return ChangeSummary(query=after.query, before_run=before.run_id, after_run=after.run_id,
                         changes=tuple(changes))
