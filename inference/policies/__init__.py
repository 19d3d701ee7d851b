"""Navigation policies: who chooses the next action on a screen.

    PolicyChain([RouteMemoryPolicy, SkillsPolicy, MapRoutePolicy, ExplorePolicy,
                 LLMNavigatorPolicy, UnfamiliarScreenPolicy]).decide(PolicyContext) -> Decision | None

The first confident policy acts; ``Decision.policy`` names it on the step.
``RouteMemoryPolicy`` replays a remembered route with a screen check per step,
``SkillsPolicy`` knows the moves every app shares, ``MapRoutePolicy`` follows
the app map's shortest path to the screens that hold what the goal asks where
the skills have nothing to do (entries only: results and searches are the
skills'), ``ExplorePolicy`` taps the
entry nearest to the goal's concepts (multilingual lexicon) and backtracks at
dead ends, ``LLMNavigatorPolicy`` asks
LLM2 and exists only when a navigator model is configured; it is shown the
screen through ``describe_for_navigator`` (only the blocks the task needs when
the screen is large) and the part of the app map that matters as its manual.
``UnfamiliarScreenPolicy`` comes last: on a screen nobody knew, it tries the
elements in the order the question and the map suggest, so no try ends for want
of a rule.
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
    ran_a_search,
)
from inference.policies.errors import PolicyError, UnknownElementError
from inference.policies.explore import EXPLORE, ExplorationEdge, ExplorePolicy, rank_entries
from inference.policies.exposure import SCREEN_TOKEN_BUDGET, describe_for_navigator, goal_words
from inference.policies.llm_navigator import (
    LLMNavigatorPolicy,
    compact_history,
    goal_text,
    numbered_screen,
    shown_history,
)
from inference.policies.map_route import MAP_ROUTE, MapRoutePolicy
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
    is_forbidden,
    is_forbidden_tap,
    rank_results,
)
from inference.policies.unfamiliar import UNFAMILIAR, UnfamiliarScreenPolicy

__all__ = [
    "EXPLORE",
    "MAP_ROUTE",
    "ROUTE_MEMORY",
    "SCREEN_TOKEN_BUDGET",
    "SKILLS",
    "UNFAMILIAR",
    "Decision",
    "ExplorationEdge",
    "ExplorePolicy",
    "LLMNavigatorPolicy",
    "MapRoutePolicy",
    "Policy",
    "PolicyChain",
    "PolicyContext",
    "PolicyError",
    "RouteMemoryPolicy",
    "SkillsPolicy",
    "TakenAction",
    "UnfamiliarScreenPolicy",
    "UnknownElementError",
    "compact_history",
    "describe_for_navigator",
    "find_dialog_dismiss",
    "find_search_field",
    "find_search_icon",
    "goal_text",
    "goal_words",
    "is_dialog_open",
    "is_forbidden",
    "is_forbidden_tap",
    "item_signature",
    "numbered_screen",
    "ran_a_search",
    "rank_entries",
    "rank_results",
    "route_steps",
    "screen_anchors",
    "shown_history",
]
