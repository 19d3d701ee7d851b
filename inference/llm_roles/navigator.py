"""LLM2, the navigator: goal + screen description -> one ``Action``.

The model names elements by the ids of the screen description (perception
builds it), not by pixel points as in the paper: the id is checked against the
screen before the answer is accepted, and the executor grounds it to a box.
``describe_action`` renders an action as the preview instruction a person
sees ("Tap [Texas]", "Enter [McDonald] in [Search]"), which is also how past
actions are shown to the model. A large screen may be shown cut to the blocks
the task needs (:mod:`inference.policies.exposure`); the model then answers
``more`` (:class:`ShowMore`) when what it needs is not among them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator

from core.models import (
    Action,
    Back,
    Finish,
    Input,
    LongPress,
    OpenApp,
    Point,
    Screen,
    Scroll,
    ScrollDirection,
    Swipe,
    Tap,
)
from inference.llm import ChatMessage, LLMClient, LLMReply
from inference.prompts import render_prompt

__all__ = ["NavigatorAnswer", "ShowMore", "action_from_answer", "choose_action", "describe_action"]

ActionName = Literal["tap", "long_press", "input", "scroll", "swipe", "back", "open_app", "more", "finish"]
_SWIPE_SPAN = 0.4  # of the screen's height or width


class NavigatorAnswer(BaseModel):
    """LLM2's JSON: one action and its arguments (``reason`` and ``action`` required)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    reason: str
    action: ActionName
    element_id: str | None = None
    text: str | None = None
    submit: bool = False
    direction: ScrollDirection | None = None
    package: str | None = None

    @field_validator("action", mode="before")
    @classmethod
    def _spelling(cls, value: object) -> object:
        # "long press", "Open App", "Tap": the paper's prompt spells actions loosely.
        return value.strip().lower().replace(" ", "_").replace("-", "_") if isinstance(value, str) else value

    @field_validator("direction", mode="before")
    @classmethod
    def _direction(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value


class ShowMore(BaseModel):
    """LLM2's answer ``more``: show the blocks of this screen that were left out."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    reason: str = ""


def choose_action(
    client: LLMClient,
    *,
    goal: str,
    screen: Screen,
    description: str,
    previous_actions: Sequence[str] = (),
    help_document: str | None = None,
    reflection: str | None = None,
    screenshot_png: bytes | None = None,
    deadline_s: float | None = None,
    partial: bool = False,
) -> LLMReply[Action | ShowMore]:
    """Ask LLM2 for the next action on ``screen``; the element id is checked before use.

    ``partial``: the description shows only some of the screen's blocks, so the
    model may answer ``more`` (:class:`ShowMore`); on a whole screen that is a
    useless answer, repaired like a wrong element id.
    """
    prompt = render_prompt(
        "navigator",
        goal=goal,
        previous_actions=list(previous_actions),
        reflection=reflection,
        screen=description,
        help_document=help_document,
    )
    reply = client.chat_json(
        [
            ChatMessage(role="system", content=prompt.system),
            ChatMessage(role="user", content=prompt.user, image_png=screenshot_png),
        ],
        NavigatorAnswer,
        check=lambda answer: _problem(answer, screen, partial=partial),
        deadline_s=deadline_s,
    )
    return reply.converted(action_from_answer(reply.value, screen), prompt_version=prompt.version)


def action_from_answer(answer: NavigatorAnswer, screen: Screen) -> Action | ShowMore:
    """The typed action for a checked answer (see ``_problem`` for what is checked)."""
    reason = answer.reason
    match answer.action:
        case "more":
            return ShowMore(reason=reason)
        case "tap":
            return Tap(target=answer.element_id, reason=reason)
        case "long_press":
            return LongPress(target=answer.element_id, reason=reason)
        case "input":
            return Input(text=answer.text or "", target=answer.element_id, submit=answer.submit, reason=reason)
        case "scroll":
            return Scroll(
                direction=answer.direction or ScrollDirection.DOWN, target=answer.element_id, reason=reason
            )
        case "swipe":
            start, end = _swipe_points(screen, answer.direction or ScrollDirection.UP)
            return Swipe(start=start, end=end, reason=reason)
        case "back":
            return Back(reason=reason)
        case "open_app":
            return OpenApp(package=answer.package or "", reason=reason)
        case "finish":
            return Finish(reason=reason)


def describe_action(action: Action, screen: Screen | None = None) -> str:
    """The preview instruction for ``action``: ``Tap [Texas]``, ``Enter [McDonald] in [Search]``."""

    def name(target: str | None) -> str:
        element = screen.element(target) if screen is not None and target else None
        label = element.label if element is not None else ""
        return label or (element.resource_id.rsplit("/", 1)[-1] if element else "") or (target or "")

    match action:
        case Tap(target=target, point=point):
            return f"Tap [{name(target)}]" if target else f"Tap ({point.x}, {point.y})" if point else "Tap"
        case LongPress(target=target, point=point):
            return f"Long press [{name(target)}]" if target else f"Long press ({point.x}, {point.y})" if point else "Long press"
        case Input(text=text, target=target, submit=submit):
            where = f" in [{name(target)}]" if target else ""
            return f"Enter [{text}]{where}" + (" and submit" if submit else "")
        case Scroll(direction=direction):
            return f"Scroll {direction.value}"
        case Swipe(start=start, end=end):
            return f"Swipe from ({start.x}, {start.y}) to ({end.x}, {end.y})"
        case Back():
            return "Press Back"
        case OpenApp(package=package):
            return f"Open app [{package}]"
        case Finish():
            return "Finish: the target page is reached"
        case _:
            return f"Wait {action.seconds:g} s"


def _problem(answer: NavigatorAnswer, screen: Screen, *, partial: bool) -> str | None:
    """What is wrong with ``answer`` on ``screen``, in words for the repair round."""
    if answer.action == "more" and not partial:
        return 'the whole screen is shown, there is no more: choose an action on it'
    known = ", ".join(e.id for e in screen.elements[:40])
    if answer.action in ("tap", "long_press") and not answer.element_id:
        return f'"{answer.action}" needs element_id, one of the ids on the screen ({known})'
    if answer.element_id is not None and answer.action in ("tap", "long_press", "input", "scroll"):
        element = screen.element(answer.element_id)
        if element is None:
            return f"element_id {answer.element_id!r} is not on the screen; use one of: {known}"
        if answer.action == "input" and element.password:
            return (
                "never type into a password field: answer finish and say the person must log in"
            )
    if answer.action == "input" and not answer.text:
        return '"input" needs the text to type in "text"'
    if answer.action == "open_app" and not answer.package:
        return '"open_app" needs the app\'s package in "package"'
    return None


def _swipe_points(screen: Screen, direction: ScrollDirection) -> tuple[Point, Point]:
    """A swipe of the finger in ``direction`` across the middle of the screen."""
    cx, cy = screen.width // 2, screen.height // 2
    dx, dy = int(screen.width * _SWIPE_SPAN / 2), int(screen.height * _SWIPE_SPAN / 2)
    offsets = {
        ScrollDirection.UP: (0, dy),
        ScrollDirection.DOWN: (0, -dy),
        ScrollDirection.LEFT: (dx, 0),
        ScrollDirection.RIGHT: (-dx, 0),
    }
    ox, oy = offsets[direction]
    return Point(x=cx + ox, y=cy + oy), Point(x=cx - ox, y=cy - oy)

