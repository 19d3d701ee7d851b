"""The control channel: a person steers a running sub-task (pause, take over, resume, save, stop).

The API (later) sends commands; the navigation loop polls between steps and,
while paused or taken over, blocks until ``resume`` or ``stop``. Commands are
a Redis list per run (``runs:<run_id>:control``): ``RPUSH`` to send, ``LPOP``
to poll, ``BLPOP`` to wait, so a command sent while no loop listens waits for
the next one and none is lost or read twice.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol

import redis
from pydantic import BaseModel, ConfigDict, ValidationError

from droidretriever.models import utcnow
from tasks.errors import ControlChannelError
from tasks.keys import control_key

__all__ = [
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
    note: str = ""
    sent_at: str = ""


class ControlChannel(Protocol):
    """Where the loop reads a person's commands."""

    def send(self, run_id: str, command: ControlCommand) -> None:
        """Queue ``command`` for the run's loop."""
        ...

    def poll(self, run_id: str) -> ControlCommand | None:
        """The oldest pending command, or None at once when there is none."""
        ...

    def wait(self, run_id: str, timeout_s: float) -> ControlCommand | None:
        """The next command, waiting up to ``timeout_s`` seconds (None when none came)."""
        ...


class RedisControlChannel:
    """The control channel on a Redis list per run."""

    def __init__(self, client: redis.Redis[bytes], *, ttl_s: int = 24 * 3600) -> None:
        self._client = client
        self._ttl_s = ttl_s

    def send(self, run_id: str, command: ControlCommand) -> None:
        """``RPUSH`` the command (stamped with the time it was sent)."""
        stamped = command if command.sent_at else command.model_copy(
            update={"sent_at": utcnow().isoformat()}
        )
        key = control_key(run_id)
        try:
            pipe = self._client.pipeline()
            pipe.rpush(key, stamped.model_dump_json())
            pipe.expire(key, self._ttl_s)
            pipe.execute()
        except redis.RedisError as exc:
            raise ControlChannelError(f"cannot send {command.kind} to run {run_id}: {exc}") from exc

    def poll(self, run_id: str) -> ControlCommand | None:
        """``LPOP``: the oldest pending command or None."""
        try:
            raw = self._client.lpop(control_key(run_id))
        except redis.RedisError as exc:
            raise ControlChannelError(f"cannot read commands of run {run_id}: {exc}") from exc
        return _decode(raw, run_id)

    def wait(self, run_id: str, timeout_s: float) -> ControlCommand | None:
        """``BLPOP`` with a timeout (Redis counts it in seconds, fractions allowed)."""
        try:
            found = self._client.blpop([control_key(run_id)], timeout=max(timeout_s, 0.01))
        except redis.RedisError as exc:
            raise ControlChannelError(f"cannot wait for commands of run {run_id}: {exc}") from exc
        return _decode(found[1] if found else None, run_id)


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
