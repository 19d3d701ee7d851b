"""LLM4 as a :class:`~tasks.synthesis.report.ReportWriter`: captures' text in, cited Markdown out.

The prompt and the call are the synthesizer role's (``inference.llm_roles.synthesizer``);
this adapter names each capture with its app label, fits the captures' text to
``budgets.synthesis_input_tokens`` (each keeping its lines most relevant to the
question), redacts it for a ``cloud`` endpoint, and hands the reply to the
synthesis step, which parses, grounds and checks the citations. The call is
capped by the model time the run has left (``budgets.model_s_per_run``, read
from the run's :class:`~inference.llm.ModelClock`); with none left the model
is not called. Errors of the model propagate as ``inference.errors.LLMError``
(with the requests they cost); :func:`tasks.synthesis.report.synthesize_report`
turns each into an extractive report that states the failure and its fix.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.config import PerceptionSettings, Settings
from core.models import AppStatus, Capture, Query, TokenUsage
from inference.errors import LLMError, LLMTimeout
from inference.llm import (
    LLMClient,
    ModelClock,
    Role,
    client_for,
    run_exhausted_reason,
    run_time_left_s,
)
from inference.llm_roles import synthesizer as llm4
from inference.perception import redactor_for
from tasks.synthesis.report import WrittenMarkdown

__all__ = ["LLMReportWriter", "writer_for"]

_INPUT_TOKENS = 6000


class LLMReportWriter:
    """Writes the report with the configured synthesizer model; keeps the tokens it spent."""

    def __init__(self, client: LLMClient, *, input_tokens: int = _INPUT_TOKENS,
                 perception: PerceptionSettings | None = None, clock: ModelClock | None = None,
                 run_budget_s: float | None = None) -> None:
        self.client = client
        self.input_tokens = input_tokens
        self.redactor = redactor_for(client.endpoint, perception or PerceptionSettings())
        self.clock = clock
        self.run_budget_s = run_budget_s
        self.usage = TokenUsage()

    @property
    def name(self) -> str:
        """``llm:<model>``, as the report names its synthesizer."""
        return self.client.name

    def write_report(self, query: Query, captures: Sequence[Capture], apps: Sequence[AppStatus],
                     search_terms: Sequence[str] = ()) -> WrittenMarkdown:
        """One LLM4 call over every capture of the run (fitted to the input budget, in the run's time)."""
        left = run_time_left_s(self.clock, self.run_budget_s)
        if left is not None and left <= 0.0 and self.clock is not None and self.run_budget_s is not None:
            raise LLMTimeout(run_exhausted_reason(self.clock, self.run_budget_s),
                             hint="raise budgets.model_s_per_run, or see why the models were slow "
                                  "(the report's footer counts slow requests)")
        labels = {a.package: a.app_label for a in apps}
        texts = [llm4.capture_text(c, labels.get(c.package, c.package), redactor=self.redactor)
                 for c in captures]
        fitted = llm4.fit_captures(texts, self.input_tokens, query.text, search_terms)
        try:
            reply = llm4.synthesize_report(self.client, task=query.text, captures=fitted,
                                           redactor=self.redactor, deadline_s=left)
        except LLMError as exc:
            self._spend(sum(c.latency_ms for c in exc.calls))
            raise
        self._spend(sum(c.latency_ms for c in reply.calls))
        self.usage = self.usage + reply.usage
        return WrittenMarkdown(markdown=reply.value, synthesizer=self.client.name, calls=reply.calls)

    def _spend(self, latency_ms: float) -> None:
        if self.clock is not None and latency_ms:
            self.clock.add(latency_ms / 1000)


def writer_for(settings: Settings, clock: ModelClock | None = None) -> LLMReportWriter | None:
    """The LLM4 writer when ``llm.synthesizer`` is configured, else None (extractive).

    ``clock``: the run's model time so far (the writer's call fits in what is left of
    ``budgets.model_s_per_run``); None: the call is bounded by its own deadline only.
    """
    client = client_for(settings, Role.SYNTHESIZER)
    if client is None:
        return None
    return LLMReportWriter(client, input_tokens=settings.budgets.synthesis_input_tokens,
                           perception=settings.perception, clock=clock,
                           run_budget_s=settings.budgets.model_s_per_run)
