"""The copilot loop with an evaluator model that misbehaves (the recording server, a test double).

One test per fault of a first run against a real vLLM: answers that are not
JSON, a hanging server, a refused request, the screenshot with vision on, and
one wrong verdict remembered as a route.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator

import pytest

from droidretriever.config import BudgetSettings, LLMEndpoint
from droidretriever.models import PageMode, RunEventKind, SubTaskResult, SubTaskStatus, new_id
from droidretriever.testing import Answer, RecordingOpenAIServer, ServedModel
from inference.llm import LLMClient
from storage import RunEventReader
from tasks.navigate import Copilot, NavigateRequest, navigate_subtask
from tests.tasks.navigate.conftest import MEITUAN, Rig, subtask

BIG_MAC = subtask("bigmac", "Meituan", MEITUAN, "How much is a Big Mac on Meituan?", "Big Mac")


@pytest.fixture
def vllm() -> Iterator[RecordingOpenAIServer]:
    with RecordingOpenAIServer([ServedModel("qwen-vl", vision=True, max_pixels=200_704)]) as server:
        yield server


def with_evaluator(rig: Rig, server: RecordingOpenAIServer, *, budgets: BudgetSettings | None = None,
                   **endpoint: object) -> Copilot:
    settings = {"base_url": server.base_url, "model": "qwen-vl", "timeout_s": 5.0, **endpoint}
    client = LLMClient(LLMEndpoint.model_validate(settings), role="evaluator")
    return dataclasses.replace(rig.copilot, evaluator=client, budgets=budgets or rig.copilot.budgets)


def run(copilot: Copilot, task: object = BIG_MAC) -> tuple[str, SubTaskResult]:
    run_id = new_id("run")
    return run_id, navigate_subtask(copilot, NavigateRequest.model_validate({"run_id": run_id, "subtask": task}))


def test_an_evaluator_answering_non_json_falls_back_visibly(rig: Rig, vllm: RecordingOpenAIServer) -> None:
    """Table row 2: two requests per step, then the rules' verdict: said in events and on each step."""
    vllm.answer_by_default("qwen-vl", Answer.INVALID_JSON)
    run_id, result = run(with_evaluator(rig, vllm))
    assert result.status is SubTaskStatus.COMPLETED, result.reason  # the rules decided, and got there
    judged = [s for s in result.trace.steps if s.calls]
    assert judged and all(len(s.calls) == 2 and s.tokens.failed == 2 for s in judged)
    assert all([f.role for f in s.fallbacks] == ["evaluator"] for s in judged)
    assert "answered twice without a valid EvaluatorAnswer" in judged[0].fallbacks[0].reason
    events = [e for e in RunEventReader(rig.redis).read_after(run_id) if e.kind is RunEventKind.MODEL_FALLBACK]
    assert len(events) == len(judged)
    assert events[-1].message.startswith("the evaluator's model failed (")
    assert events[-1].message.endswith(f"({len(judged)} times in this sub-task)")
    assert result.trace.ledger.roles["evaluator"].calls == len(vllm.requests) == 2 * len(judged)


def test_a_hanging_evaluator_is_bounded_per_call_and_per_subtask(rig: Rig, vllm: RecordingOpenAIServer) -> None:
    """Table row 12: a hang costs one deadline per call, and the sub-task's model time is capped."""
    vllm.answer_by_default("qwen-vl", Answer.HANG)
    budgets = rig.copilot.budgets.model_copy(update={"model_s_per_subtask": 1.2})
    started = time.perf_counter()
    _, result = run(with_evaluator(rig, vllm, budgets=budgets, timeout_s=0.5))
    elapsed = time.perf_counter() - started
    assert result.status is SubTaskStatus.COMPLETED, result.reason
    calls = [c for s in result.trace.steps for c in s.calls]
    assert [c.outcome for c in calls] == ["timeout"] * len(calls) and len(calls) == 3  # 0.5 + 0.5 + 0.2 s
    assert sum(c.latency_ms for c in calls) / 1000 < 1.2 + 0.3
    spent = [f for s in result.trace.steps for f in s.fallbacks if "model time of 1.2 s is spent" in f.reason]
    assert spent, [f.reason for s in result.trace.steps for f in s.fallbacks]
    assert elapsed < 15  # the old client: ~2 x timeout per step, for every step


