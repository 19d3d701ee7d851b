"""The policy seam: what a policy sees (:class:`PolicyContext`), what it answers (:class:`Decision`).

A policy is anything with a ``name`` and ``decide(context) -> Decision | None``;
``None`` means "not confident here", and :class:`PolicyChain` asks the next
one. The first confident policy acts, and its name is recorded on the step.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Protocol

from core.models import (
    Action,
    Frozen,
    Input,
    LongPress,
    PageType,
    Screen,
    Scroll,
    SubTask,
    Tap,
    TokenUsage,
    UIElement,
)
from inference.perception import Perception
from inference.policies.errors import UnknownElementError

__all__ = [
    "PICK_SUGGESTION",
    "SUBMIT_FORM",
    "Decision",
    "Policy",
    "PolicyChain",
    "PolicyContext",
    "TakenAction",
    "is_dialog_open",
    "item_signature",
    "ran_a_search",
]



PICK_SUGGESTION = "pick_suggestion"  # the skill that opens a suggestion instead of typing the term
SUBMIT_FORM = "submit_query_form"  # the skill that runs an app's query form as it is filled in


class TakenAction(Frozen):
    """One action already taken in this try, as the policies remember it."""

    action: Action
    instruction: str  # the preview text, e.g. "Tap [Texas]"
    policy: str
    skill: str = ""
    fingerprint: str = ""  # of the screen the action was taken on
    opened_result: bool = False  # a tap on an item of a results list (whoever chose it)
    # False when the phone did not take it: the text did not land, or a submitted
    # search left the page as it was (a pop-up swallowed the tap). Policies then
    # treat the move as not made, so the search is typed again.
    applied: bool = True


def ran_a_search(history: Sequence[TakenAction]) -> bool:
    """Whether ``history`` submitted a search, opened a suggestion in its place or ran a query form."""
    return any(
        ((isinstance(t.action, Input) and t.action.submit) or t.skill in (PICK_SUGGESTION, SUBMIT_FORM))
        and t.applied for t in history
    )


class PolicyContext(Frozen):
    """Everything a policy may read to choose the next action."""

    subtask: SubTask
    perception: Perception
    page_type: PageType
    step: int
    attempt: int = 1
    history: tuple[TakenAction, ...] = ()  # this try's actions, oldest first
    visited: frozenset[str] = frozenset()  # item signatures of results already opened
    repeats: int = 0  # how often this screen's fingerprint was seen before in this try
    empty_searches: frozenset[str] = frozenset()  # terms whose search found nothing (any try)
    reflection: str | None = None  # tips from the previous try
    screenshot_png: bytes | None = None  # only sent to vision models

    @property
    def screen(self) -> Screen:
        return self.perception.screen

    @property
    def searched(self) -> bool:
        """Whether a search was submitted in this try (by any policy), or a suggestion
        reading the search term was opened in its place, or an app's query form was run."""
        return ran_a_search(self.history)

    @property
    def search_found_something(self) -> bool:
        """Whether a search of this try was submitted and did not say that nothing was found (a
        query form run as it was filled in has no term of its own to try shorter)."""
        return any(((isinstance(t.action, Input) and t.action.submit and t.action.text not in self.empty_searches)
                    or t.skill == SUBMIT_FORM) and t.applied for t in self.history)

    @property
    def opened_result(self) -> bool:
        """Whether a result of a list was opened in this try (by any policy)."""
        return any(t.opened_result and t.applied for t in self.history)


class Decision(Frozen):
    """The action a policy chose, who chose it and what it cost."""

    action: Action
    policy: str  # route_memory, skills, llm:<model>
    skill: str = ""  # the skill (or route step) behind it, for the trace and reflection
    usage: TokenUsage = TokenUsage()
    latency_ms: float = 0.0
    item_signature: str | None = None  # set when the action opens a result of a list
    exposed_elements: int = 0  # elements that left the device for a cloud model
    notes: tuple[str, ...] = ()  # why earlier policies passed, model fallbacks


class Policy(Protocol):
    """One way of choosing the next action."""

    @property
    def name(self) -> str:
        """How the trace names this policy."""
        ...

    def decide(self, context: PolicyContext) -> Decision | None:
        """The next action, or None when this policy is not confident on this screen."""
        ...


class PolicyChain:
    """Policies in order; the first confident one acts."""

    def __init__(self, policies: Sequence[Policy]) -> None:
        self.policies = tuple(policies)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.policies)

    def decide(self, context: PolicyContext) -> Decision | None:
        """The first confident decision, checked against the screen, or None."""
        notes: list[str] = []
        for policy in self.policies:
            decision = policy.decide(context)
            if decision is None:
                notes.append(f"{policy.name} passed")
                continue
            _check_target(decision, context.screen)
            return decision.model_copy(update={"notes": (*notes, *decision.notes)})
        return None


def _check_target(decision: Decision, screen: Screen) -> None:
    action = decision.action
    target = action.target if isinstance(action, Tap | LongPress | Input | Scroll) else None
    if target is not None and screen.element(target) is None:
        raise UnknownElementError(
            f"{decision.policy} chose element {target!r}, which is not on the screen "
            f"({screen.package}, {len(screen.elements)} elements)"
        )


_SPACE = re.compile(r"\s+")
_DIALOG_IDS = ("android:id/alertTitle", "android:id/parentPanel", "android:id/button")
_DIALOG_PACKAGES = ("permissioncontroller", "packageinstaller")


def is_dialog_open(screen: Screen) -> bool:
    """Whether a pop-up (alert, ad, permission prompt) covers the app.

    A pop-up is drawn over the page, so the page's own elements are still in the
    hierarchy underneath and a screen check by labels alone still passes; a tap
    on them lands on the pop-up's scrim. Permission prompts come from the
    permission controller, sometimes inside the app's window (its elements'
    resource ids name the permission controller's package).
    """
    return any(p in screen.package for p in _DIALOG_PACKAGES) or any(
        e.resource_id.startswith(_DIALOG_IDS) or "dialog" in e.resource_id.lower()
        or "dialog" in e.class_name.lower()
        or any(p in e.resource_id.partition(":")[0] for p in _DIALOG_PACKAGES)
        for e in screen.elements
    )


def item_signature(item: UIElement, screen: Screen) -> str:
    """A stable name for a result item: its texts (own and inside it), not its position.

    The same result seen after a scroll, or on a later visit of the list, gets
    the same signature, so visited results can be masked.
    """
    texts = [item.label] if item.label else []
    if not texts:
        texts = [
            e.label for e in screen.elements
            if e is not item and e.label and item.bounds.encloses(e.bounds)
        ]
    key = _SPACE.sub(" ", " | ".join(texts)).strip().lower()[:120] or item.resource_id
    return hashlib.blake2b(key.encode(), digest_size=6).hexdigest()
