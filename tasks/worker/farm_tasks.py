"""Farm-level device tasks: a diagnostic no-op and a synthetic sub-task.

``farm.diagnose`` answers which phone and worker took it (optionally after one
observe): it measures dispatch overhead and checks routing. ``farm.synthetic``
runs a fixed number of observe + act steps on an app, like a navigation
sub-task without the model, for fault tests and throughput benchmarks; it can
end paused for a person, keeping the phone leased to its run. Each
step is recorded under a run-scoped key (``farm:synthetic:<run>:<subtask>``,
field = step), so a redelivered sub-task overwrites its steps instead of
duplicating them; completions are appended to a list so a duplicate would show.
"""

from __future__ import annotations

import time

from pydantic import Field

from core.models import Frozen, ScrollDirection
from device_farm.models import Key
from tasks.keys import synthetic_completions_key, synthetic_steps_key
from tasks.worker.bound_device import BoundDevice
from tasks.worker.device_tasks import device_task

__all__ = [
    "DIAGNOSE",
    "SYNTHETIC",
    "DiagnoseRequest",
    "DiagnoseResult",
    "SyntheticRequest",
    "SyntheticResult",
    "diagnose",
    "run_synthetic_subtask",
]

DIAGNOSE = "farm.diagnose"
SYNTHETIC = "farm.synthetic"



class DiagnoseRequest(Frozen):
    observe: bool = False


class DiagnoseResult(Frozen):
    serial: str
    worker: str
    packages: tuple[str, ...]
    package_in_front: str = ""
    observe_ms: float = 0.0


class SyntheticRequest(Frozen):
    run_id: str
    subtask_id: str
    package: str
    steps: int = Field(default=5, ge=1, le=200)
    step_pause_s: float = Field(default=0.0, ge=0.0, le=30.0)  # stands in for model latency
    # End waiting for a person, as a navigation sub-task does on a risky screen: the phone
    # stays leased to the run (paused_for_user) until the run comes back on device.<serial>.
    pause_for_user: bool = False


class SyntheticResult(Frozen):
    subtask_id: str
    serial: str
    steps: int
    observe_ms: tuple[float, ...]
    redelivered: bool = False


@device_task(DIAGNOSE, DiagnoseRequest)
def diagnose(device: BoundDevice, request: DiagnoseRequest) -> DiagnoseResult:
    """Say which phone and worker took the task; optionally observe once."""
    package, observe_ms = "", 0.0
    if request.observe:
        observation = device.driver.observe()
        package, observe_ms = observation.package, observation.timings.total_ms
    return DiagnoseResult(
        serial=device.serial, worker=device.hostname, packages=device.info.packages,
        package_in_front=package, observe_ms=observe_ms,
    )


@device_task(SYNTHETIC, SyntheticRequest)
def run_synthetic_subtask(device: BoundDevice, request: SyntheticRequest) -> SyntheticResult:
    """Open the app, then ``steps`` times: observe, record the step, scroll down."""
    client = device.registry.client
    steps_key = synthetic_steps_key(request.run_id, request.subtask_id)
    redelivered = bool(client.exists(steps_key))
    device.driver.force_stop(request.package)
    device.driver.open_app(request.package)
    timings: list[float] = []
    for step in range(request.steps):
        observation = device.driver.observe()
        timings.append(observation.timings.total_ms)
        client.hset(steps_key, str(step), device.serial)
        if request.step_pause_s:
            time.sleep(request.step_pause_s)
        device.driver.scroll(ScrollDirection.DOWN, 0.5)
    if request.pause_for_user:
        device.hold_for_user()
    else:
        device.driver.key(Key.HOME)
    client.rpush(synthetic_completions_key(request.run_id), request.subtask_id)
    return SyntheticResult(
        subtask_id=request.subtask_id, serial=device.serial, steps=request.steps,
        observe_ms=tuple(timings), redelivered=redelivered,
    )
