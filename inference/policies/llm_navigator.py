"""LLM2 as a policy: the navigator model picks the action when nothing cheaper is confident.

Present only when the navigator role has a model (``client_for`` returns a
client). The model reads perception's screen description, where elements are
numbered ``[1]``, ``[2]``...; it answers with that number, which is mapped back
to the element id here. CORE's concern, as little of the screen as possible
leaving the device, is met twice: a screen over
``perception.description_token_budget`` tokens is cut to the blocks the task
needs (:mod:`inference.policies.exposure`), the model asking for more when
they are not enough (each ``more`` is another call with the next blocks
added), and for a ``cloud`` endpoint the description is redacted first. Past
actions are the preview instructions with long labels clipped. For a ``cloud``
endpoint the task line (the question as typed), the past actions (a tapped
entry's label) and the last try's tips are redacted like the screen, and with
vision on the screenshot's personal data is blacked out, found in the view tree
and by OCR in its pixels (:meth:`inference.perception.Redactor.mask_screenshot`:
no OCR engine, no screenshot). A transient model failure (timeout, 5xx, unusable
answer) or a spent model-time budget is not confident: the chain moves on, and the fallback is
noted on the meter the loop drains into the step. A refused request (4xx) is a
configuration error and is raised.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from core.config import PerceptionSettings
from core.models import (
    Action,
    Input,
    LongPress,
    OpenApp,
    Screen,
    Scroll,
    SubTask,
    Tap,
    TokenUsage,
)
from inference.errors import LLMError
from inference.llm import LLMClient, LLMReply, ModelMeter
from inference.llm_roles import ShowMore, choose_action, describe_action, describe_failure
from inference.perception import OcrEngine, Redactor, redactor_for
from inference.perception.describe import ScreenDescription
from inference.policies.base import Decision, PolicyContext, is_dialog_open
from inference.policies.exposure import describe_for_navigator
from inference.policies.skills import SKILLS

__all__ = ["LLMNavigatorPolicy", "compact_history", "goal_text", "numbered_screen", "shown_history"]

_HISTORY_LABEL = 24  # characters of a label kept in a past action ("Tap [a store's name (its branch)…]")
_LABEL = re.compile(r"\[([^\]]*)\]")


def numbered_screen(screen: Screen, description: ScreenDescription) -> Screen:
    """``screen`` with each element's id replaced by its number in ``description``.

    The role checks the model's element id against the screen it is given; the
    model only knows the numbers, so that is the screen it must be checked on.
    """
    numbers = {element_id: str(n) for n, element_id in enumerate(description.element_ids, start=1)}
    elements = tuple(
        e.model_copy(update={"id": numbers[e.id], "parent_id": None})
        for e in screen.elements if e.id in numbers
    )
    return screen.model_copy(update={"elements": elements})


class LLMNavigatorPolicy:
    """Asks LLM2 for one action per step."""

    def __init__(self, client: LLMClient, *, perception: PerceptionSettings | None = None,
                 help_document: str | None = None, meter: ModelMeter | None = None,
                 ocr: OcrEngine | None = None) -> None:
        """``ocr``: what checks a screenshot's pixels before a cloud model sees it (without one,
        a cloud model gets no screenshot)."""
        settings = perception or PerceptionSettings()
        self._client = client
        self._redactor = redactor_for(client.endpoint, settings, ocr=ocr)
        # The manual quotes app screens (an app map's texts): for a cloud model, redacted like them.
        self._help_document = (self._redactor.redact_text(help_document).text
                               if help_document and self._redactor is not None else help_document)
        self._screen_budget = settings.description_token_budget
        self.meter = meter if meter is not None else ModelMeter()

    @property
    def name(self) -> str:
        return self._client.name

    def decide(self, context: PolicyContext) -> Decision | None:
        """LLM2's action on this screen, or None when the model fails or its time is spent.

        Opening the sub-task's app when another screen is in front needs no model: the
        app is known (the paper's pipeline launches it too), so no call is spent on it.
        """
        subtask = context.subtask
        if context.screen.package != subtask.package and not is_dialog_open(context.screen):
            return Decision(action=OpenApp(package=subtask.package, reason=f"open {subtask.app_label}"),
                            policy=SKILLS, skill="open_app")
        if self.meter.exhausted:
            self.meter.fall_back("navigator", self.meter.exhausted_reason())
            return None
        perception = context.perception
        screenshot = context.screenshot_png if self._client.endpoint.vision else None
        if screenshot is not None and self._redactor is not None:
            screenshot = self._redactor.mask_screenshot(screenshot, perception.screen.elements)
        usage, latency_ms, rounds = TokenUsage(), 0.0, 1
        while True:
            description = describe_for_navigator(perception, context.subtask, redactor=self._redactor,
                                                 budget=self._screen_budget, rounds=rounds)
            shown = numbered_screen(perception.screen, description)
            reply = self._ask(context, shown, description, screenshot)
            if reply is None:
                return None
            usage, latency_ms = usage + reply.usage, latency_ms + reply.latency_ms
            if not isinstance(reply.value, ShowMore):
                break
            # CORE's multi-round accumulation: the next blocks are added to what was shown
            # (on the whole screen "more" is refused, so this ends).
            rounds += 1
        exposed = len(description.element_ids) if self._client.endpoint.locality == "cloud" else 0
        return Decision(
            action=_map_back(reply.value, description), policy=self.name,
            skill=describe_action(reply.value, shown), usage=usage, latency_ms=latency_ms,
            exposed_elements=exposed,
        )

    def _ask(self, context: PolicyContext, shown: Screen, description: ScreenDescription,
             screenshot: bytes | None) -> LLMReply[Action | ShowMore] | None:
        """One navigator call on what is shown; None when the model failed transiently."""
        redactor, reflection = self._redactor, context.reflection
        try:
            reply = choose_action(
                self._client,
                goal=goal_text(redactor.redact_subtask(context.subtask) if redactor else context.subtask),
                screen=shown,
                description=description.text,
                previous_actions=shown_history((t.instruction for t in context.history), redactor),
                help_document=self._help_document,
                reflection=redactor.redact_text(reflection).text if redactor and reflection else reflection,
                screenshot_png=screenshot,
                deadline_s=self.meter.time_left_s(),
                partial=description.left_out > 0,
            )
        except LLMError as exc:
            self.meter.record(exc.calls)
            if not exc.transient:
                raise  # a configuration error (4xx) stops the run with its fix
            self.meter.fall_back("navigator", describe_failure(exc))
            return None
        self.meter.record(reply.calls)
        return reply


def goal_text(subtask: SubTask) -> str:
    """The task line the navigator reads: goal, search term, page mode and app."""
    goal = subtask.goal
    if subtask.search_term:
        goal += f" (search for: {subtask.search_term})"
    return f"{goal} [page mode: {subtask.page_mode.value}; app: {subtask.app_label}]"


def shown_history(instructions: Iterable[str], redactor: Redactor | None) -> list[str]:
    """Past actions as a model is shown them: masked for a cloud model, then clipped (masked
    first, so a clipped label never keeps part of a number)."""
    return compact_history(redactor.redact_lines(instructions) if redactor is not None else instructions)


def compact_history(instructions: Iterable[str]) -> list[str]:
    """Past actions as short lines: each bracketed label clipped to a few words."""
    def clip(match: re.Match[str]) -> str:
        label = " ".join(match.group(1).split())
        return f"[{label if len(label) <= _HISTORY_LABEL else label[: _HISTORY_LABEL - 1] + '…'}]"

    return [_LABEL.sub(clip, instruction) for instruction in instructions]


def _map_back(action: Action, description: ScreenDescription) -> Action:
    if isinstance(action, Tap | LongPress | Input | Scroll) and action.target is not None:
        number = int(action.target) if action.target.isdigit() else 0
        return action.model_copy(update={"target": description.element_id(number)})
    return action
