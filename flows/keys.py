"""The flows' Redis keys, in one place.

    flows:alive:<run_id>                 STR   the process running the run is alive (flows.crashes)
    flows:crashing:<run_id>              STR   a sweep is marking the run crashed (flows.crashes)
    flows:stop:<run_id>                  STR   a person asked the run to stop and report (flows.stop)
    flows:tips:<run_id>:<subtask_id>     LIST  reflection tips from failed tries (flows.dispatch)
    flows:waiting:<flow_run_id>          STR   a process waits in this paused sub-flow (flows.pauses)
    flows:pauses                         HASH  flow_run_id -> PauseEntry JSON: the farm's pause queue
    flows:pause-events                   STREAM  pauses opened and closed, for live views (flows.pause_queue)
    flows:steer:<run_id>                 STR   Steered JSON: how a person steers the run (flows.steering)
    flows:steer:<run_id>:lock            STR   held while one command changes it
    flows:takeover:<serial>              STR   the run whose phone a person drives now (flows.steering)
    flows:runner:wake                    PUBSUB  a new dashboard flow run id, for the runner (flows.runner)
"""

from __future__ import annotations

from uuid import UUID

__all__ = [
    "PAUSES_KEY",
    "PAUSE_EVENTS_KEY",
    "RUNNER_WAKE_CHANNEL",
    "alive_key",
    "crash_claim_key",
    "steer_key",
    "steer_lock_key",
    "stop_key",
    "takeover_key",
    "tips_key",
    "waiting_key",
]

PAUSES_KEY = "flows:pauses"
RUNNER_WAKE_CHANNEL = "flows:runner:wake"
PAUSE_EVENTS_KEY = "flows:pause-events"


def alive_key(run_id: str) -> str:
    """The Redis key that is set while a process runs ``run_id`` (its beacon)."""
    return f"flows:alive:{run_id}"


def crash_claim_key(run_id: str) -> str:
    """The Redis key a sweep takes (SET NX) before it marks ``run_id`` crashed."""
    return f"flows:crashing:{run_id}"


def stop_key(run_id: str) -> str:
    """The Redis key that says ``run_id`` should stop and report."""
    return f"flows:stop:{run_id}"


def tips_key(run_id: str, subtask_id: str) -> str:
    """Redis list of reflection tips from failed tries of one sub-task."""
    return f"flows:tips:{run_id}:{subtask_id}"


def waiting_key(flow_run_id: UUID | str) -> str:
    """The Redis key that is set while a process waits in paused sub-flow ``flow_run_id``."""
    return f"flows:waiting:{flow_run_id}"


def steer_key(run_id: str) -> str:
    """How a person steers ``run_id`` now (paused, or which phone they drive)."""
    return f"flows:steer:{run_id}"


def takeover_key(serial: str) -> str:
    """The run whose phone ``serial`` a person drives now."""
    return f"flows:takeover:{serial}"


def steer_lock_key(run_id: str) -> str:
    """The lock one steering command holds while it changes the run's steering state."""
    return f"flows:steer:{run_id}:lock"
