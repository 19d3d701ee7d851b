"""The task layer's Redis keys, in one place.

    runs:<run_id>:control                 LIST  a person's commands to any loop of the run (tasks.control)
    runs:<run_id>:control:<serial>        LIST  commands to the run's loop on one phone
    runs:<run_id>:control:<serial>:ack    STR   what that loop is doing about them (ControlAck JSON)
    runs:<run_id>:control:<serial>:subtask STR  the sub-task the run's loop on that phone runs
    runs:<run_id>:watched                 STR   a person has the run's page open (short TTL)
    runs:<run_id>:takeover:<subtask_id>   STR   counter of the screens a person visited (tasks.takeover)
    runs:<run_id>:model_s                 STR   model seconds the run's roles spent (tasks.model_clock)
    farm:synthetic:<run_id>:<subtask_id>  HASH  step -> serial of a synthetic sub-task (tasks.worker.farm_tasks)
    farm:synthetic:<run_id>:completed     LIST  synthetic sub-tasks that finished, in order

The farm's own keys are :mod:`device_farm.keys`; live run events are
:mod:`storage.keys`; a flow's are :mod:`flows.keys`.
"""

from __future__ import annotations

__all__ = [
    "control_ack_key",
    "control_key",
    "loop_subtask_key",
    "model_seconds_key",
    "synthetic_completions_key",
    "synthetic_steps_key",
    "takeover_steps_key",
    "watched_key",
]


def control_key(run_id: str, serial: str | None = None) -> str:
    """The Redis list of a run's pending commands: for any of its loops, or the one on ``serial``."""
    return f"runs:{run_id}:control" if serial is None else f"runs:{run_id}:control:{serial}"


def control_ack_key(run_id: str, serial: str) -> str:
    """Where the run's loop on ``serial`` says what it is doing about a person's commands."""
    return f"runs:{run_id}:control:{serial}:ack"


def loop_subtask_key(run_id: str, serial: str) -> str:
    """Where the run's loop on ``serial`` says which sub-task it runs (the dashboard labels phones)."""
    return f"runs:{run_id}:control:{serial}:subtask"


def watched_key(run_id: str) -> str:
    """Present while a person has the run's page open: only then does the confirm window wait."""
    return f"runs:{run_id}:watched"


def synthetic_steps_key(run_id: str, subtask_id: str) -> str:
    """Where a synthetic sub-task records its steps (a redelivery overwrites them)."""
    return f"farm:synthetic:{run_id}:{subtask_id}"


def synthetic_completions_key(run_id: str) -> str:
    """The list of a run's synthetic sub-tasks that finished (a duplicate would show)."""
    return f"farm:synthetic:{run_id}:completed"


def takeover_steps_key(run_id: str, subtask_id: str) -> str:
    """The counter numbering the screens a person visited while driving a sub-task's phone."""
    return f"runs:{run_id}:takeover:{subtask_id}"


def model_seconds_key(run_id: str) -> str:
    """The run's model time so far (seconds, a float counter every role adds to)."""
    return f"runs:{run_id}:model_s"
