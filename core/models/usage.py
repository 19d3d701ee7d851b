"""What the model roles cost and when they were not used: tokens per call, role and run; fallbacks.

    ModelCall      one request to a role's endpoint (failed ones and repair rounds included)
    TokenUsage     a sum of calls: prompt (image tokens included), completion, calls, failures
    TokenLedger    TokenUsage per role (decomposer, navigator, evaluator, synthesizer)
    ModelFallback  one decision the rules made because a configured model failed
    FallbackTally  fallbacks of one role, counted, with the latest reason
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from pydantic import Field

from core.models.base import Frozen

__all__ = [
    "CallOutcome",
    "FallbackTally",
    "ModelCall",
    "ModelFallback",
    "TokenLedger",
    "TokenUsage",
    "merge_tallies",
    "tally_fallbacks",
]


class TokenUsage(Frozen):
    """Tokens of one or more model calls. ``prompt`` includes the (estimated) ``image`` tokens."""

    prompt: int = 0
    completion: int = 0
    image: int = 0  # estimated from the images' size and the role's max_pixels
    calls: int = 0  # requests sent, failed ones included
    failed: int = 0  # requests that brought no usable answer (error, timeout, bad or cut-off JSON)
    slow: int = 0  # requests slower than the role's slow_call_s (beyond their tokens' own time)

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            prompt=self.prompt + other.prompt,
            completion=self.completion + other.completion,
            image=self.image + other.image,
            calls=self.calls + other.calls,
            failed=self.failed + other.failed,
            slow=self.slow + other.slow,
        )

    @property
    def total(self) -> int:
        return self.prompt + self.completion

    @property
    def text(self) -> int:
        """Prompt tokens that are not image tokens."""
        return max(0, self.prompt - self.image)


class CallOutcome(StrEnum):
    """How one request ended."""

    OK = "ok"  # a usable answer
    INVALID = "invalid"  # an answer that broke its schema or its check (a repair round may follow)
    CUT_OFF = "cut_off"  # finish_reason "length": the answer hit max_tokens
    TIMEOUT = "timeout"  # no answer before the call's deadline
    UNAVAILABLE = "unavailable"  # refused or dropped connection, 5xx, 429
    REFUSED = "refused"  # 4xx: a configuration error (model name, key, images to a text model)


class ModelCall(Frozen):
    """One request to a role's endpoint and what it cost."""

    role: str
    model: str
    usage: TokenUsage
    outcome: CallOutcome = CallOutcome.OK
    latency_ms: float = Field(default=0.0, ge=0.0)
    estimated: bool = False  # the server reported no usage: prompt tokens counted locally
    max_tokens: int = 0  # the completion limit this request was sent with


class TokenLedger(Frozen):
    """Token usage per role; sums of ledgers add role by role."""

    roles: dict[str, TokenUsage] = Field(default_factory=dict)

    @classmethod
    def of(cls, calls: Iterable[ModelCall]) -> TokenLedger:
        """The ledger of ``calls``."""
        roles: dict[str, TokenUsage] = {}
        for call in calls:
            roles[call.role] = roles.get(call.role, TokenUsage()) + call.usage
        return cls(roles=roles)

    def __add__(self, other: TokenLedger) -> TokenLedger:
        roles = dict(self.roles)
        for role, usage in other.roles.items():
            roles[role] = roles.get(role, TokenUsage()) + usage
        return TokenLedger(roles=roles)

    @property
    def total(self) -> TokenUsage:
        total = TokenUsage()
        for usage in self.roles.values():
            total = total + usage
        return total


class ModelFallback(Frozen):
    """A decision the rules made because the role's configured model failed (or ran out of time)."""

    role: str
    reason: str


class FallbackTally(Frozen):
    """How often one role's model failed and the rules decided instead; the latest reason."""

    role: str
    count: int = Field(ge=1)
    reason: str = ""

    def sentence(self) -> str:
        """``the evaluator's model failed 7 times; its rules decided those steps (timeout ...)``."""
        times = "once" if self.count == 1 else f"{self.count} times"
        decided = {
            "decomposer": "the plan comes from the rules",
            "synthesizer": "the report is the extractive summary",
            "navigator": "the skills and the explorer chose those moves, or the try ended",
        }.get(self.role, "its rules decided those steps")
        why = f" (last: {self.reason})" if self.reason else ""
        return f"the {self.role}'s model failed {times}; {decided}{why}"


def tally_fallbacks(fallbacks: Iterable[ModelFallback]) -> tuple[FallbackTally, ...]:
    """Fallbacks counted per role, roles in order of first appearance."""
    counts: dict[str, int] = {}
    reasons: dict[str, str] = {}
    for fallback in fallbacks:
        counts[fallback.role] = counts.get(fallback.role, 0) + 1
        reasons[fallback.role] = fallback.reason
    return tuple(FallbackTally(role=r, count=n, reason=reasons[r]) for r, n in counts.items())


def merge_tallies(*groups: Iterable[FallbackTally]) -> tuple[FallbackTally, ...]:
    """Tallies of several runs of roles added role by role (the latest reason kept)."""
    merged: dict[str, FallbackTally] = {}
    for group in groups:
        for tally in group:
            known = merged.get(tally.role)
            merged[tally.role] = tally if known is None else FallbackTally(
                role=tally.role, count=known.count + tally.count, reason=tally.reason or known.reason)
    return tuple(merged.values())
