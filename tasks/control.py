"""The control channel: a person steers a running sub-task (pause, take over, resume, save, stop).

The API and the CLI send commands; the navigation loop polls between steps
and, while paused or taken over, blocks until ``resume`` or ``stop``. Commands
are Redis lists: one per run (``runs:<run_id>:control``, read by whichever of
the run's loops polls first) and one per run and phone
(``runs:<run_id>:control:<serial>``, read only by the loop on that phone, so a
run with two apps on two phones can be steered phone by phone). ``RPUSH`` to
send, ``LPOP`` to poll, ``BLPOP`` to wait (the phone's list first), so a
command sent while no loop listens waits for the next one and none is lost or
read twice.

The loop answers with an acknowledgement per phone
(``runs:<run_id>:control:<serial>:ack``): it now waits for a person (pause,
take over), drives again (resume), or stopped. Whoever lets a person drive the
phone (the API's takeover) waits for that answer first, so a person's taps
never race the copilot's.

Two small marks help the person's page: the loop says which sub-task it runs on
its phone (``announce``), so the page labels each phone with its app; and the
run's page, while open, marks the run as watched (``mark_watched``): the
confirm window before each action waits only while a person watches, so a run
nobody looks at (the CLI, a subscription, a benchmark) is not slowed by it.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Protocol

import redis
from pydantic import BaseModel, ConfigDict, ValidationError

from core.models import utcnow
from tasks.errors import ControlChannelError
from tasks.keys import control_ack_key, control_key, loop_subtask_key, watched_key

__all__ = [
    "ControlAck",
    "ControlChannel",
    "ControlCommand",
    "ControlKind",
    "RedisControlChannel",
]


class ControlKind(StrEnum):
    PAUSE = "pause"  # stop acting; the screen stays as it is
    TAKE_OVER = "take_over"  # the person drives the phone; the loop only waits
    RESUME = "resume"  # back to automatic: re-observe, re-evaluate
    SAVE_SCREEN = "save_screen"  # capture this page now (source: user)
    STOP = "stop"  # end the sub-task and report with what is there


class ControlCommand(BaseModel):
    """One command from a person, as sent on the channel."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: ControlKind
    subtask_id: str | None = None  # None = whichever sub-task of the run is running
    serial: str | None = None  # the phone whose loop it is for; None = any loop of the run
    note: str = ""
    actor: str = ""  # who sent it ("browser 3f2a", "api token", "cli")
    sent_at: str = ""


class ControlAck(BaseModel):
    """What the loop on one phone is doing about a person's commands."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # PAUSE / TAKE_OVER: it waits for the person; RESUME: it drives again; STOP: it stopped.
    kind: ControlKind
    subtask_id: str
    at: str = ""

    @property
    def waiting(self) -> bool:
        """Whether the loop waits for the person (so the person may drive the phone)."""
        return self.kind in (ControlKind.PAUSE, ControlKind.TAKE_OVER)


class ControlChannel(Protocol):
    """Where the loop reads a person's commands."""

    def send(self, run_id: str, command: ControlCommand) -> None:
        """Queue ``command`` for the run's loop."""
        ...

    def poll(self, run_id: str, serial: str | None = None) -> ControlCommand | None:
        """The oldest pending command (for ``serial``'s loop first), or None at once."""
        ...

    def wait(self, run_id: str, timeout_s: float,
             serial: str | None = None) -> ControlCommand | None:
        """The next command, waiting up to ``timeout_s`` seconds (None when none came)."""
        ...

    def acknowledge(self, run_id: str, serial: str, ack: ControlAck) -> None:
        """Say what the loop on ``serial`` now does about the person's commands."""
        ...

    def announce(self, run_id: str, serial: str, subtask_id: str) -> None:
        """Say that the run's loop on ``serial`` now runs ``subtask_id``."""
        ...

    def watched(self, run_id: str) -> bool:
        """Whether a person has the run's page open now."""
        ...


