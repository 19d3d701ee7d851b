"""What the agent never does in a person's name: acts by kind, in every language the lexicon knows.

Acts come in kinds (``inference/vocabulary/acts.yaml``): paying, buying or ordering (again),
topping up, moving money to someone, giving money, starting or renewing a paid plan (a free
trial too), cancelling an order or a plan; signing in, up or out; deleting; sending, posting and
sharing, following, liking and subscribing; agreeing, allowing, authorising and confirming. Each
kind has its risk category and its words in English, Chinese, Korean and Japanese. A button
naming one is the person's to press: :func:`find_act` names the kind, and the risk gate
(:mod:`inference.rules.gate`) pauses the run instead of pressing it, whichever policy chose it.

Labels are folded first (:func:`core.text.fold_for_matching`: zero-width and bidi
characters, full-width letters, combining marks and look-alike letters by Unicode's confusables
skeleton), so ``P\\u200bay``, ``Ｐａｙ`` or ``Рау`` do not hide a word. No label is cut short: a
button's words are its first 40 characters, and past them a label is running text, where an act
counts where a button's would stand: starting a clause (``... for you — Pay now``) or ending
the text. The words are the vocabulary's (``acts.yaml``, ``refusal.yaml``,
``act_qualifiers.yaml``): general, what any app's button says, never one app's labels. A refusal
(``Cancel``, ``Don't allow``, ``不允许``) is always safe: it is how a risky dialog is closed; so is a
short entry naming a place to look (``Payment settings``, ``充值记录``, ``주문 내역``): it opens a
page, it pays nothing, and one naming a standing arrangement, its act word qualified by how it
recurs (``免密支付/自动扣款``, ``Auto-pay``, ``자동결제``): the page that lists the arrangements.
Turning one on (``开通``, ``Enable auto-pay``) or a bare act (``充值``, ``话费充值``) stays the person's.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.models import RiskCategory
from core.text import fold_for_matching
from inference.vocabulary import check_patterns, load_vocabulary, load_vocabulary_model

__all__ = [
    "Act",
    "ActKind",
    "find_act",
    "find_act_word",
    "find_never_tap",
    "find_never_tap_word",
    "goal_act",
    "is_refusal",
    "load_act_kinds",
    "names_a_place",
    "names_an_arrangement",
    "never_tap_patterns",
    "starts_as_act",
]


class ActKind(BaseModel):
    """One kind of act (``pay``, ``transfer``, ``sign_in``): its category and its words by language."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    category: RiskCategory
    doing: str = Field(min_length=1)  # what doing it is, for a reason a person reads
    en: tuple[str, ...] = Field(min_length=1)
    zh: tuple[str, ...] = Field(min_length=1)
    ko: tuple[str, ...] = Field(min_length=1)
    ja: tuple[str, ...] = Field(min_length=1)

    @field_validator("en", "zh", "ko", "ja")
    @classmethod
    def _check_words(cls, words: tuple[str, ...]) -> tuple[str, ...]:
        return check_patterns(words)

    @property
    def words(self) -> tuple[str, ...]:
        return (*self.en, *self.zh, *self.ko, *self.ja)


