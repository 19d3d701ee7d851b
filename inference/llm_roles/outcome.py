"""What a role chain returns: the value, which policy produced it, what it cost, and any fallback."""

from __future__ import annotations

from typing import Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from droidretriever.models import ModelCall, ModelFallback, TokenUsage

__all__ = ["RoleOutcome", "describe_failure"]

T = TypeVar("T")


class RoleOutcome(BaseModel, Generic[T]):
    """A decision with its provenance: ``rules`` or ``llm:<model>``, its requests, any fallback."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: T
    policy: str
    usage: TokenUsage = TokenUsage()
    calls: tuple[ModelCall, ...] = ()  # every request to the model, failed ones included
    latency_ms: float = 0.0
    prompt_version: str = ""
    fallback: ModelFallback | None = None  # why the rules decided although a model is configured

    @property
    def fallback_reason(self) -> str:
        return self.fallback.reason if self.fallback is not None else ""


def describe_failure(error: Exception) -> str:
    """A short reason for a fallback: the error's first line, without the endpoint's URL."""
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text if len(text) <= 240 else text[:239] + "…"
