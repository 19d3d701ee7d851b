"""The synthesis step: captures + query -> grounded :class:`Report` -> ``report.md`` / ``report.html``.

    captures --(writer: LLM4, or extractive)--> markdown with [capture_id(quote)]
             --parse + ground--> Report.citations (grounded or unverified)
             --crops--> runs/<run_id>/highlights/*.png
             --render--> runs/<run_id>/report.md, runs/<run_id>/report.html

A :class:`ReportWriter` is whatever writes the markdown. Without one (no
model configured) the extractive writer runs and the report says so. When the
model fails (unreachable, timed out, cut off, bad output), or its report has
no key point backed by a grounded citation, the extractive report is written
instead, with the reason stated in its banner: the run still ends with a
report built from what was captured. A report with some uncited key points is
published with them marked and a warning. A model that refuses the request
(4xx) is a configuration error and is raised. The report carries the run's
model tokens per role and every fallback to the rules (its footer shows them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from droidretriever.errors import DroidRetrieverError
from droidretriever.models import (
    AppStatus,
    Capture,
    FallbackTally,
    LineSpan,
    ModelCall,
    ModelFallback,
    Query,
    Report,
    TokenLedger,
    merge_tallies,
    tally_fallbacks,
)
from inference.errors import LLMError
from inference.llm_roles import describe_failure
from tasks.synthesis.checks import check_key_points, mark_uncited
from tasks.synthesis.citations import iter_citation_marks
from tasks.synthesis.evidence import EvidenceStore, store_highlight_crops
from tasks.synthesis.extractive import EXTRACTIVE_NAME, write_extractive
from tasks.synthesis.grounding import ground_citations
from tasks.synthesis.render import render_report_html, render_report_markdown

__all__ = [
    "ReportFiles",
    "ReportWriter",
    "WrittenMarkdown",
    "build_report",
    "publish_report",
    "synthesize_report",
]


class WrittenMarkdown(BaseModel):
    """What a writer produced: the markdown, who wrote it (``llm:<model>``), its page dumps."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    markdown: str
    synthesizer: str
    calls: tuple[ModelCall, ...] = ()  # the model requests it took
    page_dumps: tuple[LineSpan, ...] = ()  # lines that copy captured pages, not an answer


class ReportWriter(Protocol):
    """Writes report markdown with ``[capture_id(original text)]`` citations (LLM4)."""

    def write_report(self, query: Query, captures: Sequence[Capture], apps: Sequence[AppStatus],
                     search_terms: Sequence[str] = ()) -> WrittenMarkdown: ...


class ReportFiles(BaseModel):
    """Where a published report lives in the object store."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    report: Report
    markdown_key: str
    html_key: str


def build_report(*, run_id: str, query: Query, markdown: str, captures: Sequence[Capture],
                 apps: Sequence[AppStatus], synthesizer: str, threshold: float,
                 page_dumps: Sequence[LineSpan] = ()) -> Report:
    """Parse and ground every citation in ``markdown``; ``citations[i]`` is the i-th ref in it."""
    refs = [ref for mark in iter_citation_marks(markdown) for ref in mark.refs]
    citations = ground_citations(refs, captures, threshold)
    return Report(run_id=run_id, query=query, markdown=markdown, citations=citations,
                  apps=tuple(apps), synthesizer=synthesizer, page_dumps=tuple(page_dumps))


def synthesize_report(
    *,
    run_id: str,
    query: Query,
    captures: Sequence[Capture],
    apps: Sequence[AppStatus],
    store: EvidenceStore,
    threshold: float,
    writer: ReportWriter | None = None,
    search_terms: Sequence[str] = (),
    spent: TokenLedger = TokenLedger(),
    fallbacks: Sequence[FallbackTally] = (),
) -> Report:
    """Write (LLM4 or extractive), ground, check and store highlight crops; return the report.

    ``spent`` and ``fallbacks``: what the run's other model roles cost and where their
    rules decided; the synthesizer's own calls and fallback are added to them.
    """
    written: WrittenMarkdown | None = None
    failure = ""
    calls: tuple[ModelCall, ...] = ()
    report: Report | None = None
    warnings: list[str] = []
    if writer is not None:
        try:
            written = writer.write_report(query, captures, apps, search_terms)
            calls = written.calls
        except LLMError as exc:
            calls = exc.calls
            if not exc.transient:
                raise  # a configuration error (4xx) stops the run with its fix
            failure = f"{describe_failure(exc)} ({exc.hint})" if exc.hint else describe_failure(exc)
        except DroidRetrieverError as exc:  # the model's own errors; a bug elsewhere still raises
            failure = f"{exc} ({exc.hint})" if exc.hint else str(exc)
    if written is not None:
        report = build_report(run_id=run_id, query=query, markdown=written.markdown,
                              captures=captures, apps=apps, synthesizer=written.synthesizer,
                              threshold=threshold, page_dumps=written.page_dumps)
        check = check_key_points(report.markdown, report.citations)
        if check.points and check.grounded == 0:
            failure = (f"its answer has {len(check.points)} key points and no citation grounded on the "
                       "captures, so it is not shown")
            report = None
        elif check.uncited:
            warnings.append(check.warning())
            report = report.model_copy(update={"markdown": mark_uncited(report.markdown, check)})
    own: list[ModelFallback] = []
    if report is None:
        # Relative dates ("last month") count from the phone's date, as its pages do.
        today = max((c.phone_date for c in captures if c.phone_date is not None), default=None)
        extractive = write_extractive(query, captures, apps, search_terms, today=today)
        markdown = extractive.markdown
        if failure:  # one banner line for another: the page dumps' line numbers hold
            own.append(ModelFallback(role="synthesizer", reason=failure))
            markdown = markdown.replace(
                "> **Extractive summary: no language model is configured.**",
                f"> **Extractive summary: the report model failed** ({failure}).", 1)
        report = build_report(run_id=run_id, query=query, markdown=markdown, captures=captures,
                              apps=apps, synthesizer=EXTRACTIVE_NAME, threshold=threshold,
                              page_dumps=extractive.page_dumps)
    citations = store_highlight_crops(store, run_id, report.citations, captures)
    return report.model_copy(update={
        "citations": citations, "tokens": spent + TokenLedger.of(calls),
        "fallbacks": merge_tallies(fallbacks, tally_fallbacks(own)), "warnings": tuple(warnings),
    })


def publish_report(report: Report, captures: Sequence[Capture], store: EvidenceStore) -> ReportFiles:
    """Render and store ``report.md``, ``report.html`` and ``report.json`` under ``runs/<run_id>/``.

    ``report.json`` is the :class:`Report` itself (citations with their boxes and
    highlight crops), for programs and the dashboard.
    """
    images = {c.id: store.get_bytes(c.image_key) for c in captures}
    md_key = f"runs/{report.run_id}/report.md"
    html_key = f"runs/{report.run_id}/report.html"
    store.put_bytes(f"runs/{report.run_id}/report.json", report.model_dump_json().encode(),
                    "application/json")
    store.put_bytes(md_key, render_report_markdown(report).encode(), "text/markdown; charset=utf-8")
    store.put_bytes(html_key, render_report_html(report, captures, images).encode(),
                    "text/html; charset=utf-8")
    return ReportFiles(report=report, markdown_key=md_key, html_key=html_key)
