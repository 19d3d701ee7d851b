"""Stop-and-report: a person asks a run to stop; it reports with what it captured so far.

The request is a Redis key per run. Each app's sub-flow checks it before every
sub-task (a sub-task already on a phone finishes, or stops at its own next
step when the copilot's control channel carries the same request), then the
run goes straight to synthesis.
"""

from __future__ import annotations

import redis

from flows.keys import stop_key

__all__ = ["is_stop_requested", "request_stop"]

_TTL_S = 7 * 24 * 3600


def request_stop(client: redis.Redis[bytes], run_id: str) -> None:
    """Ask ``run_id`` to stop after the sub-tasks now on phones, then report."""
    client.set(stop_key(run_id), "1", ex=_TTL_S)


def is_stop_requested(client: redis.Redis[bytes], run_id: str) -> bool:
    """Whether a person asked ``run_id`` to stop."""
    return bool(client.exists(stop_key(run_id)))
