"""The flows' Redis keys, in one place.

    flows:alive:<run_id>                 STR   the process running the run is alive (flows.crashes)
    flows:crashing:<run_id>              STR   a sweep is marking the run crashed (flows.crashes)
    flows:stop:<run_id>                  STR   a person asked the run to stop and report (flows.stop)
    flows:tips:<run_id>:<subtask_id>     LIST  reflection tips from failed tries (flows.dispatch)
    flows:waiting:<flow_run_id>          STR   a process waits in this paused sub-flow (flows.pauses)
"""

from __future__ import annotations

from uuid import UUID

__all__ = ["alive_key", "crash_claim_key", "stop_key", "tips_key", "waiting_key"]


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
