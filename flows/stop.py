"""Stop-and-report: a person asks a run to stop; it reports with what it captured so far.

The request is a Redis key per run. Each app's sub-flow checks it before every
sub-task (a sub-task already on a phone finishes, or stops at its own next
step when the copilot's control channel carries the same request), then the
run goes straight to synthesis.
"""

from __future__ import annotations

import redis

__all__ = ["is_stop_requested", "request_stop", "stop_key"]

_TTL_S = 7 * 24 * 3600


def stop_key(run_id: str) -> str:
    """The Redis key that says ``run_id`` should stop and report."""
    return f"flows:stop:{run_id}"


def request_stop(client: redis.Redis[bytes], run_id: str) -> None:
    """Ask ``run_id`` to stop after the sub-tasks now on phones, then report."""
    client.set(stop_key(run_id), "1", ex=_TTL_S)


def is_stop_requested(client: redis.Redis[bytes], run_id: str) -> bool:
    """Whether a person asked ``run_id`` to stop."""
    return bool(client.exists(stop_key(run_id)))
