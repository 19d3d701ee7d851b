"""Issue 31 items 3-5 at synthesis, against the vLLM-shaped recording server (a test double).

A finished run's captures are never lost to the synthesizer's model: a
context-length 400, an empty or keyless answer, or a spent run budget each
end in the extractive report, with a banner naming what happened and the fix.
A cut-off retry gets the time its own tokens need; a slow server is counted.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from core.config import BudgetSettings, LLMEndpoint, LLMSettings, Settings, load_settings
from core.models import AppStatus, Query, Report, SubTaskStatus
from droidretriever.testing import (
    Answer,
    DrawnCapture,
    RecordedRequest,
    RecordingOpenAIServer,
    ServedModel,
)
from inference.llm import LocalModelClock, ModelClock
from tasks.synthesis.evidence import FolderStore
from tasks.synthesis.llm_writer import writer_for
from tasks.synthesis.render import render_report_markdown
from tasks.synthesis.report import FAILED_MODEL_NAME, synthesize_report

APPS = (AppStatus(app_label="Meituan", package="com.sankuai.meituan", status=SubTaskStatus.COMPLETED),)
QUERY = Query(text="How much is a Big Mac Meal on Meituan?")
MODEL = "qwen-text"


@pytest.fixture
def vllm() -> Iterator[RecordingOpenAIServer]:
    # A server started with a short context, as `vllm serve --max-model-len 2048` is.
    with RecordingOpenAIServer([ServedModel(MODEL, max_model_len=2048)]) as server:
        yield server


def settings(server: RecordingOpenAIServer, budgets: BudgetSettings | None = None, **endpoint: object) -> Settings:
    values = {"base_url": server.base_url, "model": MODEL, "timeout_s": 5.0, "max_tokens": 512, **endpoint}
    return load_settings(llm=LLMSettings(synthesizer=LLMEndpoint.model_validate(values)),
                         budgets=budgets or BudgetSettings())


def write(settings: Settings, meituan: DrawnCapture, store: FolderStore, clock: ModelClock | None = None) -> Report:
    return synthesize_report(run_id="run-bounds", query=QUERY, captures=[meituan.capture], apps=APPS,
                             store=store, threshold=0.8, writer=writer_for(settings, clock))


def assert_extractive_over_the_capture(report: Report) -> None:
    assert report.synthesizer == FAILED_MODEL_NAME
    assert "> **Extractive summary: the synthesizer's model failed: " in report.markdown
    assert "no language model is configured" not in report.markdown  # a model is configured, and failed
    assert "¥25.5" in report.markdown and report.citations and all(c.grounded for c in report.citations)
    assert [t.role for t in report.fallbacks] == ["synthesizer"]


def test_a_context_length_400_keeps_the_captures_and_says_to_shorten_the_input(
        vllm: RecordingOpenAIServer, meituan: DrawnCapture, store: FolderStore) -> None:
    report = write(settings(vllm, max_tokens=2000), meituan, store)
    assert [r.status for r in vllm.requests] == [400]  # the server refused it for its length
    assert_extractive_over_the_capture(report)
    assert "maximum context length is 2048" in report.markdown
    assert "DROIDRETRIEVER_BUDGETS__SYNTHESIS_INPUT_TOKENS" in report.markdown
    assert "--max-model-len" in report.markdown and "__MODEL against" not in report.markdown
    assert report.tokens.roles["synthesizer"].failed == 1


@pytest.mark.parametrize("answer", [Answer.EMPTY_JSON, "# Big Mac Meal prices", "   \n"])
def test_an_empty_or_keyless_answer_is_a_failed_call(answer: Answer | str, vllm: RecordingOpenAIServer,
                                                     meituan: DrawnCapture, store: FolderStore) -> None:
    vllm.script(MODEL, answer)
    report = write(settings(vllm), meituan, store)
    assert_extractive_over_the_capture(report)
    assert "answer" in report.fallbacks[0].reason
    assert report.tokens.roles["synthesizer"].failed == 1  # counted as a failed request
    assert "the synthesizer's model failed once" in render_report_markdown(report)


def sleeping(seconds: float) -> Callable[[RecordedRequest], Answer]:
    """A server that takes ``seconds`` over each answer (once its scripted queue is empty)."""
    def answer(request: RecordedRequest) -> Answer:
        time.sleep(seconds)
        return Answer.VALID
    return answer


def test_the_cut_off_retry_gets_the_time_its_tokens_need(
        vllm: RecordingOpenAIServer, meituan: DrawnCapture, store: FolderStore) -> None:
    """Item 4: 2 x 100 tokens at a stated 50 tokens/s is 4 s, although timeout_s is 0.5 s and the
    first request's own allowance was 2 s: the retry, slower than both, still brings the report."""
    vllm.script(MODEL, Answer.CUT_OFF)
    vllm.respond_with(MODEL, sleeping(2.5))
    report = write(settings(vllm, max_tokens=100, timeout_s=0.5, tokens_per_s=50), meituan, store)
    assert [r.body["max_tokens"] for r in vllm.requests] == [100, 200]
    assert report.synthesizer == f"llm:{MODEL}", report.markdown
    assert [c.grounded for c in report.citations] == [True]


def test_a_spent_run_budget_skips_the_model_visibly(
        vllm: RecordingOpenAIServer, meituan: DrawnCapture, store: FolderStore) -> None:
    clock = LocalModelClock(spent_s=12.0)  # the other roles spent the run's model time
    report = write(settings(vllm, budgets=BudgetSettings(model_s_per_run=10.0)), meituan, store, clock)
    assert vllm.requests == []
    assert_extractive_over_the_capture(report)
    assert "the run's model time of 10 s is spent (12.0 s used)" in report.markdown


def test_the_synthesizer_is_capped_by_the_run_time_left_and_adds_to_it(
        vllm: RecordingOpenAIServer, meituan: DrawnCapture, store: FolderStore) -> None:
    vllm.answer_by_default(MODEL, Answer.HANG)
    clock = LocalModelClock(spent_s=9.5)
    report = write(settings(vllm, budgets=BudgetSettings(model_s_per_run=10.0), timeout_s=30), meituan, store,
                   clock)
    assert_extractive_over_the_capture(report)
    assert "did not answer within 0.5 s, the model time its sub-task or run had left" in report.markdown
    assert "model_s_per_run" in report.markdown  # the fix names the setting
    assert clock.spent_s() >= 9.9


def test_a_slow_server_is_named_in_the_report_footer(
        vllm: RecordingOpenAIServer, meituan: DrawnCapture, store: FolderStore) -> None:
    vllm.respond_with(MODEL, sleeping(0.5))
    report = write(settings(vllm, slow_call_s=0.1, tokens_per_s=10_000), meituan, store)
    assert report.synthesizer == f"llm:{MODEL}"
    assert report.tokens.roles["synthesizer"].slow == 1
    footer = render_report_markdown(report)
    assert "**Slow server:** 1 of the synthesizer's 1 requests took longer than its slow_call_s" in footer


def test_a_fast_server_is_not_called_slow(
        vllm: RecordingOpenAIServer, meituan: DrawnCapture, store: FolderStore) -> None:
    report = write(settings(vllm), meituan, store)
    assert report.synthesizer == f"llm:{MODEL}" and report.tokens.roles["synthesizer"].slow == 0
    assert "Slow server" not in render_report_markdown(report)
