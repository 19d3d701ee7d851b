"""Issue 31 item 4 in the copilot loop: the run's model time, the sub-task's request count, slow servers.

Against the vLLM-shaped recording server (a test double); budgets are small
configured figures and the assertions are on outcomes (which requests went
out, which budget the fallbacks name, which events were published), not on
how long anything took.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Iterator

import pytest

from core.config import LLMEndpoint
from core.models import PageMode, RunEventKind, SubTaskResult, SubTaskStatus, new_id
from droidretriever.testing import Answer, RecordedRequest, RecordingOpenAIServer, ServedModel
from inference.llm import LLMClient
from storage import RunEventReader
from tasks.model_clock import RedisModelClock
from tasks.navigate import Copilot, NavigateRequest, navigate_subtask
from tests.tasks.navigate.conftest import SETTINGS, Rig, subtask

PERMISSIONS = subtask("permissions", "Settings", SETTINGS, "Which permissions has Meituan been granted?",
                      "Meituan", PageMode.LIST_VIEW)


@pytest.fixture
def vllm() -> Iterator[RecordingOpenAIServer]:
    with RecordingOpenAIServer([ServedModel("qwen-text")]) as server:
        yield server


def evaluator_copilot(rig: Rig, server: RecordingOpenAIServer, run_id: str, *, budgets: dict[str, object],
                      **endpoint: object) -> Copilot:
    """The rig's copilot with an evaluator model asked on every page, the run's clock in Redis."""
    settings = {"base_url": server.base_url, "model": "qwen-text", "timeout_s": 5.0, **endpoint}
    client = LLMClient(LLMEndpoint.model_validate(settings), role="evaluator")
    return dataclasses.replace(rig.copilot, evaluator=client, evaluator_pages="every_page",
                               budgets=rig.copilot.budgets.model_copy(update=budgets),
                               model_clock=RedisModelClock(rig.redis, run_id))


def run(copilot: Copilot, run_id: str) -> SubTaskResult:
    return navigate_subtask(copilot, NavigateRequest(run_id=run_id, subtask=PERMISSIONS))


def never_complete(delay_s: float = 0.0) -> Callable[[RecordedRequest], str]:
    """An evaluator that disagrees with the rules on every page: never the target (after ``delay_s``)."""
    def answer(request: RecordedRequest) -> str:
        time.sleep(delay_s)
        return json.dumps({"completion_reason": "this is not what was asked for", "complete": False,
                           "page_type": "other", "risk_reason": "an ordinary page", "risk": False,
                           "risk_category": None})
    return answer


def fallback_reasons(result: SubTaskResult) -> list[str]:
    return [f.reason for s in result.trace.steps for f in s.fallbacks]


def test_a_hung_server_is_bounded_by_the_runs_model_time(rig: Rig, vllm: RecordingOpenAIServer) -> None:
    """The sub-task's own budget (300 s) would allow a minute per call; the run's 0.3 s ends it."""
    vllm.answer_by_default("qwen-text", Answer.HANG)
    run_id = new_id("run")
    RedisModelClock(rig.redis, run_id).add(0.1)  # the decomposer's time, spent before the sub-task
    copilot = evaluator_copilot(rig, vllm, run_id, budgets={"model_s_per_run": 0.4})
    result = run(copilot, run_id)
    assert result.status is SubTaskStatus.COMPLETED, result.reason  # the rules decided, visibly
    calls = [c for s in result.trace.steps for c in s.calls]
    assert [c.outcome for c in calls] == ["timeout"] and len(vllm.requests) == 1
    reasons = fallback_reasons(result)
    assert "did not answer within 0.3 s, the model time its sub-task or run had left" in reasons[0]
    assert reasons[1:] and all("the run's model time of 0.4 s is spent" in r for r in reasons[1:])
    assert RedisModelClock(rig.redis, run_id).spent_s() == pytest.approx(0.1 + calls[0].latency_ms / 1000)


def test_an_endless_disagreement_is_stopped_by_the_call_budget(rig: Rig, vllm: RecordingOpenAIServer) -> None:
    vllm.respond_with("qwen-text", never_complete())
    run_id = new_id("run")
    result = run(evaluator_copilot(rig, vllm, run_id, budgets={"model_calls_per_subtask": 3}), run_id)
    assert len(vllm.requests) == 3 and result.trace.ledger.roles["evaluator"].calls == 3
    reasons = fallback_reasons(result)
    assert reasons and all("the sub-task's 3 model requests are spent" in r for r in reasons)
    events = [e for e in RunEventReader(rig.redis).read_after(run_id) if e.kind is RunEventKind.MODEL_FALLBACK]
    assert events and "model_calls_per_subtask" in events[0].message
    assert result.status is SubTaskStatus.COMPLETED, result.reason  # the rules' verdict stood after that


def test_a_slow_server_is_warned_about(rig: Rig, vllm: RecordingOpenAIServer) -> None:
    vllm.respond_with("qwen-text", never_complete(delay_s=0.3))
    run_id = new_id("run")
    copilot = evaluator_copilot(rig, vllm, run_id, budgets={"model_calls_per_subtask": 2},
                                slow_call_s=0.05, tokens_per_s=10_000)
    result = run(copilot, run_id)
    slow_calls = [c for s in result.trace.steps for c in s.calls if c.usage.slow]
    assert len(slow_calls) == 2 and result.trace.ledger.roles["evaluator"].slow == 2
    logs = [e.message for e in RunEventReader(rig.redis).read_after(run_id) if e.kind is RunEventKind.LOG]
    warned = [m for m in logs if "slow model server" in m]
    assert warned and "the evaluator's model took longer than its slow_call_s" in warned[0]


def test_a_server_at_its_stated_speed_is_not_called_slow(rig: Rig, vllm: RecordingOpenAIServer) -> None:
    vllm.respond_with("qwen-text", never_complete())
    run_id = new_id("run")
    result = run(evaluator_copilot(rig, vllm, run_id, budgets={"model_calls_per_subtask": 2}), run_id)
    assert result.trace.ledger.roles["evaluator"].calls == 2 and result.trace.ledger.roles["evaluator"].slow == 0
    logs = [e.message for e in RunEventReader(rig.redis).read_after(run_id) if e.kind is RunEventKind.LOG]
    assert not any("slow model server" in m for m in logs)
