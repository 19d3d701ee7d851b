"""The copilot loop with an evaluator model that misbehaves (the recording server, a test double).

One test per fault of a first run against a real vLLM: answers that are not
JSON, a hanging server, a refused request, the screenshot with vision on, and
one wrong verdict remembered as a route.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Iterator

import pytest

from droidretriever.config import BudgetSettings, LLMEndpoint
from droidretriever.models import PageMode, RunEventKind, SubTaskResult, SubTaskStatus, new_id
from droidretriever.testing import Answer, RecordedRequest, RecordingOpenAIServer, ServedModel
from inference.llm import LLMClient
from storage import RunEventReader
from tasks.navigate import Copilot, NavigateRequest, navigate_subtask
from tests.tasks.navigate.conftest import MEITUAN, SETTINGS, Rig, subtask

BIG_MAC = subtask("bigmac", "Meituan", MEITUAN, "How much is a Big Mac on Meituan?", "Big Mac")
PERMISSIONS = subtask("permissions", "Settings", SETTINGS, "Which permissions has Meituan been granted?",
                      "Meituan", PageMode.LIST_VIEW)


def judge(complete_on: str) -> Callable[[RecordedRequest], str]:
    """An evaluator that says "complete" where the screen it is shown holds ``complete_on``."""
    def answer(request: RecordedRequest) -> str:
        screen = request.text.split("<screen_data>", 1)[-1]
        done = complete_on in screen
        return json.dumps({"completion_reason": "the page answers the task" if done else "not yet",
                           "complete": done, "page_type": "details" if done else "other",
                           "risk_reason": "an ordinary page", "risk": False, "risk_category": None})
    return answer


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
    assert all(e.fallback is not None and e.fallback.role == "evaluator" for e in events)  # typed
    times = f"{len(judged)} time" + ("s" if len(judged) != 1 else "")
    assert events[-1].message.endswith(f"({times} in this sub-task)")
    assert result.trace.ledger.roles["evaluator"].calls == len(vllm.requests) == 2 * len(judged)
    # The target was the rules' alone (the model failed there): its route is not remembered.
    assert rig.copilot.memory is not None and not rig.copilot.memory.load(MEITUAN)
    logs = [e.message for e in RunEventReader(rig.redis).read_after(run_id) if e.kind is RunEventKind.LOG]
    assert any(m.startswith("route not remembered") for m in logs)


def test_a_hanging_evaluator_is_bounded_per_call_and_per_subtask(rig: Rig, vllm: RecordingOpenAIServer) -> None:
    """Table row 12: a hang costs one deadline, and past the sub-task's model time no call is made.

    The evaluator is asked on every page here (``every_page``), so later steps would call it.
    """
    vllm.answer_by_default("qwen-vl", Answer.HANG)
    budgets = rig.copilot.budgets.model_copy(update={"model_s_per_subtask": 0.3})
    started = time.perf_counter()
    copilot = dataclasses.replace(with_evaluator(rig, vllm, budgets=budgets, timeout_s=5.0),
                                  evaluator_pages="every_page")
    _, result = run(copilot, PERMISSIONS)
    elapsed = time.perf_counter() - started
    assert result.status is SubTaskStatus.COMPLETED, result.reason  # the rules decided, visibly
    calls = [c for s in result.trace.steps for c in s.calls]
    assert [c.outcome for c in calls] == ["timeout"] and 0.25 < calls[0].latency_ms / 1000 < 0.6
    reasons = [f.reason for s in result.trace.steps for f in s.fallbacks]
    assert "did not answer within 0.3 s" in reasons[0]  # the budget, not timeout_s, bounded the call
    assert reasons[1:] and all("model time of 0.3 s is spent" in r for r in reasons[1:])
    assert len(vllm.requests) == 1 and elapsed < 15  # the old client: 2 x 5 s per evaluated step


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
    vllm.respond_with("qwen-vl", judge("巨无霸"))
    _, result = run(with_evaluator(rig, vllm, vision=True, max_pixels=200_704))
    assert result.status is SubTaskStatus.COMPLETED, result.reason
    assert vllm.problems == [] and vllm.requests
    for request in vllm.requests:
        assert len(request.images) == 1 and request.image_tokens == 230
        assert request.body["messages"][1]["content"][0]["type"] == "image_url"
    images = sum(c.usage.image for s in result.trace.steps for c in s.calls)
    assert images == 230 * len(vllm.requests)
    # The model said complete on the store page and the rules agree (a result opened from the
    # list): the route is remembered. On the search and results pages the model was not asked.
    assert rig.copilot.memory is not None and len(rig.copilot.memory.load(MEITUAN)) == 1
    assert {s.evaluation.evaluator for s in result.trace.steps if s.evaluation} == {"rules", "llm:qwen-vl"}


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
    vllm.respond_with("qwen-vl", judge("巨无霸"))
    run_id, result = run(with_evaluator(rig, vllm))
    assert result.status is SubTaskStatus.COMPLETED, result.reason
    assert any(s.policy == "route_memory" for s in result.trace.steps)
    assert result.captures[0].title.startswith("麦当劳")  # went on past the list to the store
    logs = [e.message for e in RunEventReader(rig.redis).read_after(run_id) if e.kind is RunEventKind.LOG]
    assert any("route demoted" in m for m in logs), logs
    (route,) = [r for r in memory.load(MEITUAN) if r.steps == wrong.steps]
    assert route.failures == route.successes == 1
    # Recalled now is the route to the store page the model confirmed, not the wrong one.
    (recalled,) = memory.recall(MEITUAN, BIG_MAC.goal, search_term="Big Mac", page_mode=PageMode.FOCUSED, k=3)
    assert recalled.route.steps != wrong.steps
