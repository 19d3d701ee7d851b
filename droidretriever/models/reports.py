"""The report: Markdown whose citations are grounded to boxes on captures, per-app status."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from droidretriever.models.base import Frozen, utcnow
from droidretriever.models.geometry import Bounds
from droidretriever.models.plan import Query
from droidretriever.models.records import SubTaskStatus
from droidretriever.models.usage import FallbackTally, TokenLedger

__all__ = ["AppStatus", "Citation", "Report"]


class Citation(Frozen):
    """``[capture_id(original text)]`` in a report, grounded to a box or not."""

    capture_id: str
    quote: str
    grounded: bool = False
    box: Bounds | None = None
    score: float = Field(default=0.0, ge=0.0, le=1.0)
    element_id: str | None = None
    crop_key: str | None = None


class AppStatus(Frozen):
    app_label: str
    package: str
    status: SubTaskStatus
    reason: str = ""


class Report(Frozen):
    run_id: str
    query: Query
    markdown: str
    citations: tuple[Citation, ...] = ()
    apps: tuple[AppStatus, ...] = ()
    synthesizer: str  # "llm:<model>" or "extractive (no model configured)"
    tokens: TokenLedger = TokenLedger()  # the whole run's model tokens, per role
    fallbacks: tuple[FallbackTally, ...] = ()  # roles whose model failed and the rules decided
    warnings: tuple[str, ...] = ()  # what a reader must know: uncited key points, a cut-off answer
    created_at: datetime = Field(default_factory=utcnow)

    @property
    def unverified(self) -> tuple[Citation, ...]:
        return tuple(c for c in self.citations if not c.grounded)