class RedisControlChannel:
    """The control channel on a Redis list per run."""

    def __init__(self, client: redis.Redis[bytes], *, ttl_s: int = 24 * 3600) -> None:
        self._client = client
        self._ttl_s = ttl_s

    def send(self, run_id: str, command: ControlCommand) -> None:
        """``RPUSH`` the command (stamped with the time it was sent) to its phone's or the run's list."""
        stamped = command if command.sent_at else command.model_copy(
            update={"sent_at": utcnow().isoformat()}
        )
        key = control_key(run_id, command.serial)
        try:
            pipe = self._client.pipeline()
            pipe.rpush(key, stamped.model_dump_json())
            pipe.expire(key, self._ttl_s)
            pipe.execute()
        except redis.RedisError as exc:
            raise ControlChannelError(f"cannot send {command.kind} to run {run_id}: {exc}") from exc

    def poll(self, run_id: str, serial: str | None = None) -> ControlCommand | None:
        """``LPOP``: the oldest pending command for the phone, else for the run, or None."""
        try:
            for key in _keys(run_id, serial):
                raw = self._client.lpop(key)
                if raw is not None:
                    return _decode(raw, run_id)
        except redis.RedisError as exc:
            raise ControlChannelError(f"cannot read commands of run {run_id}: {exc}") from exc
        return None

    def wait(self, run_id: str, timeout_s: float,
             serial: str | None = None) -> ControlCommand | None:
        """``BLPOP`` on the phone's then the run's list, with a timeout (fractions allowed)."""
        try:
            found = self._client.blpop(_keys(run_id, serial), timeout=max(timeout_s, 0.01))
        except redis.RedisError as exc:
            raise ControlChannelError(f"cannot wait for commands of run {run_id}: {exc}") from exc
        return _decode(found[1] if found else None, run_id)

    def acknowledge(self, run_id: str, serial: str, ack: ControlAck) -> None:
        """Record what the loop on ``serial`` does now (kept a day, like the commands)."""
        stamped = ack if ack.at else ack.model_copy(update={"at": utcnow().isoformat()})
        try:
            self._client.set(control_ack_key(run_id, serial), stamped.model_dump_json(),
                             ex=self._ttl_s)
        except redis.RedisError as exc:
            raise ControlChannelError(f"cannot acknowledge {ack.kind} of run {run_id}: {exc}") from exc

    def announce(self, run_id: str, serial: str, subtask_id: str) -> None:
        """Record which sub-task the run's loop on ``serial`` runs (kept a day)."""
        try:
            self._client.set(loop_subtask_key(run_id, serial), subtask_id, ex=self._ttl_s)
        except redis.RedisError as exc:
            raise ControlChannelError(f"cannot record the sub-task of run {run_id} on {serial}: "
                                      f"{exc}") from exc

    def announced(self, run_id: str, serials: Sequence[str]) -> dict[str, str]:
        """serial -> the sub-task the run's loop on it said it runs (one round trip)."""
        if not serials:
            return {}
        try:
            found = self._client.mget([loop_subtask_key(run_id, s) for s in serials])
        except redis.RedisError as exc:
            raise ControlChannelError(f"cannot read which sub-task of run {run_id} runs where: "
                                      f"{exc}") from exc
        return {s: v.decode() for s, v in zip(serials, found, strict=True) if v is not None}

    def mark_watched(self, run_id: str, ttl_s: int) -> None:
        """Note that a person has the run's page open, for ``ttl_s`` seconds."""
        try:
            self._client.set(watched_key(run_id), b"1", ex=ttl_s)
        except redis.RedisError as exc:
            raise ControlChannelError(f"cannot mark run {run_id} as watched: {exc}") from exc

    def watched(self, run_id: str) -> bool:
        """Whether a page marked the run as watched within its TTL."""
        try:
            return bool(self._client.exists(watched_key(run_id)))
        except redis.RedisError as exc:
            raise ControlChannelError(f"cannot read whether run {run_id} is watched: {exc}") from exc

    def read_ack(self, run_id: str, serial: str) -> ControlAck | None:
        """The last acknowledgement of the run's loop on ``serial``, if any."""
        try:
            raw = self._client.get(control_ack_key(run_id, serial))
        except redis.RedisError as exc:
            raise ControlChannelError(f"cannot read the loop state of run {run_id}: {exc}") from exc
        if raw is None:
            return None
        try:
            return ControlAck.model_validate_json(raw)
        except ValidationError:
            return None  # written by another version: as if none


def _keys(run_id: str, serial: str | None) -> list[str]:
    """The lists a loop reads, its phone's first."""
    return [control_key(run_id, serial), control_key(run_id)] if serial else [control_key(run_id)]


def _decode(raw: bytes | str | None, run_id: str) -> ControlCommand | None:
    if raw is None:
        return None
    try:
        return ControlCommand.model_validate_json(raw)
    except ValidationError as exc:
        raise ControlChannelError(
            f"run {run_id} received an unreadable control command: {exc.error_count()} problems",
            hint="send commands through the API or RedisControlChannel.send",
        ) from exc
