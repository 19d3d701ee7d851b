"""LLM2 as a policy: the navigator model picks the action when nothing cheaper is confident.

Present only when the navigator role has a model (``client_for`` returns a
client). The model reads perception's screen description, where elements are
numbered ``[1]``, ``[2]``...; it answers with that number, which is mapped back
to the element id here. For a ``cloud`` endpoint the description is redacted
first (CORE's concern: as little of the screen as possible leaves the device).
A model failure (timeout, unusable answer) is not confident: the chain moves on.
"""

from __future__ import annotations

from droidretriever.config import PerceptionSettings
from droidretriever.models import Action, Input, LongPress, Screen, Scroll, Tap
from inference.errors import LLMError
from inference.llm import LLMClient
from inference.perception import describe_screen, redactor_for
from inference.perception.describe import ScreenDescription
from inference.policies.base import Decision, PolicyContext
from inference.roles import choose_action, describe_action

__all__ = ["LLMNavigatorPolicy", "numbered_screen"]


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
                 help_document: str | None = None) -> None:
        self._client = client
        self._redactor = redactor_for(client.endpoint, perception or PerceptionSettings())
        self._help_document = help_document
        self.failures: list[str] = []

    @property
    def name(self) -> str:
        return self._client.name

    def decide(self, context: PolicyContext) -> Decision | None:
        """LLM2's action on this screen, or None when the model fails."""
        perception = context.perception
        description = describe_screen(perception.screen, perception.blocks, redactor=self._redactor)
        shown = numbered_screen(perception.screen, description)
        try:
            reply = choose_action(
                self._client,
                goal=_goal_text(context),
                screen=shown,
                description=description.text,
                previous_actions=[t.instruction for t in context.history],
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


def _goal_text(context: PolicyContext) -> str:
    subtask = context.subtask
    goal = subtask.goal
    if subtask.search_term:
        goal += f" (search for: {subtask.search_term})"
    return f"{goal} [page mode: {subtask.page_mode.value}; app: {subtask.app_label}]"


def _map_back(action: Action, description: ScreenDescription) -> Action:
    if isinstance(action, Tap | LongPress | Input | Scroll) and action.target is not None:
        number = int(action.target) if action.target.isdigit() else 0
        return action.model_copy(update={"target": description.element_id(number)})
    return action
