"""Running DroidTask's cases on replay phones, one row (a Copilot configuration) at a time.

A row is a name and a factory that builds the :class:`~tasks.navigate.Copilot`
for one task (:data:`CopilotFactory`); :func:`run_task` starts the app fresh,
runs the copilot loop and scores the run from the replay phone's trail.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass

from bench.droidtask.cases import DroidTaskCase
from bench.droidtask.scoring import Shown, agent_moves, completion, is_final, matched_prefix, spl
from bench.real_navigation import action_for
from core.config import BudgetSettings, LLMEndpoint, PerceptionSettings
from core.models import PageMode, SubTask, SubTaskStatus, Swipe, new_id
from device_farm.adb_driver import AdbDriver
from device_farm.models import TextEntry
from device_farm.sim import ReplayStep, SimServer

# A test double, used as one: the scripted OpenAI-compatible server answers what a navigator
# following the ground truth would, so the model path runs without a model.
from droidretriever.testing import OpenAIStub as OpenAIStubTestDouble
from inference.llm import LLMClient
from inference.perception import Perceiver, Perception
from storage import FakeObjectStore, MapStore
from tasks.navigate import (
    Copilot,
    NavigateRequest,
    ScriptedMove,
    ScriptedPathError,
    navigate_subtask,
    navigator_answers,
    to_observation,
)
from tasks.navigate.act import execute_action

__all__ = [
    "ROWS",
    "CopilotFactory",
    "DroidTaskBench",
    "RunSetup",
    "TaskResult",
    "run_row",
    "run_task",
    "scripted_navigator",
    "skills_and_explorer",
    "skills_explorer_and_map",
    "subtask_for",
]


class _TypingDriver(AdbDriver):
    """The ADB driver, noting what it types: the phone's trail says "text", never what."""

    def __init__(self, serial: str, *, port: int) -> None:
        super().__init__(serial, port=port)
        self.typed: list[str] = []

    def input_text(self, text: str) -> TextEntry:
        """Type as the ADB driver does, and note the text."""
        self.typed.append(text)
        return super().input_text(text)


@dataclass(frozen=True)
class TaskResult:
    """One task, one row: what the run did and how it scores."""

    case: DroidTaskCase
    row: str
    completed: bool
    prefix: int  # ground-truth steps matched one for one from the first
    path: int  # actions to the completion, else all scored actions
    stopped_when_done: bool
    reached_screen: bool  # the last record's screen (or one of its kind), whatever it shows
    status: SubTaskStatus
    reason: str
    model_calls: int = 0
    off_graph: int = 0
    in_other_app: bool = False  # the phone ended on a screen of another recorded app

    @property
    def ending(self) -> str:
        """Why a run that did not complete the task ended, in words."""
        if self.completed:
            return "completed the task"
        if self.handed_over or self.status is SubTaskStatus.NEEDS_USER:
            return "stopped for a person"
        if self.in_other_app:
            return "the task went on in another app, and the loop reopened its own"
        if self.status is SubTaskStatus.COMPLETED:
            return "ended on a page the rules took for the target"
        if self.status is SubTaskStatus.BUDGET_EXHAUSTED:
            return "spent its budget"
        return "gave up (an action repeated without progress)"

    @property
    def acp(self) -> float:
        return self.prefix / len(self.case.truth)

    @property
    def spl(self) -> float:
        return spl(self.completed, len(self.case.truth), self.path)

    @property
    def handed_over(self) -> bool:
        """A correct hand-over: the ground truth needs a step the gate forbids and the run stopped for a person."""
        return self.case.hand_over is not None and self.status is SubTaskStatus.NEEDS_USER


@dataclass(frozen=True)
class RunSetup:
    """What a row's Copilot is built from, for one task."""

    bench: DroidTaskBench
    case: DroidTaskCase
    driver: AdbDriver
    subtask: SubTask

    def copilot(self, *, navigator: LLMClient | None = None, skills: bool = True, explore: bool = True,
                help_document: str | None = None, maps: MapStore | None = None) -> Copilot:
        """The loop on this task's phone: one try, the task's budget, a fresh launch unless set up."""
        # One loop step more than the actions allowed: the last one sees the page and says "done".
        budgets = BudgetSettings(steps_per_subtask=self.case.budget + 1, retries=1, swipes_per_capture=0)
        return Copilot(driver=self.driver, perceiver=self.bench.perceiver, store=FakeObjectStore(), budgets=budgets,
                       navigator=navigator, skills=skills, explore=explore, help_document=help_document,
                       restart_app=not self.case.setup, maps=maps)


# A row: given a task's setup, the Copilot to run it with (entered before the phone is started).
CopilotFactory = Callable[[RunSetup], AbstractContextManager[Copilot]]


@contextmanager
def skills_and_explorer(setup: RunSetup) -> Iterator[Copilot]:
    """No model: skills, then the goal-directed explorer."""
    yield setup.copilot()


@contextmanager
def skills_explorer_and_map(setup: RunSetup) -> Iterator[Copilot]:
    """No model: the app's map (explored on its replay phone before any task), skills, explorer."""
    yield setup.copilot(maps=setup.bench.maps)


@contextmanager
def scripted_navigator(setup: RunSetup) -> Iterator[Copilot]:
    """The LLM navigator alone, its model a stub scripted with the ground truth's moves (a test double)."""
    moves = setup.bench.demonstrate(setup.case)
    with OpenAIStubTestDouble() as stub:
        endpoint = LLMEndpoint().model_copy(update={"base_url": stub.base_url, "model": stub.model})
        try:
            answers = _answers(moves or [], setup.subtask, endpoint, setup.bench.perceiver.settings)
        except ScriptedPathError:
            answers = ()
        stub.enqueue(*answers, *answers[-1:] * 4)  # a few spare "finish" answers
        yield setup.copilot(navigator=LLMClient(endpoint, role="navigator"), skills=False, explore=False)


