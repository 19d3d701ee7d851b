"""Where the evaluator's model is asked: where its verdict can change something, and a screen once.

The navigator and the evaluator are answered by the recording server (a test
double): the navigator as the suites' scripted path (``ScriptedNavigator``) or
as a short script of its own, the evaluator as a judge that knows the path
(``ScriptedNavigator.judge``) or as a judge that sees a risk. Skills and the
explorer are off, so every move is the navigator model's.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator

import pytest

from core.config import BudgetSettings, LLMEndpoint
from core.models import Finish, SubTask, SubTaskResult, SubTaskStatus, new_id
from device_farm.adb_driver import AdbDriver
from device_farm.sim import SimServer
from droidretriever.testing import Answer, RecordedRequest, RecordingOpenAIServer, ServedModel
from inference.llm import LLMClient
from inference.memory import RouteMemory
from inference.perception import Perceiver
from inference.policies import is_dialog_open
from storage import FakeObjectStore
from suites import Study, SuiteTask, load_suite
from tasks.navigate import (
    Copilot,
    NavigateRequest,
    ObjectStoreBlobs,
    ScriptedNavigator,
    navigate_subtask,
    play_scripted_path,
    to_observation,
)
from tests.tasks.navigate.test_study2_suite import app_subtask

SUITE = {t.id: t for t in load_suite() if t.study is Study.STUDY2}
PLAYLISTS: SuiteTask = SUITE["s2_multi_08_liked_playlists"]  # Spotify: the navigator finishes (list_view)
REDNOTE: SuiteTask = SUITE["s2_single_06_rednote_marshall_middleton"]  # a pop-up over the app at start


@pytest.fixture()
def vllm() -> Iterator[RecordingOpenAIServer]:
    with RecordingOpenAIServer([ServedModel("nav", vision=True, max_pixels=200_704),
                                ServedModel("eval", vision=True, max_pixels=200_704)]) as server:
        yield server


def copilot_for(server: RecordingOpenAIServer, driver: AdbDriver, perceiver: Perceiver,
                memory: RouteMemory | None = None) -> Copilot:
    def endpoint(model: str) -> LLMEndpoint:
        return LLMEndpoint(base_url=server.base_url, model=model, vision=True, timeout_s=10.0)

    return Copilot(driver=driver, perceiver=perceiver, store=FakeObjectStore(), budgets=BudgetSettings(),
                   memory=memory, skills=False, explore=False,
                   navigator=LLMClient(endpoint("nav"), role="navigator"),
                   evaluator=LLMClient(endpoint("eval"), role="evaluator"))


def scripted(server: SimServer, driver: AdbDriver, perceiver: Perceiver, task: SuiteTask,
             app: str) -> tuple[SubTask, ScriptedNavigator]:
    subtask = app_subtask(task, app)
    server.control.reset("boot")
    moves = play_scripted_path(driver, perceiver, subtask.package, task.paths[app])
    endpoint = LLMEndpoint(base_url="http://127.0.0.1:9/v1", model="nav", vision=True)

    def dialog_open() -> bool:
        return is_dialog_open(perceiver.perceive(to_observation(driver.observe(), 0), use_ocr=False).screen)

    return subtask, ScriptedNavigator(moves, subtask, endpoint, perceiver.settings, dialog_open=dialog_open)


def run(copilot: Copilot, server: SimServer, subtask: SubTask) -> SubTaskResult:
    server.control.reset("boot")
    return navigate_subtask(copilot, NavigateRequest(run_id=new_id("run"), subtask=subtask))


def asked(server: RecordingOpenAIServer, model: str) -> list[RecordedRequest]:
    return [r for r in server.requests if r.model == model]


def test_the_navigators_finish_is_confirmed_and_pages_passed_through_are_not_judged(
        catalog_phone: tuple[SimServer, AdbDriver], perceiver: Perceiver, vllm: RecordingOpenAIServer) -> None:
    server, driver = catalog_phone
    subtask, navigator = scripted(server, driver, perceiver, PLAYLISTS, "Spotify")
    vllm.respond_with("nav", lambda r: navigator.answer(r.text))
    vllm.respond_with("eval", lambda r: navigator.judge(r.text))
    memory = RouteMemory(ObjectStoreBlobs(FakeObjectStore()))
    result = run(copilot_for(vllm, driver, perceiver, memory), server, subtask)
    assert result.status is SubTaskStatus.COMPLETED, result.reason
    # One evaluator request: the page the navigator finished on, confirmed there.
    (judged,) = asked(vllm, "eval")
    last = result.trace.steps[-1]
    assert isinstance(last.action, Finish) and last.policy == "llm:nav"
    assert last.evaluation is not None and last.evaluation.complete and last.evaluation.evaluator == "llm:eval"
    assert judged.image_tokens == 230 and judged.text.count("<screen_data>") == 1
    assert all(s.evaluation is None or s.evaluation.evaluator == "rules" for s in result.trace.steps[:-1])
    # Confirmed by the model and the rules: the route is remembered.
    assert len(memory.load(subtask.package)) == 1
    # Issue 14's loop asked on every page where its "complete" could count: more requests, same end.
    subtask, navigator = scripted(server, driver, perceiver, PLAYLISTS, "Spotify")
    before = len(vllm.requests)
    every = dataclasses.replace(copilot_for(vllm, driver, perceiver), evaluator_pages="every_page")
    again = run(every, server, subtask)
    assert again.status is SubTaskStatus.COMPLETED, again.reason
    assert len([r for r in vllm.requests[before:] if r.model == "eval"]) > 1
    assert vllm.problems == []


def tap_on(label: str) -> Callable[[RecordedRequest], str]:
    """A navigator that taps the element whose description line holds ``label``."""
    def answer(request: RecordedRequest) -> str:
        screen = request.text.split("<screen_data>", 1)[-1]
        number = next(line.split("]", 1)[0].lstrip("[") for line in screen.splitlines() if label in line)
        return json.dumps({"reason": f"tap {label}", "action": "tap", "element_id": number},
                          ensure_ascii=False)
    return answer


def test_a_risk_the_rules_miss_stops_the_navigators_tap_on_a_pop_up(
        catalog_phone: tuple[SimServer, AdbDriver], perceiver: Perceiver, vllm: RecordingOpenAIServer) -> None:
    """The model sees a risk in the pop-up's offer before the navigator's tap is carried out."""
    server, driver = catalog_phone
    subtask = app_subtask(REDNOTE, "Rednote")
    vllm.respond_with("nav", tap_on("去领取"))
    vllm.script("eval", json.dumps({
        "completion_reason": "a pop-up", "complete": False, "page_type": "dialog",
        "risk_reason": "claiming the offer signs the person up", "risk": True, "risk_category": "consent"}))
    result = run(copilot_for(vllm, driver, perceiver), server, subtask)
    assert result.status is SubTaskStatus.NEEDS_USER, result.reason
    assert "claiming the offer signs the person up" in result.reason
    assert len(asked(vllm, "nav")) == 1 and len(asked(vllm, "eval")) == 1
    # The tap was never carried out: the pop-up is still there for the person.
    screen = perceiver.perceive(to_observation(driver.observe(), 0), use_ocr=False).screen
    assert is_dialog_open(screen) and any("去领取" in e.label for e in screen.elements)
    # Going back from a pop-up commits nothing: the model is not asked about it.
    before = len(vllm.requests)
    vllm.respond_with("nav", lambda r: json.dumps({"reason": "close it", "action": "back"})
                      if is_dialog_open(perceiver.perceive(to_observation(driver.observe(), 0),
                                                           use_ocr=False).screen)
                      else json.dumps({"reason": "the feed is the list", "action": "finish"}))
    closed = run(copilot_for(vllm, driver, perceiver), server, subtask)
    assert closed.status is SubTaskStatus.COMPLETED, closed.reason
    judged = [r for r in vllm.requests[before:] if r.model == "eval"]
    assert len(judged) == 1 and "去领取" not in judged[0].text  # only the finish, after the pop-up closed


def test_a_screen_the_evaluator_judged_is_not_sent_again(
        catalog_phone: tuple[SimServer, AdbDriver], perceiver: Perceiver, vllm: RecordingOpenAIServer) -> None:
    """Issue 14's loop (every page) on a page seen three times: one request for it, and none at finish."""
    server, driver = catalog_phone
    subtask = app_subtask(PLAYLISTS, "Spotify")
    taps = iter(range(2))

    def navigator(request: RecordedRequest) -> str:
        if is_dialog_open(perceiver.perceive(to_observation(driver.observe(), 0), use_ocr=False).screen):
            return json.dumps({"reason": "close the pop-up", "action": "back"})
        if next(taps, None) is not None:
            return tap_on("Good evening")(request)  # plain text: the page stays as it is
        return json.dumps({"reason": "enough", "action": "finish"})

    vllm.respond_with("nav", navigator)
    vllm.answer_by_default("eval", Answer.VALID)  # built from the schema: not complete, no risk
    every = dataclasses.replace(copilot_for(vllm, driver, perceiver), evaluator_pages="every_page")
    result = run(every, server, subtask)
    assert result.status is SubTaskStatus.COMPLETED, result.reason
    home = [s for s in result.trace.steps if s.action is not None and s.action.kind in ("tap", "finish")]
    assert len(home) == 3 and len({s.elements_digest for s in home}) == 1  # the same page, three times
    screens = [r.text.split("<screen_data>", 1)[-1] for r in asked(vllm, "eval")]
    assert len(screens) == len(set(screens)) == 2  # the pop-up, then the page once
    assert [sum(c.role == "evaluator" for c in s.calls) for s in home] == [1, 0, 0]
