"""LLM4 as a :class:`~tasks.synthesis.report.ReportWriter`: captures' text in, cited Markdown out.

The prompt and the call are the synthesizer role's (``inference.llm_roles.synthesizer``);
this adapter names each capture with its app label, fits the captures' text to
``budgets.synthesis_input_tokens`` (each keeping its lines most relevant to the
question), redacts it for a ``cloud`` endpoint, and hands the reply to the
synthesis step, which parses, grounds and checks the citations. Errors of the
model propagate as ``inference.errors.LLMError`` (with the requests they cost);
:func:`tasks.synthesis.report.synthesize_report` turns transient ones into an
extractive report that states the failure.
"""

from __future__ import annotations

from collections.abc import Sequence

from droidretriever.config import PerceptionSettings, Settings
from droidretriever.models import AppStatus, Capture, Query, TokenUsage
from inference.llm import LLMClient, Role, client_for
from inference.llm_roles import synthesizer as llm4
from inference.perception import redactor_for
from tasks.synthesis.report import WrittenMarkdown

__all__ = ["LLMReportWriter", "writer_for"]

_INPUT_TOKENS = 6000


class LLMReportWriter:
    """Writes the report with the configured synthesizer model; keeps the tokens it spent."""

    def __init__(self, client: LLMClient, *, input_tokens: int = _INPUT_TOKENS,
                 perception: PerceptionSettings | None = None) -> None:
        self.client = client
        self.input_tokens = input_tokens
        self.redactor = redactor_for(client.endpoint, perception or PerceptionSettings())
        self.usage = TokenUsage()

    def write_report(self, query: Query, captures: Sequence[Capture], apps: Sequence[AppStatus],
                     search_terms: Sequence[str] = ()) -> WrittenMarkdown:
        """One LLM4 call over every capture of the run (fitted to the input budget)."""
        labels = {a.package: a.app_label for a in apps}
        texts = [llm4.capture_text(c, labels.get(c.package, c.package), redactor=self.redactor)
                 for c in captures]
        fitted = llm4.fit_captures(texts, self.input_tokens, query.text, search_terms)
        reply = llm4.synthesize_report(self.client, task=query.text, captures=fitted, redactor=self.redactor)
        self.usage = self.usage + reply.usage
        return WrittenMarkdown(markdown=reply.value, synthesizer=self.client.name, calls=reply.calls)


def writer_for(settings: Settings) -> LLMReportWriter | None:
    """The LLM4 writer when ``llm.synthesizer`` is configured, else None (extractive)."""
    client = client_for(settings, Role.SYNTHESIZER)
    if client is None:
        return None
    return LLMReportWriter(client, input_tokens=settings.budgets.synthesis_input_tokens,
                           perception=settings.perception)
