"""A person steers a running try: pause, take over, resume, save this screen, stop, confirm window.

Commands come from the control channel (``tasks.control``). While paused or
taken over the loop only waits; after ``resume`` it re-observes and
re-evaluates, and the next step carries an intervention marker. What the
person did is never recorded, only that they did something.
"""

from __future__ import annotations

import time
from typing import Protocol

from device_farm.models import DeviceObservation
from droidretriever.models import CaptureSource, RunEventKind, Screen, SubTaskStatus
from inference.policies import TakenAction
from tasks.control import ControlCommand, ControlKind
from tasks.navigate.copilot import Copilot
from tasks.navigate.run import SubTaskRun, TryEnd, to_observation
from tasks.navigate.targets import TargetPages

__all__ = ["SteeredTry", "obey", "wait_confirm_window"]


class SteeredTry(Protocol):
    """What a person's commands reach of a running try (:class:`tasks.navigate.attempt.NavigationTry`)."""

    run: SubTaskRun
    copilot: Copilot
    targets: TargetPages
    history: list[TakenAction]  # what the policies see; cleared after a takeover
    taken: list[tuple[TakenAction, Screen]]  # every action, for route memory


def obey(trial: SteeredTry, command: ControlCommand, observation: DeviceObservation) -> TryEnd | None:
    """Carry out a person's command; a :class:`TryEnd` when it ends the try."""
    run, copilot = trial.run, trial.copilot
    if command.kind is ControlKind.STOP:
        return _stopped(trial)
    if command.kind is ControlKind.SAVE_SCREEN:
        screen = copilot.perceiver.perceive(to_observation(observation, 0), use_ocr=False).screen
        trial.targets.capture(observation, screen, trial.taken, source=CaptureSource.USER)
        return None
    if command.kind is ControlKind.RESUME:
        return None  # not paused: nothing to resume
    run.publish(RunEventKind.NEEDS_USER, f"{command.kind.value} by a person")
    control = copilot.control
    deadline = time.monotonic() + copilot.budgets.pause_timeout_s
    while control is not None and time.monotonic() < deadline:
        reply = control.wait(run.request.run_id, min(copilot.pause_poll_s, deadline - time.monotonic()))
        if reply is None:
            continue
        if reply.kind is ControlKind.STOP:
            return _stopped(trial)
        if reply.kind is ControlKind.SAVE_SCREEN:
            now = copilot.driver.observe()
            trial.targets.capture(now, _perceive(trial, now), trial.taken, source=CaptureSource.USER)
        elif reply.kind is ControlKind.RESUME:
            # What the person did is not recorded: only that they did something.
            run.intervened = True
            trial.history.clear()
            run.publish(RunEventKind.RESUMED, "back to automatic")
            return None
    return TryEnd(SubTaskStatus.NEEDS_USER,
                  f"paused, and nobody resumed within {copilot.budgets.pause_timeout_s:.0f} s")


def wait_confirm_window(trial: SteeredTry) -> TryEnd | None:
    """The confirm window before an action (0 s on farm runs): a command in it runs first."""
    copilot = trial.copilot
    window = copilot.budgets.confirm_window_s
    if window <= 0:
        return None
    if copilot.control is None:
        time.sleep(window)
        return None
    command = copilot.control.wait(trial.run.request.run_id, window)
    if command is None:
        return None
    # Any command in the window (stop, pause, save) is handled before the action runs;
    # after a pause the screen may differ, so the planned action is dropped.
    end = obey(trial, command, copilot.driver.observe())
    if end is None and command.kind in (ControlKind.PAUSE, ControlKind.TAKE_OVER):
        return TryEnd(None, "the person changed the screen during the confirm window")
    return end


def _perceive(trial: SteeredTry, observation: DeviceObservation) -> Screen:
    return trial.copilot.perceiver.perceive(to_observation(observation, 0), use_ocr=False).screen


def _stopped(trial: SteeredTry) -> TryEnd:
    status = SubTaskStatus.COMPLETED if trial.run.captures else SubTaskStatus.FAILED
    return TryEnd(status, "stopped by a person")