def _answers(moves: Sequence[ScriptedMove], subtask: SubTask, endpoint: LLMEndpoint,
             settings: PerceptionSettings) -> tuple[str, ...]:
    """A navigator's answers for ``moves``; a swipe (the ground truth's scroll) as a scroll answer."""
    answers: list[str] = []
    for move in moves:
        if isinstance(move.action, Swipe):
            up = move.action.end.y < move.action.start.y
            answers.append(json.dumps({"reason": "the element is further down the page" if up else "further up",
                                       "action": "scroll", "direction": "down" if up else "up"}))
        else:
            answers.append(navigator_answers([move], subtask, endpoint, settings)[1])
    opened, finish = navigator_answers([], subtask, endpoint, settings)
    return (opened, *answers, finish)


class DroidTaskBench:
    """A simulator with the DroidTask recordings installed, and the runs of tasks on it."""

    def __init__(self, server: SimServer, perceiver: Perceiver, maps: MapStore | None = None) -> None:
        self.server, self.perceiver = server, perceiver
        self.maps = maps  # the apps' maps, when the map row runs (built before the tasks)
        self.serials = {(p.width, p.height): p.serial for p in server.control.status() if p.recorded}

    def driver(self, case: DroidTaskCase) -> _TypingDriver:
        return _TypingDriver(self.serials[(case.app.width, case.app.height)], port=self.server.port)

    def trail(self, driver: AdbDriver) -> list[ReplayStep]:
        return list(self.server.control.status(driver.serial)[0].replay_trail)

    def _perceive(self, driver: AdbDriver) -> Perception:
        return self.perceiver.perceive(to_observation(driver.observe(), 0), use_ocr=False)

    def start(self, driver: AdbDriver, case: DroidTaskCase) -> None:
        """A fresh phone, the app launched on its first screen, the setup to the task's first screen done."""
        self.server.control.reset("boot")
        driver.open_app(case.app.package)
        for event in case.setup:
            screen = self._perceive(driver).screen
            action = action_for(event, screen, submit=False)
            if action is not None:
                execute_action(driver, action, screen)

    def demonstrate(self, case: DroidTaskCase) -> list[ScriptedMove] | None:
        """The ground truth as copilot moves on the replay phone (None when a step's element is not shown)."""
        driver = self.driver(case)
        try:
            self.start(driver, case)
            moves: list[ScriptedMove] = []
            for index, event in enumerate(case.events):
                perception = self._perceive(driver)
                action = action_for(event, perception.screen, submit=case.submitted(index))
                if action is None:
                    return moves or None
                moves.append(ScriptedMove(action=action, perception=perception))
                execute_action(driver, action, perception.screen)
            return moves
        finally:
            driver.close()


def subtask_for(case: DroidTaskCase) -> SubTask:
    """The sub-task a planner would give the copilot for ``case`` (as bench.real_navigation builds one)."""
    return SubTask(id=f"droidtask-{case.task.app}-{case.task.name}", app_label=case.app.label,
                   package=case.app.package, goal=case.task.goal, search_term=case.search_term,
                   page_mode=PageMode.FOCUSED)


def run_task(bench: DroidTaskBench, case: DroidTaskCase, row: str, make_copilot: CopilotFactory) -> TaskResult:
    """Run ``case`` once with ``row``'s Copilot from a fresh start, and score it (see the module docstring)."""
    driver = bench.driver(case)
    try:
        subtask = subtask_for(case)
        with make_copilot(RunSetup(bench, case, driver, subtask)) as copilot:
            bench.start(driver, case)
            trail = bench.trail(driver)
            before, start = len(trail), trail[-1].screen
            driver.typed.clear()
            result = navigate_subtask(copilot, NavigateRequest(run_id=new_id("run"), subtask=subtask))
        steps = bench.trail(driver)[before:]
        done = agent_moves(case.app, steps, start, driver.typed)[: case.budget]
        finished = completion(case.truth, done, case.targets, case.finals)
        last = Shown.of(case.app.screens[steps[-1].screen]) if steps else None
        completed = finished is not None
        return TaskResult(
            case=case, row=row, completed=completed, prefix=matched_prefix(case.truth, done),
            path=finished if finished is not None else len(done),
            stopped_when_done=completed and result.status is SubTaskStatus.COMPLETED and is_final(last, case.finals),
            reached_screen=any(is_final(m.led_to, case.finals) for m in done),
            status=result.status, reason=result.reason,
            model_calls=sum(len(s.calls) for s in result.trace.steps),
            off_graph=sum(s.outcome.value == "off_graph" for s in steps),
            in_other_app=bool(steps) and case.app.screens[steps[-1].screen].package != case.app.package)
    finally:
        driver.close()


def run_row(bench: DroidTaskBench, cases: Sequence[DroidTaskCase], name: str,
            make_copilot: CopilotFactory) -> Iterator[TaskResult]:
    """Every case with one row (a name and its Copilot factory)."""
    for case in cases:
        yield run_task(bench, case, name, make_copilot)


ROWS: tuple[tuple[str, CopilotFactory], ...] = (
    ("skills + explorer", skills_and_explorer),
    ("skills + explorer + app map", skills_explorer_and_map),
    ("navigator (scripted test double)", scripted_navigator),
)
