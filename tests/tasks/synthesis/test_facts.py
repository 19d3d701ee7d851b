"""Facts from captures and the change summary between two runs of a subscription."""

from __future__ import annotations

from core.models import AppStatus, Query, SubTaskStatus
from droidretriever.testing import draw_capture, menu_card
from tasks.synthesis.facts import ChangeKind, diff_facts, extract_facts
from tasks.synthesis.values import MeasureKind

QUERY = Query(text="Big Mac price on Meituan")
APPS = (AppStatus(app_label="Meituan", package="com.sankuai.meituan", status=SubTaskStatus.COMPLETED),)


def day(run_id: str, *cards: tuple[str, ...]):  # type: ignore[no-untyped-def]
    drawn = draw_capture(f"cap-{run_id}", "com.sankuai.meituan",
                         [menu_card(200 + 500 * i, *card) for i, card in enumerate(cards)],
                         run_id=run_id)
    return extract_facts(QUERY, run_id, [drawn.capture], APPS)


def test_facts_are_typed_and_keep_their_evidence() -> None:
    facts = day("run-1", ("Big Mac Meal", "¥25.5", "月售 2000+", "30分钟"), ("McChicken", "¥19.9"))
    by_attribute = {f.attribute: f for f in facts.facts}
    assert set(by_attribute) == {MeasureKind.PRICE, MeasureKind.SALES, MeasureKind.DELIVERY_TIME}
    price = by_attribute[MeasureKind.PRICE]
    assert (price.app, price.entity, price.value, price.unit) == ("Meituan", "Big Mac Meal", 25.5, "¥")
    assert price.capture_id == "cap-run-1"
    # The McChicken does not match the query, so it is not watched.
    assert all(f.entity == "Big Mac Meal" for f in facts.facts)


def test_price_and_time_changes_are_reported() -> None:
    before = day("run-1", ("Big Mac Meal", "¥25.5", "30分钟"), ("Big Mac Burger", "¥21"))
    after = day("run-2", ("Big Mac Meal", "¥23.9", "25分钟"), ("Big Mac Double", "¥29"))
    summary = diff_facts(before, after)
    assert summary.changed
    kinds = {(c.kind, c.entity, c.attribute) for c in summary.changes}
    assert (ChangeKind.VALUE_CHANGED, "Big Mac Meal", MeasureKind.PRICE) in kinds
    assert (ChangeKind.VALUE_CHANGED, "Big Mac Meal", MeasureKind.DELIVERY_TIME) in kinds
    assert (ChangeKind.ITEM_ADDED, "Big Mac Double", None) in kinds
    assert (ChangeKind.ITEM_REMOVED, "Big Mac Burger", None) in kinds
    price = next(c for c in summary.changes if c.attribute is MeasureKind.PRICE)
    assert price.delta == -1.6 and price.capture_id == "cap-run-2"
    assert "Meituan · Big Mac Meal: Price ¥25.5 -> ¥23.9 (-1.6)" in summary.text


def test_values_appearing_and_disappearing() -> None:
    before = day("run-1", ("Big Mac Meal", "¥25.5", "满30减5"))
    after = day("run-2", ("Big Mac Meal", "¥25.5", "月售 2000+"))
    changes = {(c.kind, c.attribute) for c in diff_facts(before, after).changes}
    assert changes == {(ChangeKind.VALUE_ADDED, MeasureKind.SALES),
                       (ChangeKind.VALUE_REMOVED, MeasureKind.PROMOTION)}


def test_no_change_when_equal() -> None:
    before = day("run-1", ("Big Mac Meal", "¥25.5", "月售 2000+"))
    after = day("run-2", ("Big Mac Meal", "¥25.50", "月售 2000+"))
    summary = diff_facts(before, after)
    assert not summary.changed
    assert summary.text.startswith("No change")
