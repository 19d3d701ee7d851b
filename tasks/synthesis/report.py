"""The synthesis step: captures + query -> grounded :class:`Report` -> ``report.md`` / ``report.html``.

    captures --(writer: LLM4, or extractive)--> markdown with [capture_id(quote)]
             --parse + ground--> Report.citations (grounded or unverified)
             --crops--> runs/<run_id>/highlights/*.png
             --render--> runs/<run_id>/report.md, runs/<run_id>/report.html

A :class:`ReportWriter` is whatever writes the markdown. Without one (no
model configured) the extractive writer runs and the report says so. When the
model fails (unreachable, timed out, bad output) the extractive report is
written instead, with the failure stated in its banner: the run still ends
with a report built from what was captured.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from droidretriever.errors import DroidRetrieverError
from droidretriever.models import AppStatus, Capture, Query, Report
from tasks.synthesis.citations import iter_citation_marks
from tasks.synthesis.evidence import EvidenceStore, store_highlight_crops
from tasks.synthesis.extractive import EXTRACTIVE_NAME, write_extractive_markdown
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
    """What a writer produced: the markdown and who wrote it (``llm:<model>``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    markdown: str
    synthesizer: str


class ReportWriter(Protocol):
    """Writes report markdown with ``[capture_id(original text)]`` citations (LLM4)."""

    def write_report(self, query: Query, captures: Sequence[Capture],
                     apps: Sequence[AppStatus]) -> WrittenMarkdown: ...


class ReportFiles(BaseModel):
    """Where a published report lives in the object store."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    report: Report
    markdown_key: str
    html_key: str


def build_report(*, run_id: str, query: Query, markdown: str, captures: Sequence[Capture],
                 apps: Sequence[AppStatus], synthesizer: str, threshold: float) -> Report:
    """Parse and ground every citation in ``markdown``; ``citations[i]`` is the i-th ref in it."""
    refs = [ref for mark in iter_citation_marks(markdown) for ref in mark.refs]
    citations = ground_citations(refs, captures, threshold)
    return Report(run_id=run_id, query=query, markdown=markdown, citations=citations,
                  apps=tuple(apps), synthesizer=synthesizer)


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
) -> Report:
    """Write (LLM4 or extractive), ground, and store highlight crops; return the report."""
    written: WrittenMarkdown | None = None
    failure = ""
    if writer is not None:
        try:
            written = writer.write_report(query, captures, apps)
        except DroidRetrieverError as exc:  # the model's own errors; a bug elsewhere still raises
            failure = f"{exc} ({exc.hint})" if exc.hint else str(exc)
    if written is None:
        markdown = write_extractive_markdown(query, captures, apps, search_terms)
        if failure:
            markdown = markdown.replace(
                "> **Extractive summary: no language model is configured.**",
                f"> **Extractive summary: the report model failed** ({failure}).", 1)
        written = WrittenMarkdown(markdown=markdown, synthesizer=EXTRACTIVE_NAME)
    report = build_report(run_id=run_id, query=query, markdown=written.markdown,
                          captures=captures, apps=apps, synthesizer=written.synthesizer,
                          threshold=threshold)
    citations = store_highlight_crops(store, run_id, report.citations, captures)
    return report.model_copy(update={"citations": citations})


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
