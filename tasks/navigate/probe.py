"""``probe.navigate``: a no-op navigate that answers the navigate contract without navigating.

It takes the same message as ``copilot.navigate`` (:class:`tasks.navigate.NavigateRequest`),
opens the sub-task's app, observes the screen once and reports ``completed``
with no capture.
It exists to measure and test orchestration (Prefect task -> Celery -> typed
result, leases, redelivery) apart from the copilot's own work; the benchmark
``bench/flows.py`` reports it as such.

It is not in ``tasks.worker.celery_app.DEVICE_TASK_MODULES`` (production workers do
not need it): the benchmark's and tests' workers import it before they start.
"""

from __future__ import annotations

from core.models import StepRecord, StepTimings, SubTaskResult, SubTaskStatus, Trace
from tasks.navigate import NavigateRequest
from tasks.worker import BoundDevice, device_task

__all__ = ["PROBE_NAVIGATE", "run_probe_navigate"]

PROBE_NAVIGATE = "probe.navigate"


@device_task(PROBE_NAVIGATE, NavigateRequest)
def run_probe_navigate(device: BoundDevice, request: NavigateRequest) -> SubTaskResult:
    """Open the app, observe once, report completed with an empty capture list."""
    subtask = request.subtask
    device.driver.open_app(subtask.package)
    observation = device.driver.observe()
    step = StepRecord(
        step=0, subtask_id=subtask.id, policy="probe",
        timings=StepTimings(observe_ms=observation.timings.total_ms),
    )
    return SubTaskResult(
        subtask_id=subtask.id, status=SubTaskStatus.COMPLETED,
        trace=Trace(subtask_id=subtask.id, steps=(step,)),
        reason=f"probe: observed {observation.package} without navigating",
        device=device.serial, attempt=request.delivery,
    )
