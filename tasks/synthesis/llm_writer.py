"""LLM4 as a :class:`~tasks.synthesis.report.ReportWriter`: captures' text in, cited Markdown out.

The prompt and the call are the synthesizer role's (``inference.llm_roles.synthesizer``);
this adapter only names each capture with its app label and hands the reply
to the synthesis step, which parses and grounds the citations. Errors of the
model (unreachable, timeout, bad output) propagate as ``inference.errors.LLMError``;
:func:`tasks.synthesis.report.synthesize_report` turns them into an extractive
report that states the failure.
"""

from __future__ import annotations

from collections.abc import Sequence

from droidretriever.config import Settings
from droidretriever.models import AppStatus, Capture, Query, TokenUsage
from inference.llm import LLMClient, Role, client_for
from inference.llm_roles import synthesizer as llm4
from tasks.synthesis.report import WrittenMarkdown

__all__ = ["LLMReportWriter", "writer_for"]


class LLMReportWriter:
    """Writes the report with the configured synthesizer model; keeps the tokens it spent."""

    def __init__(self, client: LLMClient) -> None:
        self.client = client
        self.usage = TokenUsage()

    def write_report(self, query: Query, captures: Sequence[Capture],
                     apps: Sequence[AppStatus]) -> WrittenMarkdown:
        """One LLM4 call over every capture of the run."""
        labels = {a.package: a.app_label for a in apps}
        texts = [llm4.capture_text(c, labels.get(c.package, c.package)) for c in captures]
        reply = llm4.synthesize_report(self.client, task=query.text, captures=texts)
        self.usage = self.usage + reply.usage
        return WrittenMarkdown(markdown=reply.value, synthesizer=self.client.name)


def writer_for(settings: Settings) -> LLMReportWriter | None:
    """The LLM4 writer when ``llm.synthesizer`` is configured, else None (extractive)."""
    client = client_for(settings, Role.SYNTHESIZER)
    return LLMReportWriter(client) if client is not None else None
