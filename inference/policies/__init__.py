"""Navigation policies: who chooses the next action on a screen.

    PolicyChain([RouteMemoryPolicy, SkillsPolicy, LLMNavigatorPolicy])
        .decide(PolicyContext) -> Decision | None

The first confident policy acts; ``Decision.policy`` names it on the step.
``RouteMemoryPolicy`` replays a remembered route with a screen check per step,
``SkillsPolicy`` knows the moves every app shares, ``LLMNavigatorPolicy`` asks
LLM2 and exists only when a navigator model is configured.
"""

from __future__ import annotations

from inference.policies.base import (
    Decision,
    Policy,
    PolicyChain,
    PolicyContext,
    TakenAction,
    is_dialog_open,
    item_signature,
)
from inference.policies.errors import PolicyError, UnknownElementError
from inference.policies.llm_navigator import LLMNavigatorPolicy, numbered_screen
from inference.policies.route_memory import (
    ROUTE_MEMORY,
    RouteMemoryPolicy,
    route_steps,
    screen_anchors,
)
from inference.policies.skills import (
    SKILLS,
    SkillsPolicy,
    find_dialog_dismiss,
    find_search_field,
    find_search_icon,
)

__all__ = [
    "ROUTE_MEMORY",
    "SKILLS",
    "Decision",
    "LLMNavigatorPolicy",
    "Policy",
    "PolicyChain",
    "PolicyContext",
    "PolicyError",
    "RouteMemoryPolicy",
    "SkillsPolicy",
    "TakenAction",
    "UnknownElementError",
    "find_dialog_dismiss",
    "find_search_field",
    "find_search_icon",
    "is_dialog_open",
    "item_signature",
    "numbered_screen",
    "route_steps",
    "screen_anchors",
]
