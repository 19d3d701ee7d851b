"""The report: Markdown whose citations are grounded to boxes on captures, per-app status.

``Report.page_dumps`` marks the parts of the Markdown that copy captured pages
as they are (the extractive writer's fallback when no line matches the
question) rather than state an answer. A person sees them like any other part;
a scorer (``suites.scoring``) counts a scoring point only where
the report states it as an answer, so it skips them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Self

from pydantic import Field, model_validator

from core.models.base import Frozen, utcnow
from core.models.geometry import Bounds
from core.models.plan import Query
from core.models.records import SubTaskStatus
from core.models.usage import FallbackTally, TokenLedger

__all__ = ["AppStatus", "Citation", "Intervention", "LineSpan", "Report"]


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


class Intervention(Frozen):
    """Something a person did in a run, for the report: who, when, on which phone, what.

    ``what`` never holds what they typed ("text entered, 12 characters").
    """

    at: datetime
    actor: str
    what: str
    serial: str | None = None
    app_label: str = ""
    subtask_id: str | None = None


class LineSpan(Frozen):
    """Lines ``[start, end)`` of a Markdown text, counted from 0."""

    start: int = Field(ge=0)
    end: int = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.end < self.start:
            raise ValueError(f"a line span ends before it starts: [{self.start}, {self.end})")
        return self

    def __contains__(self, line: object) -> bool:
        return isinstance(line, int) and self.start <= line < self.end


class Report(Frozen):
    run_id: str
    query: Query
    markdown: str
    citations: tuple[Citation, ...] = ()
    apps: tuple[AppStatus, ...] = ()
    # "llm:<model>", "extractive (no model configured)" or "extractive (the synthesizer's model failed)"
    synthesizer: str
    tokens: TokenLedger = TokenLedger()  # the whole run's model tokens, per role
    fallbacks: tuple[FallbackTally, ...] = ()  # roles whose model failed and the rules decided
    warnings: tuple[str, ...] = ()  # what a reader must know: uncited key points, a cut-off answer
    created_at: datetime = Field(default_factory=utcnow)
    # Lines of ``markdown`` that copy captured pages as they are, not an answer (see above).
    page_dumps: tuple[LineSpan, ...] = ()
    # Why the report covers less than the question asked ("" = the run went to its end): a person
    # stopped the run, so apps or pages it planned were not reached. Shown as a banner.
    partial: str = ""
    interventions: tuple[Intervention, ...] = ()  # what people did in the run, in time order

    @property
    def unverified(self) -> tuple[Citation, ...]:
        return tuple(c for c in self.citations if not c.grounded)
