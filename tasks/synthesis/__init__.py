"""Report synthesis: cited, grounded reports from captures, with no phone and no Celery.

Public surface (see docs/reports.md):

- citations: :func:`parse_citations`, :func:`format_citation` (``[capture_id(quote)]``)
- grounding: :func:`ground_citations` (rapidfuzz, threshold from settings)
- writing: :func:`write_extractive` (no model; says which lines copy pages) or a
  :class:`ReportWriter` (LLM4)
- the step: :func:`synthesize_report` then :func:`publish_report` (report.md + report.html)
- people's acts: :func:`list_interventions` (from the run's events)
- subscriptions: :func:`extract_facts`, :func:`diff_facts`
"""

from __future__ import annotations

from tasks.synthesis.citations import (
    CitationMark,
    CitationRef,
    format_citation,
    format_citations,
    parse_citations,
)
from tasks.synthesis.errors import EvidenceError, SynthesisError
from tasks.synthesis.evidence import EvidenceStore, FolderStore
from tasks.synthesis.extractive import (
    EXTRACTIVE_NAME,
    ExtractiveMarkdown,
    write_extractive,
    write_extractive_markdown,
)
from tasks.synthesis.facts import ChangeSummary, FactSet, diff_facts, extract_facts
from tasks.synthesis.grounding import ground_citation, ground_citations
from tasks.synthesis.interventions import list_interventions
from tasks.synthesis.llm_writer import LLMReportWriter, writer_for
from tasks.synthesis.render import (
    render_report_html,
    render_report_markdown,
    render_report_terminal,
)
from tasks.synthesis.report import (
    ReportFiles,
    ReportWriter,
    WrittenMarkdown,
    build_report,
    publish_report,
    synthesize_report,
)

__all__ = [
    "EXTRACTIVE_NAME",
    "ChangeSummary",
    "CitationMark",
    "CitationRef",
    "EvidenceError",
    "EvidenceStore",
    "ExtractiveMarkdown",
    "FactSet",
    "FolderStore",
    "LLMReportWriter",
    "ReportFiles",
    "ReportWriter",
    "SynthesisError",
    "WrittenMarkdown",
    "build_report",
    "diff_facts",
    "extract_facts",
    "format_citation",
    "format_citations",
    "ground_citation",
    "ground_citations",
    "list_interventions",
    "parse_citations",
    "publish_report",
    "render_report_html",
    "render_report_markdown",
    "render_report_terminal",
    "synthesize_report",
    "write_extractive",
    "write_extractive_markdown",
    "writer_for",
]
