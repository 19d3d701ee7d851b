"""A person's demonstration as a route: play a scripted path on a phone and remember it.

Suite tasks (``suites``) carry the path a person takes to the
answer as :class:`core.models.Step` s (``open_app``, ``tap_text``,
``input``, ``submit``, ``back``; swipes and checks only read the target page). Playing one through the copilot's own
hands (perception and :func:`tasks.navigate.act.execute_action`) gives, for
each move, the screen it was made on: exactly what route memory stores after
a successful run, so a direct goal that no skill can find ("community
guidelines" behind "我的") is reachable by replay, and what the navigator would
be shown along the way can be counted without a model. :func:`navigator_answers`
writes the same demonstration as the JSON answers a good navigator model gives
(what a scripted OpenAI-compatible stub replays, and what benchmarks count).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict

from core.config import LLMEndpoint, PerceptionSettings
from core.models import (
    Action,
    Back,
    Input,
    PageMode,
    Screen,
    Step,
    StepKind,
    SubTask,
    Tap,
    UIElement,
)
from device_farm.driver import Driver
from device_farm.models import Key
from inference.memory import RouteMemory, RouteStep, anchor_for
from inference.perception import Perceiver, Perception, describe_screen, redactor_for
from inference.policies import (
    describe_for_navigator,
    is_dialog_open,
    screen_anchors,
)
from inference.prompts import neutralize_data
from tasks.errors import CopilotError
from tasks.navigate.act import execute_action
from tasks.navigate.run import to_observation

__all__ = [
    "ScriptedMove",
    "ScriptedNavigator",
    "ScriptedPathError",
    "navigator_answers",
    "play_scripted_path",
    "record_scripted_route",
]

_DIALOG_BACKS = 3  # pop-ups closed with BACK, as a person would, before each move
_CUT = re.compile(r"\(\d+ of \d+ blocks shown\)$")  # the header of a screen cut to some blocks


class ScriptedPathError(CopilotError):
    """A scripted path does not fit the phone (a text to tap is not on the screen)."""

    hint = "play the path by hand on a virtual phone (`python -m device_farm.sim`) and fix the task file"


class ScriptedMove(BaseModel):
    """One navigating move of a scripted path and the screen it was made on."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    action: Action
    perception: Perception

    @property
    def screen(self) -> Screen:
        return self.perception.screen


def play_scripted_path(driver: Driver, perceiver: Perceiver, package: str,
                       steps: Sequence[Step]) -> tuple[ScriptedMove, ...]:
    """Play the navigating steps of a path (from a fresh app start); the moves made.

    ``input`` and the ``submit`` after it become one :class:`Input` with
    ``submit=True``, as the skills type a search. Steps after the last
    navigating one (swipes over the target page, checks) are not played.
    """
    last = max((i for i, s in enumerate(steps) if s.kind.navigates), default=-1)
    moves: list[ScriptedMove] = []
    driver.force_stop(package)
    driver.key(Key.HOME)
    for index, step in enumerate(steps[: last + 1]):
        if step.kind is StepKind.OPEN_APP:
            driver.open_app(package)
            continue
        if step.kind is StepKind.SUBMIT and moves and isinstance(moves[-1].action, Input):
            continue  # already submitted with its input
        perception = _perceive_without_dialogs(driver, perceiver)
        action = _action_for(step, steps[index + 1:], perception.screen)
        if action is None:
            continue
        outcome = execute_action(driver, action, perception.screen)
        if outcome.problem:
            raise ScriptedPathError(f"step {index + 1} ({step.kind.value} {step.text!r}): {outcome.problem}")
        moves.append(ScriptedMove(action=action, perception=perception))
    return tuple(moves)


def record_scripted_route(memory: RouteMemory, subtask: SubTask,
                          moves: Sequence[ScriptedMove]) -> int:
    """Remember ``moves`` as a route for ``subtask``'s kind of goal; the number of steps."""
    if not moves:
        return 0  # the answer is on the app's first page: nothing to remember
    steps = tuple(
        RouteStep(action=m.action, target=anchor_for(m.screen, getattr(m.action, "target", None)),
                  fingerprint=m.screen.fingerprint, anchors=screen_anchors(m.screen))
        for m in moves
    )
    memory.record(subtask.package, subtask.goal, steps, search_term=subtask.search_term,
                  page_mode=subtask.page_mode)
    return len(steps)


