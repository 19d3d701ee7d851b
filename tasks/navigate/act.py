"""The copilot's hands: preview an action, carry it out on the phone, and small trace helpers.

Kept apart from the loop (``tasks.navigate``) so the loop reads as the
sequence observe -> perceive -> control -> evaluate -> decide -> preview ->
confirm -> act -> verify, and this module holds what each action means on a
phone.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from core.models import (
    Action,
    Back,
    Bounds,
    Capture,
    Finish,
    Input,
    LongPress,
    OpenApp,
    Point,
    Preview,
    Screen,
    Scroll,
    SubTaskResult,
    Swipe,
    Tap,
    Wait,
)
from device_farm.driver import Driver
from device_farm.errors import InputNotApplied
from device_farm.models import Key
from inference.llm_roles import describe_action
from inference.policies import Decision, TakenAction
from storage import ObjectStore, RunKeys

__all__ = [
    "ActOutcome",
    "digest_elements",
    "execute_action",
    "handoff_facts",
    "page_title",
    "preview_for",
    "store_trace",
    "write_reflection",
]

_FACTS = 8
_MAX_CLEAR = 80  # DEL presses at most when a field holds stale text


class ActOutcome(BaseModel):
    """What carrying out an action did: time, and a problem when it did not apply."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    act_ms: float
    problem: str = ""  # "" when the action applied (text landed, element found)


def preview_for(step: int, decision: Decision, screen: Screen, window_s: float = 0.0) -> Preview:
    """The announcement of ``decision`` before it runs: instruction, target box, confirm window."""
    action = decision.action
    target = getattr(action, "target", None)
    element = screen.element(target) if isinstance(target, str) else None
    box: Bounds | None = element.bounds if element is not None else None
    return Preview(
        step=step, action=action, instruction=describe_action(action, screen), box=box,
        policy=decision.policy, window_s=window_s,
    )


def execute_action(driver: Driver, action: Action, screen: Screen) -> ActOutcome:
    """Carry out ``action`` on the phone; device errors propagate (the farm handles them)."""
    started = time.perf_counter()
    problem = ""
    match action:
        case Tap() | LongPress():
            point = _point_of(action.target, action.point, screen)
            if point is None:
                problem = f"element {action.target} is not on the screen"
            elif isinstance(action, Tap):
                driver.tap(point)
            else:
                driver.long_press(point, action.duration_ms)
        case Input():
            problem = _type(driver, action, screen)
        case Scroll():
            driver.scroll(action.direction, action.fraction)
        case Swipe():
            driver.swipe(action.start, action.end, action.duration_ms)
        case Back():
            driver.key(Key.BACK)
        case OpenApp():
            if action.fresh:
                driver.force_stop(action.package)
            driver.open_app(action.package)
        case Wait():
            time.sleep(action.seconds)
        case Finish():
            pass
    return ActOutcome(act_ms=(time.perf_counter() - started) * 1000.0, problem=problem)


def _point_of(target: str | None, point: Point | None, screen: Screen) -> Point | None:
    if target is not None:
        element = screen.element(target)
        return element.bounds.center if element is not None else None
    return point


def _type(driver: Driver, action: Input, screen: Screen) -> str:
    if action.target is not None:
        element = screen.element(action.target)
        if element is None:
            return f"field {action.target} is not on the screen"
        if not element.focused:
            driver.tap(element.bounds.center)
        if element.text == action.text and action.submit:
            driver.key(Key.ENTER)  # the field already holds the term (kept from an earlier visit)
            return ""
    try:
        entry = driver.input_text(action.text)
        if entry.field_text.strip() != action.text.strip():
            # Typing appends: a field that kept an earlier visit's term now reads
            # "<old><new>", and submitting it searches for neither. Clear and type again.
            for _ in range(min(len(entry.field_text), _MAX_CLEAR)):
                driver.key(Key.DEL)
            entry = driver.input_text(action.text)
    except InputNotApplied as exc:
        return f"the text did not land: {exc}"
    # Past this point the driver saw the term in the field (apps may format it).
    if action.submit:
        driver.key(Key.ENTER)
    return ""


def digest_elements(screen: Screen) -> str:
    """A short hash of every element (id, label, box): equal digests = identical screens."""
    digest = hashlib.blake2b(digest_size=8)
    for element in screen.elements:
        digest.update(f"{element.id}|{element.label}|{element.bounds.to_uiautomator()}\n".encode())
    return digest.hexdigest()


def write_reflection(attempt: int, reason: str, history: Sequence[TakenAction]) -> str:
    """Tips for the next try (MobileSteward's reflection): what failed and what not to repeat."""
    last = "; ".join(t.instruction for t in history[-4:]) or "no action"
    return (
        f"Try {attempt} failed: {reason}. Its last actions were: {last}. "
        "Start again from the app's first page and choose a different element or result "
        "where those actions led nowhere."
    )


def handoff_facts(captures: Sequence[Capture], term: str | None) -> tuple[str, ...]:
    """Key lines of the captured pages: those naming the search term, else the first texts.

    Extractive, no model: what a downstream sub-task's goal can be rewritten with.
    """
    facts: list[str] = []
    for capture in captures:
        texts = [e.text.strip() for e in capture.elements if len(e.text.strip()) >= 2]
        chosen = [t for t in texts if term and term.casefold() in t.casefold()] or texts[:3]
        facts.extend(t for t in chosen if t not in facts)
    return tuple(facts[:_FACTS])


def page_title(screen: Screen) -> str:
    """The page heading: the first short text from the top."""
    texts = sorted((e for e in screen.elements if e.text and len(e.text) <= 60),
                   key=lambda e: (e.bounds.top, e.bounds.left))
    return texts[0].text if texts else screen.package


def store_trace(store: ObjectStore, run_id: str, result: SubTaskResult) -> None:
    """Keep the sub-task's trace beside the run's events: ``runs/<run>/traces/<subtask>.json``."""
    key = RunKeys(run_id).key("traces", f"{result.subtask_id}.json")
    store.put_bytes(key, result.trace.model_dump_json().encode(), "application/json")
