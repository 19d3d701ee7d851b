"""The loop and a person's commands, phone by phone: acknowledgements, the confirm window.

A run steered on one phone must not stop the loop on another; the loop says when it waits
(so a person's taps never race its own) and when it drives again; a pause inside the confirm
window drops the planned action instead of ending the try. The window waits only while a
person has the run's page open; the loop says which sub-task it runs on its phone.
"""

from __future__ import annotations

import threading
import time

from core.models import RunEventKind, new_id
from storage import RunEventReader
from tasks.control import ControlCommand, ControlKind, RedisControlChannel
from tasks.navigate import NavigateRequest, navigate_subtask
from tests.tasks.navigate.conftest import Rig
from tests.tasks.navigate.test_loop_sim import BIG_MAC


def _wait_for(reader: RunEventReader, run_id: str, kind: RunEventKind, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if any(e.kind is kind for e in reader.read_after(run_id)):
            return
        time.sleep(0.02)
    raise AssertionError(f"no {kind.value} event within {timeout_s} s")


def test_a_command_for_another_phone_does_not_reach_this_loop(rig: Rig) -> None:
    run_id = new_id("run")
    channel = rig.copilot.control
    assert isinstance(channel, RedisControlChannel)
    channel.send(run_id, ControlCommand(kind=ControlKind.STOP, serial="some-other-phone"))
    result = navigate_subtask(rig.copilot, NavigateRequest(run_id=run_id, subtask=BIG_MAC))
    assert result.status.value == "completed" and not result.reason.startswith("stopped by a person")
    assert channel.poll(run_id, "some-other-phone") is not None  # still there, for that phone


def test_the_loop_acknowledges_and_a_pause_in_the_confirm_window_drops_the_action(rig: Rig) -> None:
    rig.copilot.budgets = rig.copilot.budgets.model_copy(update={"confirm_window_s": 1.0})
    run_id = new_id("run")
    channel = rig.copilot.control
    assert isinstance(channel, RedisControlChannel)
    serial = rig.copilot.driver.serial
    reader = RunEventReader(rig.redis)
    acks: list[str] = []
    channel.mark_watched(run_id, 120)  # a person has the run's page open

    def person() -> None:
        _wait_for(reader, run_id, RunEventKind.PREVIEW, 60)  # an action is announced: stop it
        channel.send(run_id, ControlCommand(kind=ControlKind.PAUSE, serial=serial, actor="browser a"))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            ack = channel.read_ack(run_id, serial)
            if ack is not None and ack.waiting:
                acks.append(ack.kind.value)
                break
            time.sleep(0.02)
        channel.send(run_id, ControlCommand(kind=ControlKind.RESUME, serial=serial))

    helper = threading.Thread(target=person, daemon=True)
    helper.start()
    result = navigate_subtask(rig.copilot, NavigateRequest(run_id=run_id, subtask=BIG_MAC))
    helper.join(10)
    assert acks == ["pause"], "the loop said it waits before the person went on"
    final = channel.read_ack(run_id, serial)
    assert final is not None and final.kind is ControlKind.RESUME and final.subtask_id == BIG_MAC.id
    assert result.status.value == "completed", result.reason
    events = reader.read_after(run_id)
    logs = [e.message for e in events if e.kind is RunEventKind.LOG]
    assert any("not done, a person steered the phone during the confirm window" in m for m in logs)
    previews = [e for e in events if e.kind is RunEventKind.PREVIEW]
    assert previews[0].preview is not None and previews[0].preview.window_s == 1.0
    assert [e.message for e in events if e.kind is RunEventKind.NEEDS_USER] == ["paused by a person"]
    assert sum(s.intervention for s in result.trace.steps) == 1  # the step after the pause


def test_nobody_watching_means_no_confirm_window_and_the_loop_says_what_it_runs(rig: Rig) -> None:
    assert rig.copilot.budgets.confirm_window_s > 0  # the preview is on by default
    run_id = new_id("run")
    channel = rig.copilot.control
    assert isinstance(channel, RedisControlChannel)
    serial = rig.copilot.driver.serial
    result = navigate_subtask(rig.copilot, NavigateRequest(run_id=run_id, subtask=BIG_MAC))
    assert result.status.value == "completed", result.reason
    previews = [e.preview for e in RunEventReader(rig.redis).read_after(run_id)
                if e.kind is RunEventKind.PREVIEW and e.preview is not None]
    assert previews and all(p.window_s == 0.0 for p in previews)  # nobody could have stopped them
    assert channel.announced(run_id, [serial, "some-other-phone"]) == {serial: BIG_MAC.id}
