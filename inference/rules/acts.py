"""Requests to act: a question that asks the agent to pay, top up, order, book, send, transfer,
post or delete in the person's name, rather than to find something out.

    find_act_request(text, apps)    the kind of act ``text`` asks for (``ActRequest``), or None
    find_act_button(screen, kind)   the button of that kind of act on a screen (where the person
                                    does it), or None

The agent does none of these acts (the risk gate never presses their buttons): a plan for such a
request opens where the act is done and pauses there for the person, and its report never says
"completed". The words are the vocabulary's (``inference/vocabulary/act_requests.yaml``), read by
language, chosen by the question's script:

- English: after a request's lead-in ("please", "can you", "I'd like to", "on <app>,"), the
  sentence starts with the act's verb ("Top up my phone", "Book a table for two"), not followed by
  a noun it names ("Order history"), with no clause asking a question ("..., which is cheaper?") and
  no closing "?" unless the lead-in asks it ("Can you send 100 to Alice?").
- Chinese: the act's verb anywhere ("给我的手机充值50元", "帮我下单"), unless the sentence asks (a
  question word: "多少", "哪"; a closing "吗" without "帮我"...), looks first ("查一下充值"), or
  the verb is told of or names a thing ("充值了", "充值记录", "付款码", "已支付").
- Korean and Japanese: the act's stem with a request's ending ("충전해 줘", "予約して"), and no
  question word.

Past forms ("paid", "ordered"), gerunds ("Ordering a Big Mac from ...?") and questions about acts
("How much did I pay last month?", "What did I order?", "Which restaurants can I book?") are not
requests. App names are taken out first, so "支付宝" is an app, not "支付".
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.models import ActKind, ActRequest, InstalledApp, Screen, UIElement
from core.text import fold_for_matching
from inference.rules.apps import strip_app_names
from inference.rules.never_tap import is_refusal, names_a_place, names_an_arrangement
from inference.rules.page_type import count_text_lines
from inference.vocabulary import load_vocabulary

__all__ = ["find_act_button", "find_act_request", "names_act"]

_WORDS = load_vocabulary("act_requests")  # inference/vocabulary/act_requests.yaml
_QUALIFIERS = load_vocabulary("act_qualifiers")
# At one place in a sentence the first kind listed wins: "发微博" posts before "发" sends, "买单"
# pays before "买" orders.
_KINDS = (ActKind.TOP_UP, ActKind.TRANSFER, ActKind.PAY, ActKind.ORDER, ActKind.BOOK, ActKind.POST,
          ActKind.SEND, ActKind.DELETE)
_APP = " app "  # what an app's name becomes: "on app, order ..." reads as a lead-in


def _kinds(language: str) -> str:
    """The acts of ``language`` as one alternation of named groups, one per kind."""
    return "|".join(f"(?P<{kind.value}>{_WORDS.alternation(f'{kind.value}_{language}')})" for kind in _KINDS)


# English: lead-ins, then the verb at the start; matched on folded text with single spaces.
_LEAD_EN = _WORDS.alternation("asking_en", "lead_en")
_REQUEST_EN = re.compile(rf"^(?P<lead>(?:(?:{_LEAD_EN})[\s,]*)*)(?:{_kinds('en')})\b")
_ASKING_EN = re.compile(_WORDS.alternation("asking_en"))
_NOUN_AFTER_EN = re.compile(rf"\s*(?:{_WORDS.alternation('noun_after_en')})\b")
_QUESTION_EN = re.compile(rf"(?:^|[,;:.!?]\s*|\b(?:and|but|or|so|then)\s+)(?:{_WORDS.alternation('question_en')})\b")
# Chinese: the verb anywhere.
_ACT_ZH = re.compile(_kinds("zh"))
_REQUEST_ZH = re.compile(_WORDS.alternation("request_zh"))
_QUESTION_ZH = re.compile(_WORDS.alternation("question_zh"))
_QUESTION_END_ZH = re.compile(_WORDS.alternation("question_end_zh"))
_NOT_AFTER_ZH = re.compile(rf"(?:{_WORDS.alternation('not_after_zh', 'noun_after_zh')}|"
                           rf"{_QUALIFIERS.alternation('place_end_other', 'place_after')})")
_STATE_ZH = re.compile(rf"(?:{_QUALIFIERS.alternation('state_before', 'not_needed_before')})$")
_LOOK_ZH = re.compile(_WORDS.alternation("look_zh"))
# Korean and Japanese: the stem with a request's ending.
_ACT_KO = re.compile(rf"(?<![가-힣])(?:{_kinds('ko')})(?:{_WORDS.alternation('request_ko')})")
_QUESTION_KO = re.compile(_WORDS.alternation("question_ko"))
_ACT_JA = re.compile(rf"(?:{_kinds('ja')})(?:{_WORDS.alternation('request_ja')})")
_QUESTION_JA = re.compile(_WORDS.alternation("question_ja"))

_HANGUL = re.compile(r"[\uac00-\ud7af]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u3400-\u9fff]")

# The act's button: short, the kind's word in it (Latin words whole).
_BUTTON_CHARS = 16
_BUTTONS = {kind: re.compile(_WORDS.alternation(f"{kind.value}_button")) for kind in ActKind}
_LATIN_WORD = re.compile(r"[a-z]")


def find_act_request(text: str, apps: Sequence[InstalledApp] = ()) -> ActRequest | None:
    """The act ``text`` asks the agent to do (its kind and words), or None for a question.

    ``apps``: installed apps whose names ``text`` may hold ("用支付宝给妈妈转账": 支付宝 is an app).
    """
    stripped = " ".join(strip_app_names(text, apps, mark=_APP).split())
    if _HANGUL.search(stripped):
        return _korean(stripped)
    if _KANA.search(stripped):
        return _japanese(stripped)
    if _HAN.search(stripped):
        return _chinese(stripped)
    return _english(stripped)


def names_act(label: str, kind: ActKind) -> bool:
    """Whether a button labelled ``label`` does the act of ``kind`` ("充值", "Book now", "송금"): not
    an entry naming a page about it ("充值记录"), a standing arrangement ("自动充值") or a state."""
    folded = fold_for_matching(label).strip(" >›»")
    if not folded or len(folded) > _BUTTON_CHARS or is_refusal(label):
        return False
    if names_a_place(label) or names_an_arrangement(label, _BUTTONS[kind]):
        return False
    for match in _BUTTONS[kind].finditer(folded):
        word = match.group(0)
        before, after = folded[:match.start()], folded[match.end():]
        if _LATIN_WORD.match(word) and (before[-1:].isalpha() or after[:1].isalpha()):
            continue  # a Latin word inside another ("Alipay", "Booking")
        if before.endswith(_QUALIFIERS.words("state_before")):
            continue  # "已支付": how things stand
        return True
    return False


def find_act_button(screen: Screen, kind: ActKind) -> UIElement | None:
    """The button on ``screen`` that does the act of ``kind``: where the person does it, or None.

    Not on a pop-up (it is closed first) nor in a card of content (a card opens what it shows).
    """
    for element in screen.elements:
        if (element.clickable and not element.editable and element.label.strip()
                and names_act(element.label, kind) and count_text_lines(element, screen) < 3):
            return element
    return None


def _english(text: str) -> ActRequest | None:
    folded = text.casefold().replace("’", "'")
    match = _REQUEST_EN.match(folded)
    if match is None or match.lastgroup is None:
        return None
    kind = ActKind(match.lastgroup)
    if _NOUN_AFTER_EN.match(folded, match.end()):
        return None  # "Order history", "Book reviews"
    rest = folded[match.end():]
    if _QUESTION_EN.search(rest):
        return None  # "..., which one is cheapest?"
    if folded.rstrip().endswith("?") and not _ASKING_EN.search(match.group("lead")):
        return None  # "Ordering a Big Mac ...?" aside, a verb first and a question mark: it asks
    return ActRequest.of(kind, match.group(kind.value))


def _chinese(text: str) -> ActRequest | None:
    if _QUESTION_ZH.search(text):
        return None
    requested = _REQUEST_ZH.search(text) is not None
    if not requested and _QUESTION_END_ZH.search(text):
        return None
    for match in _ACT_ZH.finditer(text):
        if match.lastgroup is None:
            continue
        before, after = text[:match.start()], text[match.end():]
        if _NOT_AFTER_ZH.match(after) or _STATE_ZH.search(before):
            continue  # "充值了", "充值记录", "已支付"
        if _LOOK_ZH.search(before):
            return None  # "查一下充值...": a look first
        return ActRequest.of(ActKind(match.lastgroup), match.group(0))
    return None


def _korean(text: str) -> ActRequest | None:
    return _with_ending(text, _ACT_KO, _QUESTION_KO)


def _japanese(text: str) -> ActRequest | None:
    return _with_ending(text, _ACT_JA, _QUESTION_JA)


def _with_ending(text: str, acts: re.Pattern[str], questions: re.Pattern[str]) -> ActRequest | None:
    """The first act whose stem carries a request's ending, in a sentence with no question word."""
    if questions.search(text):
        return None
    match = acts.search(text)
    if match is None or match.lastgroup is None:
        return None
    return ActRequest.of(ActKind(match.lastgroup), match.group(match.lastgroup))
