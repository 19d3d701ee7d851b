"""Errors of the orchestration layer (flows/).

    core.errors.DroidRetrieverError
     +-- FlowError                     anything flows/ raises on purpose
          +-- NoAppsError              no phone of the farm has an app the question needs
          +-- ModelConfigError         a role's model refused requests (4xx): the run stops with the fix
          +-- AttemptFailedError       one try of a sub-task failed; Prefect retries it with tips
          +-- AppNotStartedError       an app's sub-flow could not be created (Prefect API
          |                            unreachable); Prefect retries the app once it answers
          +-- RunFailedError           a run ended failed; says why (the flow's own faults)
          +-- RunNotPausedError        resume asked for a run that waits for nobody
          +-- RunOrphanedError         resume asked for a run whose process has ended
          +-- SteeringConflict         a person's command does not fit the run's state now (409)
          +-- SubscriptionError        a subscription is unknown or cannot be scheduled
          +-- NotifierError            a change summary could not be delivered

Lost workers are not errors here: Celery redelivers their sub-task and the
flow keeps waiting for the same result (see flows/dispatch.py).
"""

from __future__ import annotations

from core.errors import DroidRetrieverError
from core.models import SubTaskResult

__all__ = [
    "AppNotStartedError",
    "AttemptFailedError",
    "FlowError",
    "ModelConfigError",
    "NoAppsError",
    "NotifierError",
    "RunFailedError",
    "RunNotPausedError",
    "RunOrphanedError",
    "SteeringConflict",
    "SubscriptionError",
]


class FlowError(DroidRetrieverError):
    """Base of the orchestration errors."""


class NoAppsError(FlowError):
    """The farm has no phone with any app the question could be answered in."""


class AttemptFailedError(FlowError):
    """A try of a sub-task ended ``failed``; carries the result so the next try can reflect."""

    def __init__(self, result: SubTaskResult) -> None:
        super().__init__(
            f"sub-task {result.subtask_id} failed on try {result.attempt}: "
            f"{result.reason or 'no reason given'}",
            hint="it is retried with the reason as a tip; see the run's events for each step",
        )
        self.result = result


class ModelConfigError(FlowError):
    """A model role refused its requests (wrong model name, key, images to a text model).

    Not a fallback: the run stops, naming the role and the fix; it is never retried.
    """
class AppNotStartedError(FlowError):
    """An app's sub-flow was not created: the Prefect API did not answer (a restart)."""


class RunFailedError(FlowError):
    """A run ended failed; the message says why and the manifest records it."""


class RunNotPausedError(FlowError):
    """Nothing of the run waits for a person."""


class RunOrphanedError(FlowError):
    """The process that ran a paused run has ended: nothing is left to go on from the pause."""


class SubscriptionError(FlowError):
    """A subscription is unknown, or its schedule could not be written."""


class NotifierError(FlowError):
    """A notifier could not deliver a change summary."""


class SteeringConflict(FlowError):  # noqa: N818  (reads as what it is: a conflict, HTTP 409)
    """A person's command does not fit the run's state now; the message says why."""
