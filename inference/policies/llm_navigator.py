"""LLM2 as a policy: the navigator model picks the action when nothing cheaper is confident.

Present only when the navigator role has a model (``client_for`` returns a
client). The model reads perception's screen description, where elements are
numbered ``[1]``, ``[2]``...; it answers with that number, which is mapped back
to the element id here. CORE's concern, as little of the screen as possible
leaving the device, is met twice: a large screen is cut to the blocks the task
needs (:mod:`inference.policies.exposure`), and for a ``cloud`` endpoint the
description is redacted first. Past actions are the preview instructions with
long labels clipped. A model failure (timeout, unusable answer) is not
confident: the chain moves on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from droidretriever.config import PerceptionSettings
from droidretriever.models import Action, Input, LongPress, Screen, Scroll, SubTask, Tap
from inference.errors import LLMError
from inference.llm import LLMClient
from inference.llm_roles import choose_action, describe_action
from inference.perception import redactor_for
from inference.perception.describe import ScreenDescription
from inference.policies.base import Decision, PolicyContext
from inference.policies.exposure import SCREEN_TOKEN_BUDGET, describe_for_navigator

__all__ = ["LLMNavigatorPolicy", "compact_history", "goal_text", "numbered_screen"]

_HISTORY_LABEL = 24  # characters of a label kept in a past action ("Tap [麦当劳 (漕溪北路店)…]")
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
                 help_document: str | None = None, screen_budget: int = SCREEN_TOKEN_BUDGET) -> None:
        self._client = client
        self._redactor = redactor_for(client.endpoint, perception or PerceptionSettings())
        self._help_document = help_document
        self._screen_budget = screen_budget
        self.failures: list[str] = []

    @property
    def name(self) -> str:
        return self._client.name

    def decide(self, context: PolicyContext) -> Decision | None:
        """LLM2's action on this screen, or None when the model fails."""
        perception = context.perception
        description = describe_for_navigator(perception, context.subtask, redactor=self._redactor,
                                             budget=self._screen_budget)
        shown = numbered_screen(perception.screen, description)
        try:
            reply = choose_action(
                self._client,
                goal=goal_text(context.subtask),
                screen=shown,
                description=description.text,
                previous_actions=compact_history(t.instruction for t in context.history),
                help_document=self._help_document,
                reflection=context.reflection,
                screenshot_png=context.screenshot_png if self._client.endpoint.vision else None,
            )
        except LLMError as exc:
            self.failures.append(str(exc))
            return None
        action = _map_back(reply.value, description)
        exposed = len(description.element_ids) if self._client.endpoint.locality == "cloud" else 0
        return Decision(
            action=action, policy=self.name, skill=describe_action(reply.value, shown),
            usage=reply.usage, latency_ms=reply.latency_ms, exposed_elements=exposed,
        )


def goal_text(subtask: SubTask) -> str:
    """The task line the navigator reads: goal, search term, page mode and app."""
    goal = subtask.goal
    if subtask.search_term:
        goal += f" (search for: {subtask.search_term})"
    return f"{goal} [page mode: {subtask.page_mode.value}; app: {subtask.app_label}]"


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
