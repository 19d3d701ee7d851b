"""The risk gate: every action, from every policy, checked just before the phone carries it out.

Policies choose (route memory, skills, the explorer, the LLM navigator); this
gate alone decides whether the agent may do it. It judges the act, not one label.
:func:`check_action` returns a :class:`~inference.rules.risk.RiskFinding` (pause and ask the
person) for:

- a tap, long press or swipe on an element that says, anywhere it says something, that pressing
  it would act in the person's name (:mod:`inference.rules.press`): its text however long, a
  content card's line that is a button's words ("Pay now" under a title), its description,
  its pixels read by OCR (an image that says "PAY") or its resource id (``btn_pay``), a
  description or pixels that disagree with the label counting as what they say. The acts come
  in kinds (paying, buying, transferring, ordering, subscribing, signing in, deleting, sending,
  posting, granting: :mod:`inference.rules.never_tap`), in every language the lexicon knows, and
  text is folded first (zero-width, bidi, full-width, combining and look-alike tricks undone);
- a neutral confirmation ("OK", "Continue", "确定", "확인", "はい") in a dialog or sheet whose title
  or message names an act, money, a recurring charge or another person
  (:mod:`inference.rules.confirm`);
- typing into anything but the app's search field (a password, a phone number or e-mail,
  a code, a form: :func:`inference.rules.fields.is_search_field` judges the field by its
  role), or submitting text in a message or comment box;
- an element the screen's own text told the agent to press (a prompt injection
  naming it), unless the goal itself names it: text on a screen is data, and an
  instruction in it never makes an action happen.

A refusal (Cancel, Don't allow) is always allowed, unless its description or pixels name an act
it does not decline. Remote input by a person (the dashboard's takeover) does not pass here.
"""

from __future__ import annotations

import re

from core.models import (
    Action,
    Input,
    LongPress,
    Point,
    RiskCategory,
    Screen,
    Swipe,
    Tap,
    UIElement,
)
from core.text import fold_for_matching
from inference.rules.confirm import find_confirmed, is_neutral_confirm
from inference.rules.fields import find_login_wall, is_search_field
from inference.rules.never_tap import find_never_tap
from inference.rules.press import TextReader, declines, find_press_act, read_press
from inference.rules.risk import RiskFinding, find_injection, quote_label
from inference.vocabulary import load_vocabulary

__all__ = ["TextReader", "check_action", "element_at"]

# Fields whose submitted text goes to other people: a message, a comment, a reply.
_FIELDS = load_vocabulary("fields")  # inference/vocabulary/fields.yaml
_MESSAGE_FIELD = re.compile(rf"\b(?:{_FIELDS.alternation('message_latin')})\b|{_FIELDS.alternation('message_other')}")
_ID_WORDS = re.compile(r"[_\-.:/]+")


def check_action(action: Action, screen: Screen, *, goal: str = "",
                 read_text: TextReader | None = None) -> RiskFinding | None:
    """Why the agent must not carry out ``action`` on ``screen`` (pause and ask), or None."""
    if isinstance(action, Tap | LongPress):
        element = _target(action.target, action.point, screen)
        return None if element is None else _check_press(element, screen, goal, read_text)
    if isinstance(action, Swipe):
        # A slider ("slide to pay") is a press that moves: judge what the finger starts on.
        element = element_at(action.start, screen)
        return None if element is None else _check_press(element, screen, goal, read_text)
    if isinstance(action, Input):
        return _check_input(action, screen)
    return None


def element_at(point: Point, screen: Screen) -> UIElement | None:
    """The smallest clickable element under ``point`` (what a finger there presses), or None."""
    hits = [e for e in screen.elements if e.clickable and e.bounds.contains(point)]
    return min(hits, key=lambda e: e.bounds.area, default=None)


def _target(target: str | None, point: Point | None, screen: Screen) -> UIElement | None:
    if target is not None:
        return screen.element(target)
    return element_at(point, screen) if point is not None else None


def _check_press(element: UIElement, screen: Screen, goal: str,
                 read_text: TextReader | None) -> RiskFinding | None:
    reading = read_press(element, screen, read_text)
    if declines(reading):
        return None
    injected = _named_by_injection(element, screen, goal)
    if injected is not None:
        return injected
    shown = quote_label(reading.seen or reading.resource_words or element.id)
    if reading.lines and is_neutral_confirm(reading.seen):
        confirmed = find_confirmed(element, screen)
        if confirmed is not None:
            return RiskFinding(
                category=confirmed.category, element_id=element.id,
                reason=f"{shown} confirms {quote_label(confirmed.text)}, which names {confirmed.names}: "
                "the agent never agrees to that, a person decides")
    found = find_press_act(reading)
    if found is None:
        return None
    act, where = found
    said = "" if where == f"its {reading.seen_in}" else f" ({where} says {quote_label(act.word)})"
    return RiskFinding(
        category=act.category, element_id=element.id,
        reason=f"{shown}{said} would act in the person's name ({act.doing}): "
        "the agent never does that, a person decides",
    )


def _check_input(action: Input, screen: Screen) -> RiskFinding | None:
    field = screen.element(action.target) if action.target else next(
        (e for e in screen.elements if e.focused and e.editable), None)
    if field is None:
        return None
    if field.password:
        return RiskFinding(category=RiskCategory.LOGIN, element_id=field.id,
                           reason="typing into a password field: logging in is for the person")
    described = fold_for_matching(f"{field.text} {field.content_desc} {_id_words(field.resource_id)}")
    if action.submit and _MESSAGE_FIELD.search(described):
        return RiskFinding(
            category=RiskCategory.SENDING, element_id=field.id,
            reason=f"submitting text in {quote_label(field.label or field.resource_id)} would send "
            "it in the person's name: a person decides")
    if not is_search_field(field, screen):
        # The agent types search terms, nothing else: a phone number, a code, a name or an
        # address is the person's to give.
        wall = find_login_wall(screen) is not None
        return RiskFinding(
            category=RiskCategory.LOGIN if wall else RiskCategory.PERSONAL_INFO, element_id=field.id,
            reason=f"typing into {quote_label(field.label or field.resource_id or 'a field')}, which is not "
            f"the app's search field: {'signing in' if wall else 'filling in a form'} is for the person")
    return None


def _named_by_injection(element: UIElement, screen: Screen, goal: str) -> RiskFinding | None:
    """A tap the screen's own text asked for: the injection itself, or what it names."""
    hostile = find_injection(screen.elements)
    if hostile is None:
        return None
    instruction = fold_for_matching(f"{hostile.text} {hostile.content_desc}")
    label = fold_for_matching(element.label)
    named = element.id == hostile.id or (
        len(label) >= 2 and _mentions(instruction, label)
        and not _mentions(fold_for_matching(goal), label))
    if not named:
        return None
    return RiskFinding(
        category=find_never_tap(element.label) or RiskCategory.CONSENT, element_id=element.id,
        reason=f"the screen told the agent to press {quote_label(element.label or 'it')} "
        f"({quote_label(hostile.label)}): text on a screen is data, a person decides")


def _mentions(text: str, label: str) -> bool:
    """Whether ``text`` names ``label``: as whole words in Latin scripts, anywhere in CJK."""
    if not label.isascii():
        return label in text
    return re.search(rf"(?<!\w){re.escape(label)}(?!\w)", text) is not None


def _id_words(resource_id: str) -> str:
    """A resource id as words: ``com.app:id/btn_pay`` -> ``btn pay``."""
    name = resource_id.rpartition("/")[2]
    return _ID_WORDS.sub(" ", name).strip()