def navigator_answers(
    moves: Sequence[ScriptedMove], subtask: SubTask, endpoint: LLMEndpoint, settings: PerceptionSettings,
    *, finish_reason: str = "the target page is on the screen",
) -> tuple[str, ...]:
    """The JSON answers of a navigator that follows ``moves``: open the app, each move, finish.

    Elements are named by their number in the description the navigator policy
    shows ``endpoint``'s model first (redacted for a cloud model, large screens cut
    to the task's blocks with ``settings.description_token_budget``), so the answers
    fit what it sees.
    """
    redactor = redactor_for(endpoint, settings)
    answers = [_open_app(subtask)]
    for move in moves:
        description = describe_for_navigator(move.perception, subtask, redactor=redactor,
                                              budget=settings.description_token_budget)
        answer, target = _move_answer(move)
        if target is not None:
            answer["element_id"] = _number(description.element_ids, target, move)
        answers.append(json.dumps(answer, ensure_ascii=False))
    answers.append(json.dumps({"reason": finish_reason, "action": "finish"}))
    return tuple(answers)


class ScriptedNavigator:
    """A navigator that follows a person's path and reads the screen it is shown.

    What a scripted OpenAI-compatible test double answers for the navigator role
    in benchmarks: the answers of :func:`navigator_answers`, but each move's element
    is looked up, by its description line, on the screen of the request. A pop-up
    over the page (``dialog_open``, asked of the phone as :func:`play_scripted_path`
    asks it) or a screen without the element gets "back", as a person closes it;
    a screen cut to some of its blocks without the element gets "more", as a model
    that cannot find what it needs asks for the rest (CORE's accumulation).
    :meth:`judge` answers for the evaluator role as a judge that knows the path.
    """

    def __init__(self, moves: Sequence[ScriptedMove], subtask: SubTask, endpoint: LLMEndpoint,
                 settings: PerceptionSettings, *, dialog_open: Callable[[], bool] | None = None) -> None:
        redactor = redactor_for(endpoint, settings)
        self._subtask = subtask
        self._dialog_open = dialog_open
        self._moves: list[tuple[dict[str, str | bool], str | None]] = []
        for move in moves:
            answer, target = _move_answer(move)
            line = None
            if target is not None:
                whole = describe_screen(move.perception.screen, move.perception.blocks, redactor=redactor)
                line = _line_of(whole.text, _number(whole.element_ids, target, move))
            self._moves.append((answer, line))
        self._next = 0
        self.asked_more = 0  # "more" answers given (screens cut without the element needed)

    @property
    def finished(self) -> bool:
        """Whether every move was answered."""
        return self._next >= len(self._moves)

    def answer(self, prompt: str) -> str:
        """The next answer for the screen in ``prompt`` (the navigator's user message)."""
        screen = _screen_in(prompt)
        if not self._in_app(screen):
            return _open_app(self._subtask)  # another app or the launcher is in front
        if self._covered():
            return json.dumps({"reason": "a pop-up covers the page", "action": "back"})
        if self.finished:
            return json.dumps({"reason": "the target page is on the screen", "action": "finish"})
        answer, line = self._moves[self._next]
        if line is not None:
            number = next((n for n, text in _numbered_lines(screen) if text == neutralize_data(line)), None)
            if number is None and _CUT.search(screen.strip().splitlines()[0]):
                self.asked_more += 1
                return json.dumps({"reason": "what the path needs is not among the blocks shown",
                                   "action": "more"})
            if number is None:
                return json.dumps({"reason": "not the screen the path expects", "action": "back"})
            answer = {**answer, "element_id": number}
        self._next += 1
        return json.dumps(answer, ensure_ascii=False)

    def judge(self, prompt: str) -> str:
        """The evaluator's answer on the screen in ``prompt``, from a judge that knows the path.

        Complete on the page the path ends on (every move made, the app in front, no
        pop-up over it), not complete on the pages before; never risky (the rules'
        risk check runs first on every screen).
        """
        screen = _screen_in(prompt)
        done = self.finished and self._in_app(screen) and not self._covered()
        kind = "results_list" if self._subtask.page_mode is PageMode.LIST_VIEW else "details"
        return json.dumps({
            "completion_reason": "the page the path ends on" if done else "the path goes on from here",
            "complete": done, "page_type": kind if done else "other",
            "risk_reason": "an ordinary page", "risk": False, "risk_category": None,
        })

    def _in_app(self, screen: str) -> bool:
        return screen.strip().startswith(f"Screen {self._subtask.package}/")

    def _covered(self) -> bool:
        return self._dialog_open is not None and self._dialog_open()