class _ActKinds(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["acts"]
    kinds: dict[str, ActKind] = Field(min_length=1)


class Act(BaseModel):
    """An act a text names: its kind, category, and the word that names it (folded)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str
    category: RiskCategory
    doing: str
    word: str


def load_act_kinds() -> dict[str, ActKind]:
    """The kinds of act of ``inference/vocabulary/acts.yaml``, in the file's order (first wins)."""
    return dict(_KINDS)


_KINDS = load_vocabulary_model("acts", _ActKinds).kinds  # inference/vocabulary/acts.yaml
_QUALIFIERS = load_vocabulary("act_qualifiers")

# Matched on folded (lower-case) labels. Latin words at word boundaries; CJK anywhere, since
# those scripts do not separate words.
_NEVER: tuple[tuple[str, ActKind, re.Pattern[str]], ...] = tuple(
    (name, kind, re.compile("|".join(kind.words))) for name, kind in _KINDS.items()
)

# A refusal closes a risky dialog: never risky, whatever else matched ("Don't allow").
_REFUSAL = re.compile(rf"^(?:{load_vocabulary('refusal').alternation('refusal')})$")
_LABEL_CHARS = 40  # a button's words; past them a label is running text
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
# Words leading into an act where a button's words start ("去支付", "tap to pay", "지금 구매").
_LEADS_IN = rf"(?:(?:{_QUALIFIERS.alternation('leads_in')})\s*)*"
# Where a clause of running text starts: after a line, sentence or dash break.
_CLAUSE_START = re.compile(rf"(?:^|[|·•:：;；,，.。!！?？>›»—–、()（）【】\[\]\"“”]|\s-)\s*{_LEADS_IN}$")
# What may follow an act that ends a text: an urge, an amount, punctuation.
_TAIL = re.compile(rf"(?:\s|\W|\d|{_QUALIFIERS.alternation('urges')})*")
# A button's words start with its act, after at most symbols, an amount and a lead-in.
_BUTTON_START = re.compile(rf"[\W\d_]*{_LEADS_IN}$")
_ACT_LINE_CHARS = 24  # a line of a card that is a button: short
_QUESTION_END = re.compile(r"[?？]\s*$")  # a goal that asks: "注册时间是哪天?"


def is_refusal(label: str) -> bool:
    """Whether ``label`` (any case, any encoding trick) declines: Cancel, Don't allow, 不允许."""
    return bool(_REFUSAL.match(fold_for_matching(label)))


def find_act_word(text: str) -> Act | None:
    """The first act word anywhere in ``text`` (folded, whatever stands around it), or None."""
    folded = fold_for_matching(text)
    for name, kind, pattern in _NEVER:
        match = pattern.search(folded)
        if match:
            return Act(kind=name, category=kind.category, doing=kind.doing, word=match.group(0))
    return None


def find_never_tap_word(text: str) -> tuple[RiskCategory, str] | None:
    """The first never-tap word anywhere in ``text`` (folded), with its category."""
    act = find_act_word(text)
    return None if act is None else (act.category, act.word)


def find_act(label: str) -> Act | None:
    """The act a button labelled ``label`` would do in the person's name, or None.

    A refusal, a place to look and a standing arrangement are none. The whole label is read: its
    first 40 characters as a button's words, and past them an act that starts a clause or ends it.
    """
    if not label.strip() or is_refusal(label) or names_a_place(label) or names_an_arrangement(label):
        return None
    folded = fold_for_matching(label)
    for name, kind, pattern in _NEVER:
        # A state reached or not yet ("已开通的服务", "未支付") tells how things stand: no act.
        words = [m.group(0) for m in pattern.finditer(folded)
                 if not folded[:m.start()].endswith(_STATE) and _stands_as_act(folded, m)]
        if words and not (kind.category is RiskCategory.SENDING and _only_told_of(label, words)):
            return Act(kind=name, category=kind.category, doing=kind.doing, word=words[0])
    return None


def find_never_tap(label: str) -> RiskCategory | None:
    """The category of a button labelled ``label`` that the agent must never press, or None."""
    act = find_act(label)
    return None if act is None else act.category


def starts_as_act(line: str) -> Act | None:
    """The act of a short line that is a button's words ("Pay now", "立即支付", "Order again"): the
    act starts it, after at most symbols, an amount and a lead-in; else None. A content card's
    line telling of an act (a mail subject reporting a sign-in, "New post from ...") is no button."""
    folded = fold_for_matching(line)
    if len(folded) > _ACT_LINE_CHARS:
        return None
    act = find_act(line)
    if act is None:
        return None
    start = folded.find(act.word)
    return act if _BUTTON_START.fullmatch(folded[:start]) else None


def goal_act(goal: str) -> Act | None:
    """The act a goal asks the agent to do in the person's name, or None: the goal, or its sentence
    after an "In <app>:" lead, starts with the act ("Sign in to the app", "In Mail: create an
    account"). A goal asking about an act ("How do I sign out?", "what did I pay", "注册时间是哪天?")
    names none: a question is never a request."""
    if _QUESTION_END.search(goal):
        return None
    for sentence in (goal, goal.split(": ", 1)[-1]):
        folded = fold_for_matching(sentence).strip()
        act = find_act_word(folded)
        if act is not None and _BUTTON_START.fullmatch(folded[:folded.find(act.word)]):
            return act
    return None


def _stands_as_act(folded: str, match: re.Match[str]) -> bool:
    """Whether an act word stands where a button's would: in its first 40 characters, starting a
    clause, or ending the text (an urge, an amount or punctuation may follow)."""
    return (match.start() < _LABEL_CHARS or _CLAUSE_START.search(folded[:match.start()]) is not None
            or _TAIL.fullmatch(folded[match.end():]) is not None)


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
    patterns = [words] if words is not None else [pattern for _, _, pattern in _NEVER]
    hits = [m for pattern in patterns for m in pattern.finditer(folded)]
    return bool(hits) and all(_ARRANGED.search(folded[:m.start()]) for m in hits)


def never_tap_patterns() -> tuple[tuple[RiskCategory, re.Pattern[str]], ...]:
    """The acts' words by kind (patterns over folded text, with their categories), for screens
    pushing towards them."""
    return tuple((kind.category, pattern) for _, kind, pattern in _NEVER)
