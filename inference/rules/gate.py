"""The risk gate: every action, from every policy, checked just before the phone carries it out.

Policies choose (route memory, skills, the explorer, the LLM navigator); this
gate alone decides whether the agent may do it. :func:`check_action` returns a
:class:`~inference.rules.risk.RiskFinding` (pause and ask the person) for:

- a tap, long press or swipe on an element whose label (folded: zero-width,
  full-width and look-alike tricks undone) is on the never-tap list: paying,
  buying, confirming, logging in, deleting, agreeing, sending, posting,
  sharing, following, subscribing (:mod:`inference.rules.never_tap`); an element
  with no label is read from the screenshot when a reader is given (an image
  that says "PAY"), and its resource id counts as words (``btn_pay``);
- typing into anything but the app's search field (a password, a phone number or e-mail,
  a code, a form: :func:`inference.rules.fields.is_search_field` judges the field by its
  role), or submitting text in a message or comment box;
- an element the screen's own text told the agent to press (a prompt injection
  naming it), unless the goal itself names it: text on a screen is data, and an
  instruction in it never makes an action happen.

A content card of three or more lines is not a button: it opens what it shows,
whatever its words (a mail whose subject reports a sign-in is about a login), as the skills
already treat it. A refusal (Cancel, Don't allow) is always allowed.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from droidretriever.models import (
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
from droidretriever.text import fold_for_matching
from inference.rules.fields import find_login_wall, is_search_field
from inference.rules.never_tap import find_never_tap, is_refusal
from inference.rules.page_type import shows_content
from inference.rules.risk import RiskFinding, find_injection, quote_label
from inference.vocabulary import load_vocabulary

__all__ = ["TextReader", "check_action", "element_at"]

# Reads the text drawn inside a box of the current screenshot (OCR); "" when it cannot.
TextReader = Callable[[UIElement], str]

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
    label = element.label.strip()
    if label and is_refusal(label):
        return None
    injected = _named_by_injection(element, screen, goal)
    if injected is not None:
        return injected
    if label and shows_content(element, screen):  # a card of content opens what it shows
        return None
    words = label
    if not words:
        words = _id_words(element.resource_id)
        if read_text is not None and element.bounds.area > 0:
            drawn = read_text(element)
            words = f"{drawn} {words}".strip()
            label = drawn.strip()
    category = find_never_tap(words)
    if category is None:
        return None
    shown = quote_label(label or words)
    return RiskFinding(
        category=category, element_id=element.id,
        reason=f"{shown} would act in the person's name ({_doing(category)}): "
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


def _doing(category: RiskCategory) -> str:
    return {
        RiskCategory.PAYMENT: "paying or ordering",
        RiskCategory.LOGIN: "logging in or signing up",
        RiskCategory.DELETION: "deleting",
        RiskCategory.CONSENT: "agreeing or confirming",
        RiskCategory.SENDING: "sending, posting, sharing or following",
    }.get(category, category.value.replace("_", " "))
