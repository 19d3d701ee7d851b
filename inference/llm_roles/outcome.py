"""What a role chain returns: the value, which policy produced it, what it cost, and any fallback."""

from __future__ import annotations

from typing import Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from core.models import ModelCall, ModelFallback, TokenUsage
from inference.llm import describe_failure

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
