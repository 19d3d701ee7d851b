"""One task's model tokens as ``python -m bench.tokens`` counts them at the recording server.

Served model names stand for roles by their prefix (``nav-<setup>`` is a
navigator, ``eval-`` an evaluator, ``planner`` the decomposer, ``writer`` the
synthesizer); :class:`TaskTokens` adds up what each role was sent and
answered, per request as the server billed it.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field

from bench.results import percentile

# A test double, used as one: the recording server stands in for vLLM and counts what it is sent.
from droidretriever.testing import RecordedRequest
from inference.perception import count_tokens

__all__ = ["NAVIGATION", "ROLES", "TaskTokens", "describe_stats", "role_of", "screen_of"]

NAVIGATION = ("navigator", "evaluator")
_PREFIX_ROLES = {"nav": "navigator", "eval": "evaluator", "planner": "decomposer", "writer": "synthesizer"}
ROLES = tuple(_PREFIX_ROLES.values())


def role_of(model: str) -> str:
    """The role a served model name stands for: ``nav-<setup>`` is a navigator, and so on."""
    return _PREFIX_ROLES[model.split("-", 1)[0]]


def screen_of(request: RecordedRequest) -> str:
    """The screen description a navigator or evaluator request carries."""
    return request.text.split("<screen_data>", 1)[-1].split("</screen_data>", 1)[0]


@dataclass
class TaskTokens:
    """One task's measured tokens: per role, text and image apart; calls; whether it was reached."""

    id: str
    text: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    image: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    completion: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    apps: list[int] = field(default_factory=list)  # navigation tokens of each app's sub-task
    reached: bool = True
    resent: int = 0  # evaluator requests showing a screen the evaluator was already shown in the sub-task
    more: int = 0  # navigator calls that asked for more of a cut screen
    screens: list[int] = field(default_factory=list)  # screen description tokens of each navigator call
    stopped: int = 0  # sub-tasks whose model calls budgets.model_calls_per_subtask ended
    subtask_calls: list[int] = field(default_factory=list)  # model requests of each app's sub-task
    listed_apps: int = 0  # installed apps the decomposer was shown
    citations: int = 0  # citation marks in the synthesizer's answer
    # The decomposer shown only the task's apps and the synthesizer's one-line answer:
    # the conditions of the figures published before issue 31, measured in the same run.
    former: TaskTokens | None = None

    def add(self, requests: list[RecordedRequest]) -> None:
        """Count ``requests`` (each under the role its model name stands for)."""
        for request in requests:
            role = role_of(request.model)
            self.text[role] += request.text_tokens
            self.image[role] += request.image_tokens
            self.completion[role] += request.completion_tokens
            self.calls[role] += 1
            if role == "navigator":
                self.screens.append(count_tokens(screen_of(request)))

    def total(self, roles: tuple[str, ...], *, image: bool = True, completion: bool = True) -> int:
        """Tokens of ``roles``: prompt text, and images and completions unless left out."""
        return sum(self.text[r] + (self.image[r] if image else 0) + (self.completion[r] if completion else 0)
                   for r in roles)


def describe_stats(values: list[int]) -> str:
    """``median …, p95 …, max … (n=…)`` of ``values``."""
    floats = [float(v) for v in values]
    return (f"median {statistics.median(values):,.0f}, p95 {percentile(floats, 0.95):,.0f}, "
            f"max {max(values):,} (n={len(values)})")
