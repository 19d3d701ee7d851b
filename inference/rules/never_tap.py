"""What the agent never does in a person's name, as words in every language the lexicon knows.

Paying, buying and confirming an order, starting, renewing or upgrading a paid plan (a free
trial too); logging in or signing up; deleting;
agreeing, allowing, authorising and confirming; sending, replying, posting,
sharing, following, liking and subscribing. A button labelled so is the
person's to press: :func:`find_never_tap` names the category, and the risk gate
(:mod:`inference.rules.gate`) pauses the run instead of pressing it, whichever
policy chose it.

Labels are folded first (:func:`droidretriever.text.fold_for_matching`): a
zero-width space (``P\\u200bay``), full-width letters (``Ｐａｙ``) or Cyrillic
look-alikes (``Рау``) do not hide a word. The words are the vocabulary's
(``inference/vocabulary/never_tap.yaml``, ``refusal.yaml``, ``act_qualifiers.yaml``): general,
what any app's button says, never one app's labels. A refusal (``Cancel``, ``Don't allow``,
``不允许``) is always safe: it is how a risky dialog is closed; so is a short entry naming a
place to look (``Payment settings``, ``充值记录``, ``주문 내역``): it opens a page, it pays nothing,
and one naming a standing arrangement, its act word qualified by how it recurs
(``免密支付/自动扣款``, ``Auto-pay``, ``자동결제``): the page that lists the arrangements. Turning one
on (``开通``, ``Enable auto-pay``) or a bare act (``充值``, ``话费充值``) stays the person's.
"""

from __future__ import annotations

import re

from droidretriever.models import RiskCategory
from droidretriever.text import fold_for_matching
from inference.vocabulary import load_vocabulary

__all__ = [
    "find_never_tap",
    "find_never_tap_word",
    "is_refusal",
    "names_a_place",
    "names_an_arrangement",
    "never_tap_patterns",
]


_WORDS = load_vocabulary("never_tap")  # inference/vocabulary/never_tap.yaml
_QUALIFIERS = load_vocabulary("act_qualifiers")

# Matched on folded (lower-case) labels. Latin words at word boundaries; CJK anywhere in
# a short label (a button), since those scripts do not separate words.
_NEVER: tuple[tuple[RiskCategory, re.Pattern[str]], ...] = tuple(
    (category, re.compile(_WORDS.alternation(category.value)))
    for category in (RiskCategory.PAYMENT, RiskCategory.LOGIN, RiskCategory.DELETION,
                     RiskCategory.SENDING, RiskCategory.CONSENT)
)

# A refusal closes a risky dialog: never risky, whatever else matched ("Don't allow").
_REFUSAL = re.compile(rf"^(?:{load_vocabulary('refusal').alternation('refusal')})$")
_LABEL_CHARS = 40  # a button's label is short; a longer text is content, not an action
_ENTRY_CHARS = 24  # an entry naming a page is shorter still
_STATE = _QUALIFIERS.words("state_before")  # "已开通": done; "未支付": not yet
# An entry naming a place to look ("Payment settings", "充值记录", "주문 내역", "注文履歴") opens a
# page about the thing; it does not do it. Only when the label ends with the place, is short,
# and urges nothing ("now", "立即", "confirm"): a hostile "Pay now - details" stays an action.
_PLACE_END = re.compile(rf"(?:\b(?:{_QUALIFIERS.alternation('place_end_latin')})|"
                        rf"{_QUALIFIERS.alternation('place_end_other')})$")
_URGES = re.compile(_QUALIFIERS.alternation("urges"))
# How an arrangement recurs by itself, right before the act it qualifies: "免密|支付" (paid
# without a password), "自动|充值", "auto-|pay", "password-free |payment", "자동|결제", "自動|支払い".
_ARRANGED = re.compile(rf"(?:{_QUALIFIERS.alternation('recurring')})$")
# Turning an arrangement on (or off) is an act of its own: the person's.
_TURNS_ON = re.compile(_QUALIFIERS.alternation("turns_on"))


def is_refusal(label: str) -> bool:
    """Whether ``label`` (any case, any encoding trick) declines: Cancel, Don't allow, 不允许."""
    return bool(_REFUSAL.match(fold_for_matching(label)))


def find_never_tap_word(text: str) -> tuple[RiskCategory, str] | None:
    """The first never-tap word anywhere in ``text`` (folded), with its category."""
    folded = fold_for_matching(text)
    for category, pattern in _NEVER:
        match = pattern.search(folded)
        if match:
            return category, match.group(0)
    return None


def find_never_tap(label: str) -> RiskCategory | None:
    """The category of a button labelled ``label`` that the agent must never press, or None.

    Only the start of a label counts (a button's words), and a refusal never does.
    """
    if not label.strip() or is_refusal(label) or names_a_place(label) or names_an_arrangement(label):
        return None
    folded = fold_for_matching(label[:_LABEL_CHARS])
    for category, pattern in _NEVER:
        # A state reached or not yet ("已开通的服务", "未支付") tells how things stand: no act.
        words = [m.group(0) for m in pattern.finditer(folded) if not folded[:m.start()].endswith(_STATE)]
        if words and not (category is RiskCategory.SENDING and _only_told_of(label, words)):
            return category
    return None


def _only_told_of(label: str, words: list[str]) -> bool:
    """Whether a card of several lines only tells of a post or a share ("<community> | 4.2M members ·
    New post from <member>"): Latin words of sending (``words``) that start none of its lines are nouns
    there, not its button's words ("Post | to your story" starts one). Other categories, Chinese,
    Korean and Japanese words and one-line labels are never read so."""
    parts = [fold_for_matching(p).strip(" +·•>›") for p in label.split(" | ")]
    if len(parts) < 2 or not all(re.fullmatch(r"[a-z ']+", w) for w in words):
        return False
    return not any(p.startswith(w) for p in parts for w in words)


def names_a_place(label: str) -> bool:
    """A short entry that names a page about the thing: "Payment settings", "充值记录"."""
    folded = fold_for_matching(label).strip(" >›»")
    return (len(folded) <= _ENTRY_CHARS and _PLACE_END.search(folded) is not None
            and _URGES.search(folded) is None)


def names_an_arrangement(label: str, words: re.Pattern[str] | None = None) -> bool:
    """A short entry naming standing arrangements, every act word in it qualified by how it recurs
    ("免密支付/自动扣款", "Auto-pay", "자동결제"): it opens the page listing them, it pays nothing.
    A bare act ("充值"), one with its object ("话费充值") or turning one on ("开通免密支付") is not.
    ``words`` are the act words to look for (folded), the never-tap list's by default."""
    folded = fold_for_matching(label).strip(" >›»")
    if len(folded) > _ENTRY_CHARS or _URGES.search(folded) or _TURNS_ON.search(folded):
        return False
    patterns = [words] if words is not None else [pattern for _, pattern in _NEVER]
    hits = [m for pattern in patterns for m in pattern.finditer(folded)]
    return bool(hits) and all(_ARRANGED.search(folded[:m.start()]) for m in hits)


def never_tap_patterns() -> tuple[tuple[RiskCategory, re.Pattern[str]], ...]:
    """The word lists by category (patterns over folded text), for screens pushing towards them."""
    return _NEVER
