"""The UI copilot loop for one sub-task on one phone (plain functions; no Celery here).

Each step: observe (driver) -> perceive -> control channel (pause / take over /
resume / save this screen / stop) -> evaluate (rules, then LLM3) -> decide
(policy chain) -> preview event -> confirm window -> act -> verify on the next
observation. A risky screen stops with ``needs_user``; text on a screen is
only ever data. A try ends when the page mode's target is reached, when no
policy is confident, when an action repeats on the same screen more than
``max_repeats`` times, or after ``budgets.steps_per_subtask`` steps; up to
``budgets.retries`` tries run, each after a reflection on the last.

The package, by feature:

- :mod:`tasks.navigate.copilot`  the request and the loop's dependencies;
- :mod:`tasks.navigate.run`      what the run keeps across tries, and its events;
- :mod:`tasks.navigate.attempt`  one try's step machinery;
- :mod:`tasks.navigate.targets`  target pages, multi-page bookkeeping, route remembering;
- :mod:`tasks.navigate.steer`    a person's commands and the confirm window;
- :mod:`tasks.navigate.act`      what each action means on a phone, trace helpers;
- :mod:`tasks.navigate.paths`    a person's scripted path played and remembered as a route;
- :mod:`tasks.navigate.task`     ``copilot.navigate``, the loop as a device-bound Celery task;
- :mod:`tasks.navigate.probe`    ``probe.navigate``, a no-op with the same contract (benchmarks, tests).

This module runs the tries (:func:`navigate_subtask`) and re-exports the
public names; the two Celery task modules are imported by name by workers
(``tasks.worker.celery_app.DEVICE_TASK_MODULES``), not from here.
"""

from __future__ import annotations

from core.models import RiskCategory, RunEventKind, SubTaskResult, SubTaskStatus, Trace
from inference.errors import LLMRequestError
from inference.rules.never_tap import goal_act
from tasks.navigate.act import handoff_facts, page_title, store_trace, write_reflection
from tasks.navigate.attempt import NavigationTry
from tasks.navigate.copilot import Copilot, EventSink, NavigateRequest, ObjectStoreBlobs
from tasks.navigate.paths import (
    ScriptedMove,
    ScriptedNavigator,
    ScriptedPathError,
    navigator_answers,
    play_scripted_path,
    record_scripted_route,
)
from tasks.navigate.run import SubTaskRun, TryEnd, to_observation

__all__ = [
    "Copilot",
    "EventSink",
    "NavigateRequest",
    "ObjectStoreBlobs",
    "ScriptedMove",
    "ScriptedNavigator",
    "ScriptedPathError",
    "navigate_subtask",
    "navigator_answers",
    "page_title",
    "play_scripted_path",
    "record_scripted_route",
    "to_observation",
]


def navigate_subtask(copilot: Copilot, request: NavigateRequest) -> SubTaskResult:
    """Navigate ``request.subtask`` to its target page(s) and capture them; see the module doc."""
    run = SubTaskRun(copilot, request)
    subtask = request.subtask
    if copilot.control is not None:  # first: the page that hears of the start labels this phone
        copilot.control.announce(request.run_id, copilot.driver.serial, subtask.id)
    run.publish(RunEventKind.SUBTASK_STARTED, f"{subtask.app_label}: {subtask.goal}")
    reflection: str | None = "\n".join(request.tips) or None
    end = TryEnd(SubTaskStatus.FAILED, "no try ran")
    attempts = copilot.budgets.retries
    attempt = 1
    config_error: LLMRequestError | None = None
    for attempt in range(1, attempts + 1):
        trial = NavigationTry(run, attempt, reflection)
        try:
            end = trial.execute()
        except LLMRequestError as exc:
            # A model refusing requests (4xx) is a configuration error: no fallback, no
            # more tries; the flow stops the run with this message and its fix.
            config_error = exc
            end = TryEnd(SubTaskStatus.FAILED, f"configuration error: {exc}")
            run.publish(RunEventKind.ERROR, f"{exc} (fix: {exc.hint})" if exc.hint else str(exc))
        if end.status is not None:
            break
        reflection = write_reflection(attempt, end.reason, trial.history)
        run.publish(RunEventKind.LOG, f"try {attempt} of {attempts} failed: {end.reason}")
    status = end.status or (
        SubTaskStatus.BUDGET_EXHAUSTED if end.budget_spent else SubTaskStatus.FAILED
    )
    risk_category = end.risk.risk_category if end.risk is not None else None
    act = goal_act(subtask.goal)
    if status not in (SubTaskStatus.NEEDS_USER, SubTaskStatus.STOPPED) and act is not None \
            and act.category is RiskCategory.LOGIN:
        # Signing in or up is the person's, whether or not the tries found the app's page for it:
        # the run hands the phone over where it stands, never fails or calls it done.
        end = TryEnd(SubTaskStatus.NEEDS_USER, f"{act.doing} is the person's to do, never the agent's: "
                                               f"the app is open for you ({end.reason})")
        status, risk_category = SubTaskStatus.NEEDS_USER, RiskCategory.LOGIN
        run.publish(RunEventKind.NEEDS_USER, end.reason)
    if run.patches is not None:
        added = len(run.patches.found)
        if run.patches.save() is not None:
            run.publish(RunEventKind.LOG, f"app map patched: {added} screen(s) this run reached were not on "
                                          "the map; the next `map build` explores them further")
    result = SubTaskResult(
        subtask_id=subtask.id, status=status, captures=tuple(run.captures),
        trace=Trace(subtask_id=subtask.id, steps=tuple(run.steps)),
        facts=handoff_facts(run.captures, subtask.search_term), reason=end.reason,
        risk_category=risk_category,
        device=copilot.driver.serial, attempt=attempt,
        config_error=str(config_error) if config_error is not None else "",
        config_hint=config_error.hint if config_error is not None else "",
    )
    store_trace(copilot.store, request.run_id, result)
    run.publish(RunEventKind.SUBTASK_FINISHED, f"{status.value}: {end.reason}", result=result)
    return result
