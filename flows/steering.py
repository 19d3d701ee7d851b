"""A person steers a run: pause it, take over one of its phones, give it back, answer a pause, stop.

One state per run (``flows:steer:<run_id>``), shared by the API and the CLI:

    auto      the copilot drives (or nothing runs on a phone right now)
    paused    the copilot's loop on one phone waits; the screen stays as it is
    takeover  a person drives one phone: a running loop handed it over ("loop"), or a sub-flow
              that paused for a person holds it ("pause", from the farm's pause queue)

    command      allowed when                               does                          -> state
    pause        a sub-task runs on a phone (auto)          PAUSE to that phone's loop       paused
    take_over    auto or paused with a loop                 TAKE_OVER to the loop            takeover
                 a sub-flow of the run waits for a person   claims its phone                 takeover
    resume       paused / takeover (loop)                   RESUME to the loop               auto
                 takeover (pause), or a waiting pause       the sub-flow continues           auto
    answer       a sub-flow waits (taken over or not)       continue or skip, with a note    auto
    save_screen  a loop runs on the phone                   SAVE_SCREEN to the loop          same
    stop         until the run has finished                 stop flag, STOP to every loop,   auto
                                                            skip every waiting sub-flow

Anything else raises :class:`~flows.errors.SteeringConflict` saying why (the API answers
409). While a person steers, the state belongs to them (their actor name): others may
only stop the run. Input to a phone (:meth:`Steering.check_input`) is allowed only in
``takeover``, to the person who took it over, once the phone is really theirs: the loop
acknowledged (``tasks.control``) or the sub-flow waits. A state whose loop has gone on,
whose pause was answered elsewhere (CLI, Prefect UI) or timed out, reads as ``auto``.
Every command is a ``control`` event on the run's stream, with who and when.

A run may use several phones at once (one per app): the state lists each with its
app and sub-task (``work``, :mod:`flows.run_phones`), and a command for one phone
names it (``serial``); with several phones running and none named it is refused,
saying which phones there are. One phone of a run is steered at a time.
A person's page that shows the run calls :meth:`Steering.watch` as it polls: the
confirm window before each planned action waits only while someone watches.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from enum import StrEnum
from typing import Literal

import redis
from pydantic import Field, ValidationError

from core.models import Frozen, RunEvent, RunEventKind, RunManifest, RunStatus, utcnow
from device_farm.models import DeviceState
from device_farm.registry import DeviceRegistry
from flows.errors import RunNotPausedError, RunOrphanedError, SteeringConflict
from flows.keys import steer_key, steer_lock_key, takeover_key
from flows.pause_queue import PauseEntry, PauseQueue
from flows.prefect_states import mirror_phone_pause
from flows.run_phones import PhoneDoing, PhoneWork, describe_phones, shown_status
from flows.stop import request_stop
from storage import ManifestStore
from tasks.control import ControlCommand, ControlKind, RedisControlChannel
from tasks.navigate import EventSink

__all__ = [
    "WATCH_TTL_S",
    "PhoneDoing",
    "PhoneWork",
    "Resumer",
    "SteerAction",
    "SteerMode",
    "SteerRequest",
    "SteerSource",
    "Steered",
    "Steering",
    "SteeringState",
]

SERIAL_PATTERN = r"^[A-Za-z0-9._:\-]{1,64}$"
_FINISHED = frozenset({RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.STOPPED})
_STATE_TTL_S = 24 * 3600
WATCH_TTL_S = 10  # a page polls every 2 s: a run is "watched" until 10 s after the last poll

# resume_run's shape: (run_id, action, note, app) -> names of the sub-flows resumed.
Resumer = Callable[[str, Literal["continue", "skip"], str, str | None], list[str]]


class SteerMode(StrEnum):
    AUTO = "auto"
    PAUSED = "paused"
    TAKEOVER = "takeover"


class SteerSource(StrEnum):
    LOOP = "loop"  # the copilot's loop on the phone waits for the person
    PAUSE = "pause"  # the sub-flow paused for a person and holds the phone; no loop runs


class SteerAction(StrEnum):
    PAUSE = "pause"
    TAKE_OVER = "take_over"
    RESUME = "resume"  # back to auto
    SAVE_SCREEN = "save_screen"
    STOP = "stop"  # stop and report with what was captured
    ANSWER = "answer"  # answer a sub-flow waiting for a person: continue or skip


class SteerRequest(Frozen):
    """One command of a person."""

    action: SteerAction
    serial: str | None = Field(default=None, pattern=SERIAL_PATTERN)  # which phone, if several
    answer: Literal["continue", "skip"] = "continue"  # for ``answer``
    note: str = Field(default="", max_length=500)


class Steered(Frozen):
    """What is stored while a person steers a run (absent = auto)."""

    run_id: str = ""
    mode: SteerMode
    serial: str
    source: SteerSource
    actor: str
    since: datetime  # when the person first stopped the copilot on this phone
    subtask_id: str | None = None
    flow_run_id: str | None = None  # source pause: the waiting sub-flow
    app_label: str = ""


class SteeringState(Frozen):
    """How a run is steered now, and what could be steered."""

    run_id: str
    mode: SteerMode = SteerMode.AUTO
    serial: str | None = None
    source: SteerSource | None = None
    actor: str = ""
    since: datetime | None = None
    subtask_id: str | None = None
    app_label: str = ""
    ready: bool = False  # the person may drive the phone now
    finished: bool = False
    # The run's status as a person should see it: ``paused`` while any phone waits for a
    # person or is steered by one (the manifest's own status never hears of a loop's pause).
    status: RunStatus = RunStatus.PENDING
    phones: tuple[str, ...] = ()  # phones running one of the run's sub-tasks now
    waiting: tuple[PauseEntry, ...] = ()  # the run's sub-flows waiting for a person
    work: tuple[PhoneWork, ...] = ()  # every phone of the run now: its app, sub-task, what it does


class Steering:
    """Carries out people's commands on runs and answers who may drive which phone."""

    def __init__(self, client: redis.Redis[bytes], registry: DeviceRegistry,
                 manifests: ManifestStore, events: EventSink, resume: Resumer) -> None:
        self._redis = client
        self._registry = registry
        self._manifests = manifests
        self._events = events
        self._resume = resume
        self._channel = RedisControlChannel(client)
        self._pauses = PauseQueue(client)

    # ------------------------------------------------------------------ reading

    def state(self, run_id: str) -> SteeringState:
        """The run's steering state now (a stale one is cleared and reads as auto).

        Raises ``ManifestError`` for a run that does not exist.
        """
        manifest = self._manifests.read(run_id)
        phones = self._loop_phones(run_id)
        waiting = tuple(self._pauses.for_run(run_id))
        base = SteeringState(run_id=run_id, status=manifest.status,
                             finished=manifest.status in _FINISHED, phones=phones, waiting=waiting)
        steered = self._load(run_id)
        held = self._still_steered(run_id, steered, waiting) if steered is not None else None
        if steered is not None and (held is None or base.finished):
            self._clear(run_id, steered)
        if steered is None or held is None or base.finished:
            return self._with_work(base, manifest, None)
        ready, subtask_id = held
        state = base.model_copy(update={
            "mode": steered.mode, "serial": steered.serial, "source": steered.source,
            "actor": steered.actor, "since": steered.since, "subtask_id": subtask_id,
            "app_label": steered.app_label, "ready": ready and steered.mode is SteerMode.TAKEOVER})
        return self._with_work(state, manifest, steered)

    def _with_work(self, state: SteeringState, manifest: RunManifest,
                   steered: Steered | None) -> SteeringState:
        """``state`` with each phone's app and sub-task, and the status a person should see."""
        loops = state.phones
        doing = None
        if steered is not None:
            doing = (steered.serial, PhoneDoing.TAKEN_OVER if steered.mode is SteerMode.TAKEOVER
                     else PhoneDoing.PAUSED)
            if steered.source is SteerSource.LOOP and steered.serial not in loops:
                # Still the run's (its lease says so) though its record reads otherwise for a
                # moment (a late heartbeat shows a phone offline): a person steers it, so list it.
                loops = (*loops, steered.serial)
        announced = self._channel.announced(state.run_id, loops)
        work = describe_phones(manifest, loops, announced, state.waiting, doing)
        app_label = state.app_label or next(
            (w.app_label for w in work if w.serial == state.serial), "")
        return state.model_copy(update={"work": work, "app_label": app_label,
                                         "status": shown_status(manifest.status, work)})

    def watch(self, run_id: str) -> None:
        """A person's page shows the run now: planned actions wait the confirm window."""
        self._channel.mark_watched(run_id, WATCH_TTL_S)

    def check_input(self, serial: str, actor: str) -> Steered:
        """How ``actor`` drives ``serial`` now (for each input: a few Redis reads, no more);
        SteeringConflict when they may not."""
        raw = self._redis.get(takeover_key(serial))
        refused = SteeringConflict(
            f"phone {serial} is not taken over, so it takes no input",
            hint="take it over first: the run's page, or the pause queue on the farm page")
        run_id = raw.decode() if raw is not None else None
        steered = self._load(run_id) if run_id is not None else None
        if run_id is None or steered is None or steered.mode is not SteerMode.TAKEOVER \
                or steered.serial != serial:
            raise refused
        waiting = self._pauses.for_run(run_id) if steered.source is SteerSource.PAUSE else []
        held = self._still_steered(run_id, steered, waiting)
        if held is None:
            raise refused
        if steered.actor != actor:
            raise SteeringConflict(f"phone {serial} is being driven by {steered.actor}",
                                   hint="only the person who took it over can drive it")
        ready, subtask_id = held
        if not ready:
            raise SteeringConflict(f"the copilot has not handed phone {serial} over yet",
                                   hint="it does between two steps; try again in a moment")
        return steered.model_copy(update={"subtask_id": subtask_id})

    # ------------------------------------------------------------------ commands

    def apply(self, run_id: str, request: SteerRequest, actor: str) -> SteeringState:
        """Carry out ``request`` for ``actor``; the new state, or SteeringConflict saying why."""
        with self._redis.lock(steer_lock_key(run_id), timeout=30, blocking_timeout=10):
            state = self.state(run_id)
            if state.finished:
                raise SteeringConflict(f"run {run_id} has finished ({state.status.value})",
                                       hint="its report is on its page")
            if (state.mode is not SteerMode.AUTO and state.actor != actor
                    and request.action is not SteerAction.STOP):
                raise SteeringConflict(
                    f"{state.actor} steers run {run_id} now ({state.mode.value} on {state.serial})",
                    hint="only they can change it; anyone may stop the run")
            message = self._carry_out(state, request, actor)
            after = self.state(run_id)
            serial = request.serial or after.serial or state.serial or _only(state.phones) or (
                state.waiting[0].serial if state.waiting else None)
            self._publish(run_id, message, actor, state.subtask_id, serial)
            self._show_in_prefect(state, after, message)
            return after

    def _show_in_prefect(self, before: SteeringState, after: SteeringState, why: str) -> None:
        """A phone's copilot paused by a person shows as its sub-flow Paused (flows.prefect_states)."""
        if after.source is SteerSource.LOOP and after.serial and before.mode is SteerMode.AUTO:
            mirror_phone_pause(self._registry, self._manifests, after.run_id, after.serial,
                               paused=True, why=why)
        elif before.source is SteerSource.LOOP and before.serial and after.mode is SteerMode.AUTO:
            mirror_phone_pause(self._registry, self._manifests, after.run_id, before.serial,
                               paused=False, why=why)

    def _carry_out(self, state: SteeringState, request: SteerRequest, actor: str) -> str:
        match request.action:
            case SteerAction.PAUSE:
                return self._pause(state, request, actor)
            case SteerAction.TAKE_OVER:
                return self._take_over(state, request, actor)
            case SteerAction.RESUME:
                return self._back_to_auto(state, request)
            case SteerAction.ANSWER:
                return self._answer(state, request)
            case SteerAction.SAVE_SCREEN:
                return self._save_screen(state, request, actor)
            case SteerAction.STOP:
                return self._stop(state, actor)

    def _pause(self, state: SteeringState, request: SteerRequest, actor: str) -> str:
        if state.mode is not SteerMode.AUTO:
            raise SteeringConflict(f"run {state.run_id} is already {_mode_words(state)}",
                                   hint="go back to auto first, or take the phone over")
        serial = self._pick_loop_phone(state, request.serial)
        self._send(state.run_id, serial, ControlKind.PAUSE, actor, request.note)
        self._save(state.run_id, Steered(mode=SteerMode.PAUSED, serial=serial,
                                         source=SteerSource.LOOP, actor=actor, since=utcnow()))
        return f"paused the copilot on {serial}"

    def _take_over(self, state: SteeringState, request: SteerRequest, actor: str) -> str:
        if state.mode is SteerMode.TAKEOVER:
            if request.serial in (None, state.serial):
                return f"still driving {state.serial}"
            raise SteeringConflict(f"{state.serial} is taken over already; give it back first")
        if state.mode is SteerMode.PAUSED and state.serial is not None:
            serial = state.serial
            if request.serial not in (None, serial):
                raise SteeringConflict(f"the copilot is paused on {serial}, not {request.serial}")
            self._send(state.run_id, serial, ControlKind.TAKE_OVER, actor, request.note)
            stored = self._load(state.run_id)
            self._claim(state.run_id, serial)
            self._save(state.run_id, Steered(
                mode=SteerMode.TAKEOVER, serial=serial, source=SteerSource.LOOP, actor=actor,
                since=stored.since if stored is not None else utcnow()))
            return f"took over {serial}"
        entry = _pick_pause(state.waiting, request.serial)
        if entry is not None:
            self._claim(state.run_id, entry.serial)
            self._save(state.run_id, Steered(
                mode=SteerMode.TAKEOVER, serial=entry.serial, source=SteerSource.PAUSE,
                actor=actor, since=utcnow(), subtask_id=entry.subtask_id,
                flow_run_id=entry.flow_run_id, app_label=entry.app_label))
            return f"took over {entry.serial} ({entry.app_label} waits for a person: {entry.reason})"
        serial = self._pick_loop_phone(state, request.serial)
        self._send(state.run_id, serial, ControlKind.TAKE_OVER, actor, request.note)
        self._claim(state.run_id, serial)
        self._save(state.run_id, Steered(mode=SteerMode.TAKEOVER, serial=serial,
                                         source=SteerSource.LOOP, actor=actor, since=utcnow()))
        return f"took over {serial}"

    def _back_to_auto(self, state: SteeringState, request: SteerRequest) -> str:
        if state.mode is not SteerMode.AUTO and state.source is SteerSource.LOOP and state.serial:
            self._send(state.run_id, state.serial, ControlKind.RESUME, state.actor, request.note)
            self._clear_run(state.run_id)
            return f"back to auto on {state.serial}"
        if state.mode is SteerMode.TAKEOVER or state.waiting:
            return self._answer(state, request.model_copy(update={"answer": "continue"}))
        raise SteeringConflict(f"nothing of run {state.run_id} waits: the copilot is driving",
                               hint="pause or take over first")

    def _answer(self, state: SteeringState, request: SteerRequest) -> str:
        if state.mode is SteerMode.TAKEOVER and state.source is SteerSource.LOOP:
            raise SteeringConflict("the copilot paused for you, not for an answer",
                                   hint="go back to auto to let it go on, or stop the run")
        serial = state.serial if state.source is SteerSource.PAUSE else request.serial
        entry = _pick_pause(state.waiting, serial)
        if entry is None:
            raise SteeringConflict(f"nothing of run {state.run_id} waits for a person")
        try:
            self._resume(state.run_id, request.answer, request.note, entry.app_label)
        except (RunNotPausedError, RunOrphanedError) as exc:
            self._clear_run(state.run_id)
            raise SteeringConflict(str(exc), hint=exc.hint) from exc
        # Answered: out of the queue now (the flow, resuming a moment later, finds it gone).
        self._pauses.close(entry.flow_run_id, request.answer)
        self._clear_run(state.run_id)
        verb = "continued" if request.answer == "continue" else "skipped"
        return f"{verb} {entry.app_label} on {entry.serial}" + (
            f" ({request.note})" if request.note else "")

    def _save_screen(self, state: SteeringState, request: SteerRequest, actor: str) -> str:
        steered = state.serial if state.mode is not SteerMode.AUTO else None
        if steered is not None and request.serial in (None, steered):
            if state.source is SteerSource.PAUSE:
                raise SteeringConflict(
                    f"no copilot runs on {steered} while its sub-flow waits for you",
                    hint="continue first; the copilot captures the page it ends on")
            serial = steered
        else:
            serial = self._pick_loop_phone(state, request.serial)
        self._send(state.run_id, serial, ControlKind.SAVE_SCREEN, actor, request.note)
        return f"asked to save the screen of {serial}"

    def _stop(self, state: SteeringState, actor: str) -> str:
        request_stop(self._redis, state.run_id)
        for serial in state.phones:
            self._send(state.run_id, serial, ControlKind.STOP, actor, "")
        skipped = []
        for entry in state.waiting:
            try:
                self._resume(state.run_id, "skip", "stopped by a person", entry.app_label)
            except (RunNotPausedError, RunOrphanedError):
                continue  # answered or gone meanwhile: nothing to skip
            self._pauses.close(entry.flow_run_id, "skip")
            skipped.append(entry.app_label)
        self._clear_run(state.run_id)
        return "asked to stop and report" + (f" (skipped {', '.join(skipped)})" if skipped else "")

    # ------------------------------------------------------------------ helpers

    def _loop_phones(self, run_id: str) -> tuple[str, ...]:
        """Phones whose worker runs a sub-task of ``run_id`` now."""
        return tuple(s.info.serial for s in self._registry.statuses()
                     if s.lease_run == run_id and s.state is DeviceState.LEASED)

    def _pick_loop_phone(self, state: SteeringState, serial: str | None) -> str:
        if serial is not None:
            if serial in state.phones:
                return serial
            raise SteeringConflict(f"no sub-task of run {state.run_id} runs on {serial} now",
                                   hint=_phones_hint(state))
        if len(state.phones) == 1:
            return state.phones[0]
        if state.phones:
            raise SteeringConflict(f"run {state.run_id} runs on {', '.join(state.phones)}: "
                                   "say which phone", hint="pass serial")
        if state.waiting:
            raise SteeringConflict(
                f"{state.waiting[0].app_label} of run {state.run_id} waits for a person already",
                hint="take its phone over, or answer it (continue / skip)")
        raise SteeringConflict(f"no sub-task of run {state.run_id} is on a phone right now",
                               hint="it is planning or writing its report; try again in a moment")

    def _still_steered(self, run_id: str, steered: Steered,
                       waiting: Sequence[PauseEntry]) -> tuple[bool, str | None] | None:
        """None when the stored state no longer holds; else whether the phone is the person's
        now, and the sub-task it runs (what the person's screens are recorded under)."""
        if steered.source is SteerSource.PAUSE:
            if any(e.flow_run_id == steered.flow_run_id for e in waiting):
                return True, steered.subtask_id
            return None
        if self._registry.leases.holder(steered.serial) != run_id:
            return None  # the run let go of the phone (finished, failed, worker gone)
        ack = self._channel.read_ack(run_id, steered.serial)
        if ack is None or datetime.fromisoformat(ack.at) < steered.since:
            return False, steered.subtask_id  # the loop has not seen the command yet
        if not ack.waiting:
            return None  # it went on by itself (timed out, stopped)
        return True, ack.subtask_id

    def _send(self, run_id: str, serial: str, kind: ControlKind, actor: str, note: str) -> None:
        self._channel.send(run_id, ControlCommand(kind=kind, serial=serial, actor=actor, note=note))

    def _load(self, run_id: str) -> Steered | None:
        raw = self._redis.get(steer_key(run_id))
        if raw is None:
            return None
        try:
            return Steered.model_validate_json(raw)
        except ValidationError:
            return None

    def _save(self, run_id: str, steered: Steered) -> None:
        stored = steered.model_copy(update={"run_id": run_id})
        self._redis.set(steer_key(run_id), stored.model_dump_json(), ex=_STATE_TTL_S)

    def _claim(self, run_id: str, serial: str) -> None:
        """Mark ``serial`` as driven by a person of ``run_id`` (the key input checks read)."""
        holder = self._redis.get(takeover_key(serial))
        if holder is not None and holder.decode() != run_id and self._load(holder.decode()):
            raise SteeringConflict(f"phone {serial} is driven by a person of run {holder.decode()}")
        self._redis.set(takeover_key(serial), run_id, ex=_STATE_TTL_S)

    def _clear(self, run_id: str, steered: Steered) -> None:
        pipe = self._redis.pipeline()
        pipe.delete(steer_key(run_id))
        pipe.execute()
        holder = self._redis.get(takeover_key(steered.serial))
        if holder is not None and holder.decode() == run_id:
            self._redis.delete(takeover_key(steered.serial))

    def _clear_run(self, run_id: str) -> None:
        steered = self._load(run_id)
        if steered is not None:
            self._clear(run_id, steered)

    def _publish(self, run_id: str, message: str, actor: str, subtask_id: str | None,
                 serial: str | None) -> None:
        self._events.publish(RunEvent(run_id=run_id, kind=RunEventKind.CONTROL, message=message,
                                      actor=actor, subtask_id=subtask_id, serial=serial))


def _only(phones: Sequence[str]) -> str | None:
    return phones[0] if len(phones) == 1 else None


def _pick_pause(waiting: Sequence[PauseEntry], serial: str | None) -> PauseEntry | None:
    if serial is not None:
        return next((e for e in waiting if e.serial == serial), None)
    return waiting[0] if waiting else None


def _mode_words(state: SteeringState) -> str:
    where = f" on {state.serial}" if state.serial else ""
    return {SteerMode.PAUSED: "paused", SteerMode.TAKEOVER: "taken over"}.get(
        state.mode, state.mode.value) + where


def _phones_hint(state: SteeringState) -> str:
    if state.phones:
        return f"it runs on {', '.join(state.phones)} now"
    return "none of its sub-tasks is on a phone right now"
