"""The steering state machine on a real Redis: what a person may do to a run, and what it sends.

No phones run here: the registry holds two phone records (one running a sub-task of the run,
one waiting in a paused sub-flow), the copilot's side is played by acknowledging on the control
channel as the loop does, and resuming a sub-flow is a recording double of ``resume_run``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

import pytest
import redis

from core.config import FarmSettings
from core.models import Plan, Query, RunEventKind, RunManifest, RunStatus, SubTask, new_id
from device_farm.models import DeviceInfo, DeviceState
from device_farm.registry import DeviceRegistry
from flows.errors import RunNotPausedError, SteeringConflict
from flows.keys import waiting_key
from flows.pause_queue import PauseEntry, PauseQueue
from flows.steering import (
    WATCH_TTL_S,
    PhoneDoing,
    SteerAction,
    Steering,
    SteeringState,
    SteerMode,
    SteerRequest,
    SteerSource,
)
from flows.stop import is_stop_requested
from storage import FakeObjectStore, ManifestStore, RunEventPublisher, RunEventReader
from tasks.control import ControlAck, ControlKind, RedisControlChannel
from tests.support.farm import own_database

pytestmark = pytest.mark.services

LOOP, HELD = "phone-loop", "phone-held"


@dataclass
class ResumeRecorder:
    """Stands in for ``flows.pauses.resume_run``: keeps each call; can say nothing waits."""

    calls: list[tuple[str, str, str, str | None]] = field(default_factory=list)
    nothing_waits: bool = False

    def __call__(self, run_id: str, action: Literal["continue", "skip"], note: str,
                 app: str | None) -> list[str]:
        if self.nothing_waits:
            raise RunNotPausedError(f"nothing of run {run_id} waits for a person")
        self.calls.append((run_id, action, note, app))
        return [f"{app} · {run_id}"]


@dataclass
class Rig:
    steering: Steering
    client: redis.Redis[bytes]
    registry: DeviceRegistry
    manifests: ManifestStore
    resume: ResumeRecorder
    run_id: str
    channel: RedisControlChannel

    def loop_acknowledges(self, kind: ControlKind) -> None:
        self.channel.acknowledge(self.run_id, LOOP, ControlAck(kind=kind, subtask_id="app-1"))

    def sent(self, serial: str) -> list[ControlKind]:
        kinds = []
        while (command := self.channel.poll(self.run_id, serial)) is not None:
            kinds.append(command.kind)
        return kinds

    def wait_in_a_paused_subflow(self) -> PauseEntry:
        entry = PauseEntry(flow_run_id=new_id("flow"), run_id=self.run_id, subtask_id="mail-1",
                           app_label="Gmail", package="com.google.android.gm", serial=HELD,
                           reason="a password field is on the screen", question="q")
        self.client.set(waiting_key(entry.flow_run_id), self.run_id, ex=60)
        PauseQueue(self.client).open(entry)
        return entry


STEERING_DB = 7


@pytest.fixture()
def rig(redis_url: str) -> Iterator[Rig]:
    # Its own database: the package's flow farm has workers on db 0, and flushing that under
    # them wiped their registrations and heartbeats (the next farm test found no phone online).
    client = redis.Redis.from_url(own_database(redis_url, STEERING_DB))
    client.flushdb()
    registry = DeviceRegistry(client, FarmSettings())
    store = FakeObjectStore()
    manifests = ManifestStore(store)
    run_id = new_id("run")
    manifests.write(RunManifest(run_id=run_id, query=Query(text="q"), status=RunStatus.RUNNING))
    for serial, state in ((LOOP, DeviceState.LEASED), (HELD, DeviceState.PAUSED_FOR_USER)):
        registry.register(DeviceInfo(serial=serial, width=1080, height=2340), worker=f"w-{serial}")
        registry.set_state(serial, state)
        assert registry.leases.acquire(serial, run_id)
    resume = ResumeRecorder()
    steering = Steering(client, registry, manifests, RunEventPublisher(client, store), resume)
    try:
        yield Rig(steering, client, registry, manifests, resume, run_id, RedisControlChannel(client))
    finally:
        client.close()


def _do(rig: Rig, action: SteerAction, actor: str = "browser a", **fields: object) -> SteeringState:
    return rig.steering.apply(rig.run_id, SteerRequest.model_validate({"action": action, **fields}),
                              actor)


def test_pause_take_over_and_back_to_auto_on_a_running_loop(rig: Rig) -> None:
    paused = rig.steering.apply(rig.run_id, SteerRequest(action=SteerAction.PAUSE), "browser a")
    assert (paused.mode, paused.serial, paused.source) == (SteerMode.PAUSED, LOOP, SteerSource.LOOP)
    assert rig.sent(LOOP) == [ControlKind.PAUSE] and rig.sent(HELD) == []
    rig.loop_acknowledges(ControlKind.PAUSE)
    taken = _do(rig, SteerAction.TAKE_OVER)
    assert rig.sent(LOOP) == [ControlKind.TAKE_OVER]
    assert taken.mode is SteerMode.TAKEOVER and taken.ready
    driving = rig.steering.check_input(LOOP, "browser a")
    assert (driving.run_id, driving.subtask_id) == (rig.run_id, "app-1")  # from the loop's word
    with pytest.raises(SteeringConflict, match="being driven by browser a"):
        rig.steering.check_input(LOOP, "browser b")
    with pytest.raises(SteeringConflict, match="browser a steers run"):
        _do(rig, SteerAction.RESUME, "browser b")
    back = _do(rig, SteerAction.RESUME)
    assert rig.sent(LOOP) == [ControlKind.RESUME] and back.mode is SteerMode.AUTO
    with pytest.raises(SteeringConflict, match="is not taken over"):
        rig.steering.check_input(LOOP, "browser a")
    events = RunEventReader(rig.client).read_after(rig.run_id)
    assert [(e.kind, e.actor) for e in events] == [(RunEventKind.CONTROL, "browser a")] * 3
    assert [e.message for e in events] == [f"paused the copilot on {LOOP}", f"took over {LOOP}",
                                          f"back to auto on {LOOP}"]


def test_input_waits_until_the_loop_has_handed_the_phone_over(rig: Rig) -> None:
    _do(rig, SteerAction.TAKE_OVER, serial=LOOP)
    with pytest.raises(SteeringConflict, match="has not handed phone"):
        rig.steering.check_input(LOOP, "browser a")
    rig.loop_acknowledges(ControlKind.TAKE_OVER)
    assert rig.steering.check_input(LOOP, "browser a").serial == LOOP


def test_a_loop_that_went_on_by_itself_reads_as_auto(rig: Rig) -> None:
    _do(rig, SteerAction.PAUSE)
    rig.loop_acknowledges(ControlKind.PAUSE)
    rig.loop_acknowledges(ControlKind.STOP)  # its pause timed out
    assert rig.steering.state(rig.run_id).mode is SteerMode.AUTO
    _do(rig, SteerAction.PAUSE)  # a new pause is possible again
    rig.registry.leases.release(LOOP, rig.run_id)  # the sub-task finished and let go
    assert rig.steering.state(rig.run_id).mode is SteerMode.AUTO


def test_a_waiting_subflow_is_taken_over_and_answered(rig: Rig) -> None:
    entry = rig.wait_in_a_paused_subflow()
    rig.registry.set_state(LOOP, DeviceState.IDLE)  # no loop now: only the paused sub-flow
    with pytest.raises(SteeringConflict, match=r"Gmail of run .* waits for a person already"):
        _do(rig, SteerAction.PAUSE)
    taken = rig.steering.apply(rig.run_id, SteerRequest(action=SteerAction.TAKE_OVER), "browser a")
    assert (taken.mode, taken.source, taken.serial, taken.ready) == (
        SteerMode.TAKEOVER, SteerSource.PAUSE, HELD, True)
    assert taken.subtask_id == "mail-1" and rig.sent(HELD) == []  # nothing runs there to tell
    with pytest.raises(SteeringConflict, match="no copilot runs on"):
        _do(rig, SteerAction.SAVE_SCREEN)
    answered = _do(rig, SteerAction.ANSWER, answer="skip", note="no account")
    assert rig.resume.calls == [(rig.run_id, "skip", "no account", "Gmail")]
    assert answered.mode is SteerMode.AUTO and not answered.waiting
    closed = PauseQueue(rig.client).read_events("0-0")
    assert [(e.kind, e.outcome) for e in closed] == [("opened", ""), ("closed", "skip")]
    assert closed[0].entry.flow_run_id == entry.flow_run_id


def test_a_pause_answered_elsewhere_is_a_conflict_not_a_crash(rig: Rig) -> None:
    entry = rig.wait_in_a_paused_subflow()
    rig.resume.nothing_waits = True  # the CLI or the Prefect UI answered it a moment ago
    with pytest.raises(SteeringConflict, match=r"nothing of run .* waits for a person"):
        _do(rig, SteerAction.ANSWER)
    PauseQueue(rig.client).close(entry.flow_run_id, "continue")  # as the resumed flow does
    with pytest.raises(SteeringConflict, match=r"nothing of run .* waits: the copilot is driving"):
        _do(rig, SteerAction.RESUME, serial=LOOP)
    assert rig.steering.state(rig.run_id).mode is SteerMode.AUTO


def test_anyone_may_stop_a_run_and_every_part_of_it_hears(rig: Rig) -> None:
    rig.wait_in_a_paused_subflow()
    _do(rig, SteerAction.PAUSE, serial=LOOP)
    stopped = _do(rig, SteerAction.STOP, "api token")
    assert is_stop_requested(rig.client, rig.run_id)
    assert rig.sent(LOOP) == [ControlKind.PAUSE, ControlKind.STOP]
    assert rig.resume.calls == [(rig.run_id, "skip", "stopped by a person", "Gmail")]
    assert stopped.mode is SteerMode.AUTO


def test_a_finished_run_takes_no_command(rig: Rig) -> None:
    rig.manifests.update(rig.run_id, lambda m: m.model_copy(update={"status": RunStatus.COMPLETED}))
    for action in SteerAction:
        with pytest.raises(SteeringConflict, match="has finished"):
            _do(rig, action)


def test_with_two_phones_a_command_must_say_which(rig: Rig) -> None:
    rig.registry.set_state(HELD, DeviceState.LEASED)
    with pytest.raises(SteeringConflict, match="say which phone"):
        _do(rig, SteerAction.PAUSE)
    with pytest.raises(SteeringConflict, match=r"no sub-task of run .* runs on elsewhere"):
        _do(rig, SteerAction.PAUSE, serial="elsewhere")
    assert _do(rig, SteerAction.PAUSE, serial=HELD).serial == HELD
    assert rig.sent(HELD) == [ControlKind.PAUSE] and rig.sent(LOOP) == []


def _plan_two_apps(rig: Rig) -> None:
    plan = Plan(query=Query(text="q"), decomposer="rules", subtasks=(
        SubTask(id="app-1", app_label="Meituan", package="com.sankuai.meituan",
                goal="Find the price\nof the item", search_term="Big Mac"),
        SubTask(id="mail-1", app_label="Gmail", package="com.google.android.gm",
                goal="Read the latest email\nin the inbox")))
    rig.manifests.update(rig.run_id, lambda m: m.model_copy(update={"plan": plan}))


def test_each_phone_of_the_run_is_listed_with_its_app_and_subtask(rig: Rig) -> None:
    _plan_two_apps(rig)
    rig.registry.set_state(HELD, DeviceState.LEASED)
    unnamed = rig.steering.state(rig.run_id).work
    assert [(w.serial, w.doing, w.app_label) for w in unnamed] == [
        (HELD, PhoneDoing.ACTING, ""), (LOOP, PhoneDoing.ACTING, "")]  # the loops said nothing yet
    rig.channel.announce(rig.run_id, LOOP, "app-1")
    rig.channel.announce(rig.run_id, HELD, "mail-1")
    state = rig.steering.state(rig.run_id)
    assert state.status is RunStatus.RUNNING
    assert [(w.serial, w.app_label, w.package, w.task) for w in state.work] == [
        (HELD, "Gmail", "com.google.android.gm", "Read the latest email"),
        (LOOP, "Meituan", "com.sankuai.meituan", "Big Mac")]
    paused = _do(rig, SteerAction.PAUSE, serial=HELD)  # the second phone, by name
    assert rig.sent(HELD) == [ControlKind.PAUSE] and rig.sent(LOOP) == []
    assert paused.app_label == "Gmail" and paused.status is RunStatus.PAUSED
    assert {w.serial: w.doing for w in paused.work} == {HELD: PhoneDoing.PAUSED,
                                                         LOOP: PhoneDoing.ACTING}
    saved = _do(rig, SteerAction.SAVE_SCREEN, serial=LOOP)  # the other phone, still in auto
    assert rig.sent(LOOP) == [ControlKind.SAVE_SCREEN] and saved.serial == HELD
    _do(rig, SteerAction.SAVE_SCREEN)  # none named: the steered phone
    assert rig.sent(HELD) == [ControlKind.SAVE_SCREEN]


def test_the_status_a_person_sees_is_paused_while_anything_waits_for_them(rig: Rig) -> None:
    assert rig.steering.state(rig.run_id).status is RunStatus.RUNNING
    _do(rig, SteerAction.PAUSE, serial=LOOP)  # a person's pause: the manifest never hears of it
    assert rig.manifests.read(rig.run_id).status is RunStatus.RUNNING
    assert rig.steering.state(rig.run_id).status is RunStatus.PAUSED
    _do(rig, SteerAction.RESUME)
    assert rig.steering.state(rig.run_id).status is RunStatus.RUNNING
    entry = rig.wait_in_a_paused_subflow()  # a sub-flow waits on the other phone
    waiting = rig.steering.state(rig.run_id)
    assert waiting.status is RunStatus.PAUSED
    assert [(w.serial, w.doing, w.app_label) for w in waiting.work if w.serial == HELD] == [
        (HELD, PhoneDoing.WAITING, "Gmail")]
    # The pause was answered, the manifest still says paused (another sub-flow wrote last).
    PauseQueue(rig.client).close(entry.flow_run_id, "continue")
    rig.manifests.update(rig.run_id, lambda m: m.model_copy(update={"status": RunStatus.PAUSED}))
    assert rig.steering.state(rig.run_id).status is RunStatus.RUNNING  # nothing waits any more
    rig.manifests.update(rig.run_id, lambda m: m.model_copy(update={"status": RunStatus.STOPPED}))
    assert rig.steering.state(rig.run_id).status is RunStatus.STOPPED


def test_a_watching_page_marks_the_run_for_a_short_while(rig: Rig) -> None:
    assert not rig.channel.watched(rig.run_id)
    rig.steering.watch(rig.run_id)
    assert rig.channel.watched(rig.run_id)
    assert 0 < rig.client.ttl(f"runs:{rig.run_id}:watched") <= WATCH_TTL_S
