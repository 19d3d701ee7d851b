"""The task layer's Redis keys, in one place.

    runs:<run_id>:control                 LIST  a person's commands to the run's loop (tasks.control)
    farm:synthetic:<run_id>:<subtask_id>  HASH  step -> serial of a synthetic sub-task (tasks.worker.farm_tasks)
    farm:synthetic:<run_id>:completed     LIST  synthetic sub-tasks that finished, in order

The farm's own keys are :mod:`device_farm.keys`; live run events are
:mod:`storage.keys`; a flow's are :mod:`flows.keys`.
"""

from __future__ import annotations

__all__ = ["control_key", "synthetic_completions_key", "synthetic_steps_key"]


def control_key(run_id: str) -> str:
    """The Redis list holding a run's pending commands."""
    return f"runs:{run_id}:control"


def synthetic_steps_key(run_id: str, subtask_id: str) -> str:
    """Where a synthetic sub-task records its steps (a redelivery overwrites them)."""
    return f"farm:synthetic:{run_id}:{subtask_id}"


def synthetic_completions_key(run_id: str) -> str:
    """The list of a run's synthetic sub-tasks that finished (a duplicate would show)."""
    return f"farm:synthetic:{run_id}:completed"
