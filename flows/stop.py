"""Stop-and-report: a person asks a run to stop; it reports with what it captured so far.

The request is a Redis key per run. Each app's sub-flow checks it before every
sub-task (a sub-task already on a phone finishes, or stops at its own next
step when the copilot's control channel carries the same request), then the
run goes straight to synthesis.

How the run's flows end in Prefect, so its UI tells them apart from runs that went to their
end (:func:`final_state`): a stopped run, and each app sub-flow a stop cut short, returns a
``Cancelled`` state carrying its outcome (the report is still written); an app sub-flow whose
sub-tasks failed (a phone that died, a page never found) returns ``Failed``, its outcome
still going to the report. Prefect makes a returned state the run's final state; whoever
calls the flow here reads the outcome back with :func:`outcome_of`.
"""

from __future__ import annotations

from typing import Any, TypeVar

import redis
from prefect.client.schemas.objects import State
from prefect.states import Cancelled, Completed, Failed

from flows.keys import stop_key

__all__ = ["final_state", "is_stop_requested", "outcome_of", "request_stop"]

_TTL_S = 7 * 24 * 3600

T = TypeVar("T")


def request_stop(client: redis.Redis[bytes], run_id: str) -> None:
    """Ask ``run_id`` to stop after the sub-tasks now on phones, then report."""
    client.set(stop_key(run_id), "1", ex=_TTL_S)


def is_stop_requested(client: redis.Redis[bytes], run_id: str) -> bool:
    """Whether a person asked ``run_id`` to stop."""
    return bool(client.exists(stop_key(run_id)))


def final_state(outcome: T, *, stopped: bool = False, failed: str = "") -> State[T]:
    """The state a flow returns for ``outcome``: Cancelled when a person stopped it, Failed
    (saying ``failed``) when its work failed, else Completed; each carries ``outcome``."""
    if stopped:
        return Cancelled(message="stopped by a person; the report answers from what was captured",
                         data=outcome)
    if failed:
        return Failed(message=failed, data=outcome)
    return Completed(data=outcome)


def outcome_of(state: State[Any], kind: type[T]) -> T:
    """What a flow run here returned (``flow(..., return_state=True)``), whatever its final state.

    A flow that raised re-raises its error here.
    """
    value = state.result(raise_on_failure=False)
    if isinstance(value, kind):
        return value
    if isinstance(value, BaseException):
        raise value
    raise TypeError(f"the flow returned {type(value).__name__}, not {kind.__name__}")
