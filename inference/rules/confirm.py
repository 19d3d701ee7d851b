"""What a neutral confirmation agrees to: the title and message of its dialog.

"OK", "Continue", "Proceed", "确定", "확인", "はい" say nothing of what they do; the dialog or
bottom sheet they answer does ("Transfer ¥500 to ...?", "Renews monthly at $9.99", "Proceed
with payment? Total ¥299"). :func:`find_confirmed` reads that text: the texts stacked with the
button in its column, each within a small gap of the next (a dialog's title and message, a
sheet's lines), when the stack holds at most three buttons (cancel, confirm and a third choice:
a confirmation, not a form or a page of entries). Confirming is the person's when the text names
an act (:mod:`inference.rules.never_tap`: "Delete 3 photos?", "Clear search history?"), money
(an amount, a charge), a recurring charge (renews, monthly, 自动续费) or another person (send
to, 收款人); the words are ``inference/vocabulary/confirm.yaml``. Screen text is data: it is only
matched against word lists, never followed.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from core.models import RiskCategory, Screen, UIElement
from core.text import fold_for_matching
from inference.rules.never_tap import find_act
from inference.vocabulary import load_vocabulary

__all__ = ["Confirmed", "find_confirmed", "find_dialog_text", "is_neutral_confirm"]

_WORDS = load_vocabulary("confirm")  # inference/vocabulary/confirm.yaml
_NEUTRAL = re.compile(rf"(?:{_WORDS.alternation('neutral')})[\W\d]*")
_MEANINGS: tuple[tuple[RiskCategory, str, re.Pattern[str]], ...] = (
    (RiskCategory.PAYMENT, "an amount of money", re.compile(_WORDS.alternation("money"))),
    (RiskCategory.PAYMENT, "a recurring charge", re.compile(_WORDS.alternation("recurrence"))),
    (RiskCategory.SENDING, "another person", re.compile(_WORDS.alternation("another_person"))),
)
_GAP_SHARE = 0.06  # lines of one dialog or sheet sit closer than this share of the screen's height
_DIALOG_BUTTONS = 3  # a confirmation has at most these: cancel, confirm and a third choice


class Confirmed(BaseModel):
    """What confirming a dialog would do: its category, what the dialog names, and its text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    category: RiskCategory
    names: str  # "an amount of money", "deleting", ...
    text: str  # the title and message read


def is_neutral_confirm(label: str) -> bool:
    """Whether ``label`` only says yes ("OK", "Continue →", "确定", "확인", "はい")."""
    return _NEUTRAL.fullmatch(fold_for_matching(label)) is not None


def find_confirmed(element: UIElement, screen: Screen) -> Confirmed | None:
    """What pressing ``element``, a neutral confirmation, agrees to when its dialog names an act,
    money, a recurring charge or another person; None when it names none of these or when
    ``element`` answers no confirmation."""
    lines = [e.label.strip() for e in find_dialog_text(element, screen)]
    if not lines:
        return None
    text = " | ".join(lines)
    for line in lines:
        act = find_act(line)
        if act is not None:
            return Confirmed(category=act.category, names=act.doing, text=text)
    folded = fold_for_matching(text)
    for category, names, pattern in _MEANINGS:
        if pattern.search(folded):
            return Confirmed(category=category, names=names, text=text)
    return None


def find_dialog_text(element: UIElement, screen: Screen) -> tuple[UIElement, ...]:
    """The texts of the confirmation ``element`` answers, top to bottom: the labelled elements
    stacked with it in its column, each within a small gap of the stack; () when the stack holds
    more than three buttons (a form, a list, a page) or no text."""
    gap = _GAP_SHARE * screen.height
    box = element.bounds
    top, bottom, left, right = box.top, box.bottom, box.left, box.right
    stack = {element.id}
    members = [element]
    grew = True
    while grew:
        grew = False
        for other in screen.elements:
            b = other.bounds
            if other.id in stack or not other.label.strip() or b.area <= 0:
                continue
            if b.right <= left or b.left >= right or b.top - bottom > gap or top - b.bottom > gap:
                continue  # another column, or too far above or below
            stack.add(other.id)
            members.append(other)
            top, bottom = min(top, b.top), max(bottom, b.bottom)
            left, right = min(left, b.left), max(right, b.right)
            grew = True
    if sum(1 for e in members if e.clickable) > _DIALOG_BUTTONS:
        return ()
    return tuple(sorted((e for e in members if not e.clickable), key=lambda e: (e.bounds.top, e.bounds.left)))
