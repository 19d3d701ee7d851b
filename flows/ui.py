"""Prefect UI niceties: tags that name apps and phones, the report and captures as artifacts.

Everything here is for people operating the system in the Prefect UI; a
failure to write a tag or an artifact is logged and never fails the run.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from uuid import UUID

import httpx
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.client.orchestration import get_client
from prefect.context import FlowRunContext
from prefect.exceptions import PrefectException

from core.models import Capture, Report, TokenLedger
from tasks.synthesis import render_report_markdown

__all__ = ["add_flow_run_tags", "artifact_key", "current_flow_run_id", "model_rows", "publish_artifacts"]

log = logging.getLogger(__name__)


def current_flow_run_id() -> UUID | None:
    """The id of the flow run this code runs in, if any."""
    context = FlowRunContext.get()
    return context.flow_run.id if context and context.flow_run else None


def add_flow_run_tags(flow_run_id: UUID | None, tags: Iterable[str]) -> None:
    """Add ``tags`` (e.g. ``app:Meituan``, ``device:sim-1``) to a flow run, keeping its others."""
    if flow_run_id is None:
        return
    try:
        with get_client(sync_client=True) as client:
            run = client.read_flow_run(flow_run_id)
            merged = list(dict.fromkeys([*run.tags, *tags]))
            if merged != list(run.tags):
                client.update_flow_run(flow_run_id, tags=merged)
    except (httpx.HTTPError, PrefectException) as exc:
        log.warning("could not tag flow run %s: %s", flow_run_id, exc)


def artifact_key(run_id: str, what: str) -> str:
    """A Prefect key (artifacts, run inputs): lower-case letters, digits and dashes only."""
    return re.sub(r"[^a-z0-9-]+", "-", f"{what}-{run_id}".lower()).strip("-")[:100]


def publish_artifacts(report: Report, captures: Sequence[Capture], labels: dict[str, str],
                      html_location: str, subtask_tokens: Mapping[str, TokenLedger] | None = None) -> None:
    """The report as a Markdown artifact, the captures and the model tokens as tables, on the current run."""
    try:
        create_markdown_artifact(
            render_report_markdown(report), key=artifact_key(report.run_id, "report"),
            description=f"Report for “{report.query.text}” ({report.synthesizer}); "
                        f"HTML with highlighted evidence: {html_location}",
        )
        rows = [
            {"capture": c.id, "app": labels.get(c.package, c.package), "sub-task": c.subtask_id,
             "title": c.title, "size": f"{c.width}x{c.height}", "elements": len(c.elements),
             "source": c.source.value, "image": c.image_key,
             "cited": sum(1 for cit in report.citations if cit.capture_id == c.id)}
            for c in captures
        ]
        create_table_artifact(rows, key=artifact_key(report.run_id, "captures"),
                              description=f"{len(rows)} capture(s) of run {report.run_id}")
        models = model_rows(report, subtask_tokens or {})
        if models:
            falls = "; ".join(t.sentence() for t in report.fallbacks) or "no fallback to the rules"
            create_table_artifact(models, key=artifact_key(report.run_id, "models"),
                                  description=f"Model calls and tokens of run {report.run_id}, per role "
                                              f"and sub-task: {falls}")
    except (httpx.HTTPError, PrefectException) as exc:
        log.warning("could not publish artifacts of run %s: %s", report.run_id, exc)


def model_rows(report: Report, subtask_tokens: Mapping[str, TokenLedger]) -> list[dict[str, object]]:
    """One row per role and sub-task, then per role for the whole run: calls, failures, tokens."""
    scopes: list[tuple[str, TokenLedger]] = [*sorted(subtask_tokens.items()), ("whole run", report.tokens)]
    counts = {t.role: t.count for t in report.fallbacks}
    return [
        {"scope": scope, "role": role, "calls": usage.calls, "failed": usage.failed,
         "prompt tokens": usage.prompt, "image tokens": usage.image, "completion tokens": usage.completion,
         "fallbacks": counts.get(role, 0) if scope == "whole run" else ""}
        for scope, ledger in scopes for role, usage in ledger.roles.items()
    ]
