"""Prefect flows: the ``retrieve`` flow, per-app sub-flows, human pauses, subscriptions.

    run_retrieve(RetrieveRequest) -> RunOutcome      flows.retrieve (the `retrieve` flow, its state)
    run_app(...)  -> State[AppOutcome] (per app)     flows.app_flow
    resume_run(run_id, PersonInput)                  flows.pauses
    run_subscription(subscription_id)                flows.subscriptions

Flows only compose: the work is in ``tasks/`` (plain functions and device-bound
Celery tasks). Errors: :mod:`flows.errors`.
"""

from __future__ import annotations

from flows.errors import (
    AttemptFailedError,
    FlowError,
    NoAppsError,
    NotifierError,
    RunNotPausedError,
    SubscriptionError,
)
from flows.models import AppOutcome, PersonInput, RetrieveRequest, RunOutcome

__all__ = [
    "AppOutcome",
    "AttemptFailedError",
    "FlowError",
    "NoAppsError",
    "NotifierError",
    "PersonInput",
    "RetrieveRequest",
    "RunNotPausedError",
    "RunOutcome",
    "SubscriptionError",
]
