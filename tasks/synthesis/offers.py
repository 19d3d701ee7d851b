"""Labelled rows of a detail page: ``"赠品  赠 原装保护壳 + 钢化膜"``, ``"会员  88VIP 专享95折"``.

Product and store pages print their terms as rows: a short label, then two
spaces or a colon, then the text (``"支付优惠  花呗分期12期免息"``,
``"优惠活动: 满25减4 · 首单立减3元"``). The label says what the row is about,
so a row is an attribute of the item above it and never the start of a new
item. For the offers a comparison needs (gifts, payment and membership
discounts, promotions, trade-in) the whole text is the value: its numbers are
amounts of the offer (``¥30`` off), not the item's price.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from tasks.synthesis.grounding import normalize_text
from tasks.synthesis.values import MeasureKind

__all__ = ["AttributeRow", "read_attribute_row"]

# Bounded label, then a colon or a run of two or more spaces: no backtracking blow-up.
_ROW = re.compile(r"^\s{0,4}(?P<label>[^\s:：]{1,10})(?:\s{0,2}[:：]\s{0,4}|\s{2,8})(?P<text>\S.*)$")
_OFFER_LABELS: dict[MeasureKind, tuple[str, ...]] = {
    MeasureKind.GIFT: ("赠品", "赠送", "赠", "礼品", "gift", "gifts"),
    MeasureKind.PAYMENT_DISCOUNT: ("支付优惠", "支付", "付款", "付款优惠", "分期", "白条", "花呗",
                                   "payment", "pay"),
    MeasureKind.MEMBER_DISCOUNT: ("会员", "会员价", "会员优惠", "plus", "88vip", "member", "members",
                                  "membership"),
    MeasureKind.PROMOTION: ("促销", "优惠", "优惠活动", "活动", "满减", "领券", "promotion",
                            "promotions", "offer", "offers", "deal", "deals"),
    MeasureKind.TRADE_IN: ("以旧换新", "trade-in", "tradein"),
}
_KIND_OF_LABEL = {label: kind for kind, labels in _OFFER_LABELS.items() for label in labels}


class AttributeRow(BaseModel):
    """A labelled row: its label, its text, and the offer it states (None: another attribute)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str
    text: str
    kind: MeasureKind | None
    start: int  # where ``text`` starts in the element's label


def read_attribute_row(line: str) -> AttributeRow | None:
    """``line`` as a labelled row, or None when it does not read as one."""
    match = _ROW.match(line)
    if match is None:
        return None
    label = match.group("label")
    text = match.group("text").strip()
    if not text:
        return None
    kind = _KIND_OF_LABEL.get(normalize_text(label))
    return AttributeRow(label=label, text=text, kind=kind, start=match.start("text"))
