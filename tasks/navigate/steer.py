"""A person steers a running try: pause, take over, resume, save this screen, stop, confirm window.

Commands come from the control channel (``tasks.control``), from the run's
list or this phone's. While paused or taken over the loop only waits, and says
so on the channel (an acknowledgement per phone) so the person's taps never
race its own; after ``resume`` it re-observes and re-evaluates, and the next
step carries an intervention marker. What the person did is never recorded
here, only that they did something (the API records the screens they visited).
"""

from __future__ import annotations

import time
from typing import Literal, Protocol

from core.models import CaptureSource, RunEventKind, Screen, SubTaskStatus, in_own_app
from device_farm.models import DeviceObservation
from inference.policies import TakenAction
from tasks.control import ControlAck, ControlCommand, ControlKind
from tasks.navigate.copilot import Copilot
from tasks.navigate.run import SubTaskRun, TryEnd, to_observation
from tasks.navigate.targets import TargetPages

__all__ = ["SteeredTry", "confirm_window_s", "obey", "poll_command", "wait_confirm_window"]

_WAITING_WORDS = {ControlKind.PAUSE: "paused by a person", ControlKind.TAKE_OVER: "taken over by a person"}


class SteeredTry(Protocol):
    """What a person's commands reach of a running try (:class:`tasks.navigate.attempt.NavigationTry`)."""

    run: SubTaskRun
    copilot: Copilot
    targets: TargetPages
    history: list[TakenAction]  # what the policies see; cleared after a takeover
    taken: list[tuple[TakenAction, Screen]]  # every action, for route memory


def poll_command(copilot: Copilot, run: SubTaskRun) -> ControlCommand | None:
    """The next command for this phone's loop or the run's, or None (no channel: never any)."""
    if copilot.control is None:
        return None
    return copilot.control.poll(run.request.run_id, copilot.driver.serial)


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
    _acknowledge(trial, command.kind)
    run.publish(RunEventKind.NEEDS_USER, _WAITING_WORDS.get(command.kind, command.kind.value))
    control = copilot.control
    deadline = time.monotonic() + copilot.budgets.pause_timeout_s
    serial = copilot.driver.serial
    while control is not None and time.monotonic() < deadline:
        reply = control.wait(run.request.run_id, min(copilot.pause_poll_s, deadline - time.monotonic()),
                             serial)
        if reply is None:
            continue
        if reply.kind is ControlKind.STOP:
            return _stopped(trial)
        if reply.kind is ControlKind.SAVE_SCREEN:
            now = copilot.driver.observe()
            trial.targets.capture(now, _perceive(trial, now), trial.taken, source=CaptureSource.USER)
        elif reply.kind is ControlKind.RESUME:
            # What the person did is not recorded here: only that they did something.
            run.intervened = True
            trial.history.clear()
            _acknowledge(trial, ControlKind.RESUME)
            run.publish(RunEventKind.RESUMED, "back to automatic")
            return None
    _acknowledge(trial, ControlKind.STOP)
    return TryEnd(SubTaskStatus.NEEDS_USER,
                  f"paused, and nobody resumed within {copilot.budgets.pause_timeout_s:.0f} s")


def confirm_window_s(copilot: Copilot, run: SubTaskRun) -> float:
    """How long the next planned action waits for a person to stop it.

    ``budgets.confirm_window_s`` while a person has the run's page open, else 0: a run
    nobody watches (the CLI, a subscription, a benchmark) is never slowed by the window,
    and nobody could stop it anyway.
    """
    window = copilot.budgets.confirm_window_s
    if window <= 0 or copilot.control is None:
        return 0.0
    return window if copilot.control.watched(run.request.run_id) else 0.0


def wait_confirm_window(trial: SteeredTry, window_s: float) -> TryEnd | Literal["go", "drop"]:
    """The confirm window before an action (:func:`confirm_window_s`): a command in it runs first.

    ``go``: carry out the planned action. ``drop``: a person paused or took over
    in the window and has given the phone back; the screen may have changed, so
    the planned action is dropped and the loop looks again. A :class:`TryEnd`
    when the command ended the try (stop).
    """
    copilot = trial.copilot
    if window_s <= 0 or copilot.control is None:
        return "go"
    command = copilot.control.wait(trial.run.request.run_id, window_s, copilot.driver.serial)
    if command is None:
        return "go"
    end = obey(trial, command, copilot.driver.observe())
    if end is not None:
        return end
    return "drop" if command.kind in (ControlKind.PAUSE, ControlKind.TAKE_OVER) else "go"


def _acknowledge(trial: SteeredTry, kind: ControlKind) -> None:
    control = trial.copilot.control
    if control is not None:
        control.acknowledge(trial.run.request.run_id, trial.copilot.driver.serial,
                            ControlAck(kind=kind, subtask_id=trial.run.subtask.id))


def _perceive(trial: SteeredTry, observation: DeviceObservation) -> Screen:
    return trial.copilot.perceiver.perceive(to_observation(observation, 0), use_ocr=False).screen


def _stopped(trial: SteeredTry) -> TryEnd:
    """Stopped by a person: never "completed", and never tried again; its captures are kept."""
    _acknowledge(trial, ControlKind.STOP)
    own = sum(1 for c in trial.run.captures if in_own_app(c))
    app = trial.run.subtask.app_label
    if own:
        return TryEnd(SubTaskStatus.STOPPED, f"stopped by a person after {own} page(s) of {app} "
                                             "were captured")
    return TryEnd(SubTaskStatus.STOPPED, f"stopped by a person before a page of {app} was captured")