def test_an_evaluator_refusing_requests_is_a_configuration_error(rig: Rig, vllm: RecordingOpenAIServer) -> None:
    """Table row 1: a 4xx is not a fallback: the sub-task stops with the error and its fix."""
    vllm.answer_by_default("qwen-vl", Answer.CLIENT_ERROR)
    run_id, result = run(with_evaluator(rig, vllm))
    assert result.status is SubTaskStatus.FAILED and result.attempt == 1
    assert "refused the request with HTTP 400" in result.config_error and result.config_hint
    assert len(vllm.requests) == 1 and not result.trace.fallbacks
    assert result.trace.steps[-1].calls[0].outcome == "refused"  # the refused request is counted too
    kinds = [e.kind for e in RunEventReader(rig.redis).read_after(run_id)]
    assert RunEventKind.ERROR in kinds and RunEventKind.MODEL_FALLBACK not in kinds


def test_the_evaluator_sees_the_screenshot_when_vision_is_on(rig: Rig, vllm: RecordingOpenAIServer) -> None:
    """Table row 10 and item 9: one downscaled image per evaluator call, first, its tokens counted."""
    run_id, result = run(with_evaluator(rig, vllm, vision=True, max_pixels=200_704))
    assert result.status is SubTaskStatus.COMPLETED, result.reason
    assert vllm.problems == [] and vllm.requests
    for request in vllm.requests:
        assert len(request.images) == 1 and request.image_tokens == 230
        assert request.body["messages"][1]["content"][0]["type"] == "image_url"
    images = sum(c.usage.image for s in result.trace.steps for c in s.calls)
    assert images == 230 * len(vllm.requests)
    # The model never said "complete" (the double's schema-built answer): the page reached by
    # opening a result was captured, but its route is not remembered unconfirmed.
    assert rig.copilot.memory is not None and not rig.copilot.memory.load(MEITUAN)
    logs = [e.message for e in RunEventReader(rig.redis).read_after(run_id) if e.kind is RunEventKind.LOG]
    assert any(m.startswith("route not remembered") for m in logs)


def test_a_replayed_route_the_model_judges_wrong_is_demoted(rig: Rig, vllm: RecordingOpenAIServer) -> None:
    """Table row 6: a route that ends on the results list (one wrong verdict) is not replayed for ever."""
    memory = rig.copilot.memory
    assert memory is not None
    # Learn the way to the results list (list_view), then file it as a focused route: what a
    # wrong "complete" on the results list would have saved.
    _, listed = run(rig.copilot, BIG_MAC.model_copy(update={"page_mode": PageMode.LIST_VIEW}))
    assert listed.status is SubTaskStatus.COMPLETED, listed.reason
    (wrong,) = memory.load(MEITUAN)
    rig.store.delete(f"memory/routes/{MEITUAN}.json")
    memory.record(MEITUAN, BIG_MAC.goal, wrong.steps, search_term="Big Mac", page_mode=PageMode.FOCUSED)
    assert memory.recall(MEITUAN, BIG_MAC.goal, search_term="Big Mac", page_mode=PageMode.FOCUSED)
    rig.sim.control.reset("boot")
    run_id, result = run(with_evaluator(rig, vllm))  # the model: "not complete" on every page
    assert result.status is SubTaskStatus.COMPLETED, result.reason
    assert any(s.policy == "route_memory" for s in result.trace.steps)
    assert result.captures[0].title.startswith("麦当劳")  # went on past the list to the store
    logs = [e.message for e in RunEventReader(rig.redis).read_after(run_id) if e.kind is RunEventKind.LOG]
    assert any("route demoted" in m for m in logs), logs
    assert not memory.recall(MEITUAN, BIG_MAC.goal, search_term="Big Mac", page_mode=PageMode.FOCUSED)
