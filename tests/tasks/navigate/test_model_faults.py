"""The copilot loop with an evaluator model that misbehaves (the recording server, a test double).

One test per fault of a first run against a real vLLM: answers that are not
JSON, a hanging server, a refused request, the screenshot with vision on, and
one wrong verdict remembered as a route (issue 31: a "complete" on the wrong item
is not replayed, a confirmed one is, one "not complete" forgets every copy).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Iterator

import pytest

from core.config import BudgetSettings, LLMEndpoint
from core.models import PageMode, RunEventKind, SubTaskResult, SubTaskStatus, new_id
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
    # The target was the rules' alone (the model failed there): its route is kept unconfirmed,
    # never replayed.
    memory = rig.copilot.memory
    assert memory is not None and [r.confirmed for r in memory.load(MEITUAN)] == [False]
    assert memory.recall(MEITUAN, BIG_MAC.goal, search_term="Big Mac") == ()
    logs = [e.message for e in RunEventReader(rig.redis).read_after(run_id) if e.kind is RunEventKind.LOG]
    assert any(m.startswith("route kept unconfirmed") for m in logs)


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
    # The model said complete on the store page, and the page passes the answer checks (it
    # shows the term): the route is remembered. On the search and results pages the model was
    # not asked.
    assert rig.copilot.memory is not None and [r.confirmed for r in rig.copilot.memory.load(MEITUAN)] == [True]
    assert {s.evaluation.evaluator for s in result.trace.steps if s.evaluation} == {"rules", "llm:qwen-vl"}


def always_complete(request: RecordedRequest) -> str:
    """A small model's evaluator: "complete" on every page it is shown."""
    return json.dumps({"completion_reason": "the page answers the task", "complete": True, "page_type": "details",
                       "risk_reason": "an ordinary page", "risk": False, "risk_category": None})


# The plan's search term is poor (it finds every burger shop); the goal asks for one dish.
WHOPPER_SHOP = subtask("dish", "Meituan", MEITUAN, "How much is a 巨无霸 on Meituan?", "汉堡")


def test_a_complete_on_the_wrong_item_is_not_replayed(rig: Rig, vllm: RecordingOpenAIServer) -> None:
    """Issue 31: the evaluator says complete on the first burger shop, which sells no 巨无霸. The
    route is kept unconfirmed (neither the rules nor the answer checks agree), and the next run
    does not replay it as its answer. Before, it did: both runs answered with that shop."""
    vllm.respond_with("qwen-vl", always_complete)
    copilot = with_evaluator(rig, vllm)
    run_id, first = run(copilot, WHOPPER_SHOP)
    assert first.status is SubTaskStatus.COMPLETED, first.reason
    assert first.captures[0].title.startswith("汉堡王")  # the model's wrong item
    memory = rig.copilot.memory
    assert memory is not None and [r.confirmed for r in memory.load(MEITUAN)] == [False]
    logs = [e.message for e in RunEventReader(rig.redis).read_after(run_id) if e.kind is RunEventKind.LOG]
    assert any(m.startswith("route kept unconfirmed") for m in logs), logs
    rig.sim.control.reset("boot")
    _, second = run(copilot, WHOPPER_SHOP.model_copy(update={"id": "dish-again"}))
    assert "route_memory" not in [s.policy for s in second.trace.steps]


def test_a_confirmed_complete_is_replayed(rig: Rig, vllm: RecordingOpenAIServer) -> None:
    """The same evaluator, a search term the store page shows: confirmed, and replayed next time."""
    vllm.respond_with("qwen-vl", always_complete)
    copilot = with_evaluator(rig, vllm)
    task = WHOPPER_SHOP.model_copy(update={"search_term": "巨无霸"})
    _, first = run(copilot, task)
    assert first.status is SubTaskStatus.COMPLETED and first.captures[0].title.startswith("麦当劳"), first.reason
    assert rig.copilot.memory is not None and [r.confirmed for r in rig.copilot.memory.load(MEITUAN)] == [True]
    rig.sim.control.reset("boot")
    _, second = run(copilot, task.model_copy(update={"id": "dish-again"}))
    assert second.status is SubTaskStatus.COMPLETED and second.captures[0].title.startswith("麦当劳")
    assert "route_memory" in [s.policy for s in second.trace.steps]


def test_one_not_complete_on_a_replay_forgets_every_copy(rig: Rig, vllm: RecordingOpenAIServer) -> None:
    """Issue 31: the wrong route to the burger shop, remembered three times as an earlier version
    did (confirmed on the model's word, for three wordings of the question, one twice). One replay
    the evaluator judges not complete forgets all of them; before, demotion counted a failure on
    one copy and the others were still recalled."""
    memory = rig.copilot.memory
    assert memory is not None
    vllm.respond_with("qwen-vl", always_complete)
    _, learnt = run(with_evaluator(rig, vllm), WHOPPER_SHOP)
    assert learnt.captures[0].title.startswith("汉堡王"), learnt.reason
    (wrong,) = memory.load(MEITUAN)
    rig.store.delete(f"memory/routes/{MEITUAN}.json")
    wordings = (WHOPPER_SHOP.goal, WHOPPER_SHOP.goal, "What does a 巨无霸 cost on Meituan?", "Meituan: the price of a 巨无霸?")
    for goal in wordings:
        memory.record(MEITUAN, goal, wrong.steps, search_term="汉堡", confirmed=True)
    assert len(memory.load(MEITUAN)) == 3
    rig.sim.control.reset("boot")
    vllm.respond_with("qwen-vl", judge("巨无霸"))
    run_id, result = run(with_evaluator(rig, vllm), WHOPPER_SHOP.model_copy(update={"id": "dish-judged"}))
    logs = [e.message for e in RunEventReader(rig.redis).read_after(run_id) if e.kind is RunEventKind.LOG]
    assert any("route and its 2 copies forgotten" in m for m in logs), logs
    assert not [r for r in memory.load(MEITUAN) if r.steps == wrong.steps]
    assert not [m for goal in wordings for m in memory.recall(MEITUAN, goal, search_term="汉堡", k=3)
                if m.route.steps == wrong.steps]
    assert result.status is SubTaskStatus.COMPLETED, result.reason
    assert result.captures[0].title.startswith("麦当劳")  # went on to a shop that sells it
