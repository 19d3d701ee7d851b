"""What a role chain returns: the value, which policy produced it, what it cost."""

from __future__ import annotations

from typing import Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from droidretriever.models import TokenUsage

__all__ = ["RoleOutcome"]

T = TypeVar("T")


class RoleOutcome(BaseModel, Generic[T]):
    """A decision with its provenance: ``rules`` or ``llm:<model>``, tokens, latency."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: T
    policy: str
    usage: TokenUsage = TokenUsage()
    latency_ms: float = 0.0
    prompt_version: str = ""
    fallback_reason: str = ""  # why the model was not used although configured
