"""The synthesis step: captures + query -> grounded :class:`Report` -> ``report.md`` / ``report.html``.

    captures --(writer: LLM4, or extractive)--> markdown with [capture_id(quote)]
             --parse + ground--> Report.citations (grounded or unverified)
             --crops--> runs/<run_id>/highlights/*.png
             --render--> runs/<run_id>/report.md, runs/<run_id>/report.html

A :class:`ReportWriter` is whatever writes the markdown. Without one (no
model configured) the extractive writer runs and the report says so. When the
model fails (unreachable, timed out, out of the run's model time, cut off,
refused with a 4xx such as a prompt too long for the served context, an
empty or keyless answer), or its report has no key point backed by a
grounded citation, the extractive report is written instead, with a banner
that says "the synthesizer's model failed", why, and the fix: the run still
ends with a report built from what was captured, never without one. A report
with some uncited key points is published with them marked and a warning. The
report carries the run's model tokens per role and every fallback to the
rules (its footer shows them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from core.errors import DroidRetrieverError
from core.models import (
    AppStatus,
    CallOutcome,
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
from tasks.synthesis.extractive import EXTRACTIVE_BANNER, EXTRACTIVE_NAME, write_extractive
from tasks.synthesis.grounding import ground_citations
from tasks.synthesis.render import render_report_html, render_report_markdown

__all__ = [
    "FAILED_MODEL_NAME",
    "ReportFiles",
    "ReportWriter",
    "WrittenMarkdown",
    "build_report",
    "failed_model_banner",
    "publish_report",
    "synthesize_report",
]


FAILED_MODEL_NAME = "extractive (the synthesizer's model failed)"


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
    attempt = _ask_model(writer, run_id=run_id, query=query, captures=captures, apps=apps,
                         threshold=threshold, search_terms=search_terms) if writer is not None else None
    own: list[ModelFallback] = []
    report = attempt.report if attempt is not None else None
    if report is None:
        failure = attempt.failure if attempt is not None else ""
        if failure:
            own.append(ModelFallback(role="synthesizer", reason=failure))
        report = _extractive_report(run_id=run_id, query=query, captures=captures, apps=apps,
                                    threshold=threshold, search_terms=search_terms, failure=failure)
    calls = attempt.calls if attempt is not None else ()
    citations = store_highlight_crops(store, run_id, report.citations, captures)
    return report.model_copy(update={
        "citations": citations, "tokens": spent + TokenLedger.of(calls),
        "fallbacks": merge_tallies(fallbacks, tally_fallbacks(own)),
        "warnings": attempt.warnings if attempt is not None else (),
    })


class _Attempt(BaseModel):
    """What asking the synthesizer's model came to: a report to publish, or why not."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    report: Report | None = None
    failure: str = ""  # why the model's report is not published ("" when it is)
    calls: tuple[ModelCall, ...] = ()
    warnings: tuple[str, ...] = ()


def _ask_model(writer: ReportWriter, *, run_id: str, query: Query, captures: Sequence[Capture],
               apps: Sequence[AppStatus], threshold: float, search_terms: Sequence[str]) -> _Attempt:
    """The model's report, checked; any failure of the model (a 4xx too) is a reason, never a lost run.

    An answer with no key point (``{}``, a lone heading) or none backed by a grounded
    citation is a failed call: its last request is counted failed.
    """
    try:
        written = writer.write_report(query, captures, apps, search_terms)
    except LLMError as exc:
        # Even a refused request (4xx: a prompt too long for the served context, a wrong
        # model name) ends in a report over what was captured, with the fix in its banner.
        return _Attempt(failure=_with_hint(describe_failure(exc), exc.hint), calls=exc.calls)
    except DroidRetrieverError as exc:  # the model's own errors; a bug elsewhere still raises
        return _Attempt(failure=_with_hint(str(exc), exc.hint))
    report = build_report(run_id=run_id, query=query, markdown=written.markdown,
                          captures=captures, apps=apps, synthesizer=written.synthesizer,
                          threshold=threshold, page_dumps=written.page_dumps)
    check = check_key_points(report.markdown, report.citations)
    failure = ""
    if not check.points:
        shown = " ".join(written.markdown.split())
        failure = f"its answer has no key point ({shown[:60]!r}{'…' if len(shown) > 60 else ''})"
    elif check.grounded == 0:
        failure = (f"its answer has {len(check.points)} key points and no citation grounded on the "
                   "captures, so it is not shown")
    if failure:
        return _Attempt(failure=failure, calls=_failed_last(written.calls))
    if not check.uncited:
        return _Attempt(report=report, calls=written.calls)
    marked = report.model_copy(update={"markdown": mark_uncited(report.markdown, check)})
    return _Attempt(report=marked, calls=written.calls, warnings=(check.warning(),))


def _extractive_report(*, run_id: str, query: Query, captures: Sequence[Capture], apps: Sequence[AppStatus],
                       threshold: float, search_terms: Sequence[str], failure: str) -> Report:
    """The extractive report; when the synthesizer's model failed, its banner says so and why."""
    # Relative dates ("last month") count from the phone's date, as its pages do.
    today = max((c.phone_date for c in captures if c.phone_date is not None), default=None)
    extractive = write_extractive(query, captures, apps, search_terms, today=today)
    markdown, name = extractive.markdown, EXTRACTIVE_NAME
    if failure:  # one banner line for another: the page dumps' line numbers hold
        markdown = markdown.replace(EXTRACTIVE_BANNER, failed_model_banner(failure), 1)
        name = FAILED_MODEL_NAME
    return build_report(run_id=run_id, query=query, markdown=markdown, captures=captures, apps=apps,
                        synthesizer=name, threshold=threshold, page_dumps=extractive.page_dumps)


def failed_model_banner(failure: str) -> str:
    """The extractive report's banner when a synthesizer model is configured and failed."""
    return (f"> **Extractive summary: the synthesizer's model failed: {failure.rstrip('.')}.** The lines "
            "below are copied from the captured screens and picked by matching your question's words; "
            "nothing was interpreted or checked for completeness. Open a citation to see its evidence.")


def _with_hint(reason: str, hint: str) -> str:
    return f"{reason} (fix: {hint})" if hint else reason


def _failed_last(calls: tuple[ModelCall, ...]) -> tuple[ModelCall, ...]:
    """``calls`` with the last one counted failed (it answered, but with nothing usable)."""
    if not calls:
        return calls
    last = calls[-1]
    usage = last.usage.model_copy(update={"failed": 1})
    return (*calls[:-1], last.model_copy(update={"outcome": CallOutcome.INVALID, "usage": usage}))


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