def _screen_in(prompt: str) -> str:
    """The screen description of a navigator or evaluator prompt."""
    return prompt.split("<screen_data>", 1)[-1].split("</screen_data>", 1)[0]


def _open_app(subtask: SubTask) -> str:
    return json.dumps({"reason": "open the app", "action": "open_app", "package": subtask.package})


def _move_answer(move: ScriptedMove) -> tuple[dict[str, str | bool], str | None]:
    """A move as a navigator's answer, and the id of the element it needs a number for."""
    answer: dict[str, str | bool] = {"reason": move.action.reason}
    match move.action:
        case Tap(target=str(target)):
            return answer | {"action": "tap"}, target
        case Input(text=text, target=target, submit=submit):
            return answer | {"action": "input", "text": text, "submit": submit}, target
        case Back():
            return answer | {"action": "back"}, None
        case _:
            raise ScriptedPathError(f"a scripted {move.action.kind} has no navigator answer")


def _numbered_lines(text: str) -> list[tuple[str, str]]:
    """``[n] rest`` lines of a screen description as (n, rest)."""
    found = []
    for line in text.splitlines():
        number, bracket, rest = line.partition("] ")
        if bracket and number.startswith("[") and number[1:].isdigit():
            found.append((number[1:], rest))
    return found


def _line_of(text: str, number: str) -> str:
    return next(rest for n, rest in _numbered_lines(text) if n == number)


def _number(shown: tuple[str, ...], target: str, move: ScriptedMove) -> str:
    if target not in shown:
        raise ScriptedPathError(
            f"the element the path uses on {move.screen.package} is not among the blocks the navigator is shown",
            hint="the screen is large and the block ranking left the path's element out: "
                 "raise the navigator's screen budget or improve inference.policies.exposure",
        )
    return str(shown.index(target) + 1)


def _perceive_without_dialogs(driver: Driver, perceiver: Perceiver) -> Perception:
    perception = perceiver.perceive(to_observation(driver.observe(), 0), use_ocr=False)
    for _ in range(_DIALOG_BACKS):
        if not is_dialog_open(perception.screen):
            break
        driver.key(Key.BACK)
        perception = perceiver.perceive(to_observation(driver.observe(), 0), use_ocr=False)
    return perception


def _find_text(screen: Screen, text: str) -> UIElement | None:
    """The element showing ``text``: exactly, else a tappable one whose label starts or holds it.

    Perception merges a card's texts into one label ("A | B"), so the text a
    person taps may be part of a label: the card headed by it wins over one
    that merely mentions it.
    """
    exact = next((e for e in screen.elements if text in (e.text, e.content_desc)), None)
    if exact is not None:
        return exact
    holding = [e for e in screen.elements if text in e.label]
    tappable = [e for e in holding if e.clickable] or holding  # not the header naming it
    headed = [e for e in tappable if e.label.split(" | ", 1)[0].strip() == text]
    return min(headed or tappable, key=lambda e: e.bounds.area) if tappable else None


def _action_for(step: Step, rest: Sequence[Step], screen: Screen) -> Action | None:
    match step.kind:
        case StepKind.TAP_TEXT:
            element = _find_text(screen, step.text)
            if element is None:
                raise ScriptedPathError(f"{step.text!r} is not on the screen of {screen.package}")
            return Tap(target=element.id, reason=f"the path taps {step.text!r}")
        case StepKind.INPUT:
            field = next((e for e in screen.elements if e.editable and e.focused), None) or next(
                (e for e in screen.elements if e.editable), None)
            submit = bool(rest) and rest[0].kind is StepKind.SUBMIT
            return Input(text=step.text, target=field.id if field else None, submit=submit,
                         reason="the path types here")
        case StepKind.BACK:
            return Back(reason="the path goes back")
        case _:
            return None
