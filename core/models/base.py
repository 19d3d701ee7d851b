"""The base of every shared model, and the one clock and id maker they use."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict

__all__ = ["Frozen", "new_id", "utcnow"]


class Frozen(BaseModel):
    """A frozen pydantic model that rejects unknown fields: what crosses a module, a message or the API.

    Every package's value types derive from it (one home, one config).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)


def utcnow() -> datetime:
    """Timezone-aware now, the only clock the models use."""
    return datetime.now(UTC)


def new_id(prefix: str) -> str:
    """A short, sortable, unique id such as ``run-20261121T101500-3f9a1c``."""
    return f"{prefix}-{utcnow():%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"
