"""The LLM navigator drives a sub-task end to end (scripted OpenAI stub), and route memory saves its calls.

The stub (a real HTTP server, a test double) answers what a navigator model
would answer on each screen: ``tasks.navigate.paths.navigator_answers``
derives the replies from the task's scripted path, as element numbers of the
screen description the model is shown. Skills are off, so every move is the
model's.
"""

from __future__ import annotations

from core.config import BudgetSettings, LLMEndpoint
from core.models import SubTaskStatus, new_id
from device_farm.adb_driver import AdbDriver
from device_farm.sim import SimServer
from droidretriever.testing import OpenAIStub
from inference.llm import LLMClient
from inference.memory import RouteMemory
from inference.perception import Perceiver
from storage import FakeObjectStore
from suites import Study, SuiteTask, load_suite
from tasks.navigate import (
    Copilot,
    NavigateRequest,
    ObjectStoreBlobs,
    navigate_subtask,
    navigator_answers,
    play_scripted_path,
)
from tests.tasks.navigate.test_study2_suite import app_subtask

GUIDELINES = next(t for t in load_suite() if t.study is Study.STUDY2 and t.id == "s2_single_02_bilibili_guidelines")


def test_the_navigator_reaches_the_guidelines_and_a_second_run_needs_no_model(
    catalog_phone: tuple[SimServer, AdbDriver], perceiver: Perceiver
) -> None:
    server, driver = catalog_phone
    task: SuiteTask = GUIDELINES
    subtask = app_subtask(task, "Bilibili")
    server.control.reset("boot")
    moves = play_scripted_path(driver, perceiver, subtask.package, task.paths["Bilibili"])
    with OpenAIStub() as stub:
        endpoint = LLMEndpoint(base_url=stub.base_url, model="navigator-stub")
        # Opening the app needs no model, and the rules know the target by its heading (社区公约),
        # so neither the first answer (open_app) nor the last ("finish") is asked for.
        stub.enqueue(*navigator_answers(moves, subtask, endpoint, perceiver.settings)[1:-1])
        copilot = Copilot(
            driver=driver, perceiver=perceiver, store=FakeObjectStore(), budgets=BudgetSettings(),
            memory=RouteMemory(ObjectStoreBlobs(FakeObjectStore())), skills=False, explore=False,
            navigator=LLMClient(endpoint, role="navigator"),
        )
        server.control.reset("boot")
        first = navigate_subtask(copilot, NavigateRequest(run_id=new_id("run"), subtask=subtask))
        first_calls = len(stub.requests)
        server.control.reset("boot")
        second = navigate_subtask(copilot, NavigateRequest(run_id=new_id("run"), subtask=subtask))
        second_calls = len(stub.requests) - first_calls
    assert first.status is SubTaskStatus.COMPLETED, first.reason
    assert {s.policy for s in first.trace.steps if s.action is not None} == {
        "skills", "llm:navigator-stub", "evaluator"}  # skills: the app opened without a model call
    assert first.trace.steps[-1].policy == "evaluator"
    assert first_calls == len(moves) and stub.pending == 0
    assert sum(s.tokens.prompt for s in first.trace.steps) == 100 * first_calls  # the stub counts 100 each
    assert sum(s.tokens.calls for s in first.trace.steps) == first_calls
    texts = " ".join(e.label for c in first.captures for e in c.elements)
    assert all(point in texts for point in task.scoring_points)
    # The same query again: the remembered route replays with no model call at all.
    assert second.status is SubTaskStatus.COMPLETED, second.reason
    assert second_calls == 0
    assert {s.policy for s in second.trace.steps if s.action is not None} <= {"route_memory", "evaluator"}


def test_tips_from_an_earlier_delivery_reach_the_first_navigator_prompt(
    catalog_phone: tuple[SimServer, AdbDriver], perceiver: Perceiver
) -> None:
    """Orchestration retries carry reflections (NavigateRequest.tips) into the next delivery."""
    server, driver = catalog_phone
    subtask = app_subtask(GUIDELINES, "Bilibili")
    server.control.reset("boot")
    moves = play_scripted_path(driver, perceiver, subtask.package, GUIDELINES.paths["Bilibili"])
    tip = "try 1 failed: the 社区公约 entry is under 我的, not on the home feed"
    with OpenAIStub() as stub:
        endpoint = LLMEndpoint(base_url=stub.base_url, model="navigator-stub")
        stub.enqueue(*navigator_answers(moves, subtask, endpoint, perceiver.settings)[1:-1])
        copilot = Copilot(
            driver=driver, perceiver=perceiver, store=FakeObjectStore(), budgets=BudgetSettings(),
            skills=False, explore=False, navigator=LLMClient(endpoint, role="navigator"),
        )
        server.control.reset("boot")
        result = navigate_subtask(
            copilot, NavigateRequest(run_id=new_id("run"), subtask=subtask, delivery=2, tips=(tip,))
        )
        first_prompt = str(stub.requests[0]["messages"])
    assert result.status is SubTaskStatus.COMPLETED, result.reason
    assert "Tips from the previous try" in first_prompt
    assert "社区公约 entry is under 我的" in first_prompt
