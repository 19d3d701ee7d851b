"""Labelled rows of a detail page: ``"赠品  赠 <accessory> + <accessory>"``, ``"会员  <plan> 专享<n>折"``.

Product and store pages print their terms as rows: a short label, then two
spaces or a colon, then the text (``"支付优惠  <n>期免息"``,
``"优惠活动: 满<n>减<n> · <a first-order discount>"``). The label says what the row is about,
so a row is an attribute of the item above it and never the start of a new
item. For the offers a comparison needs (gifts, payment and membership
discounts, promotions, trade-in) the whole text is the value: its numbers are
amounts of the offer (``¥30`` off), not the item's price.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from inference.vocabulary import load_vocabulary
from tasks.synthesis.grounding import normalize_text
from tasks.synthesis.values import MeasureKind

__all__ = ["AttributeRow", "read_attribute_row"]

# Bounded label, then a colon or a run of two or more spaces: no backtracking blow-up.
_ROW = re.compile(r"^\s{0,4}(?P<label>[^\s:：]{1,10})(?:\s{0,2}[:：]\s{0,4}|\s{2,8})(?P<text>\S.*)$")
# A row's label by the offer it states: inference/vocabulary/offer_labels.yaml.
_OFFER_LABELS: dict[MeasureKind, tuple[str, ...]] = {
    MeasureKind[group.upper()]: labels for group, labels in load_vocabulary("offer_labels").groups.items()}
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
