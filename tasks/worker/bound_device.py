"""The phone a device worker is bound to: driver, registry record, lease, heartbeat, health.

One worker process serves exactly one phone (``--pool=solo``, concurrency 1),
so the binding is per process: :func:`bind_device` at worker start,
:func:`bound_device` inside tasks. The heartbeat thread beats every
``farm.heartbeat_s``, renews the current run's lease (a paused run keeps its
phone until it resumes, lets go, or outlives its pause timeout) and the
broker's visibility of the messages the worker holds (:mod:`tasks.worker.deliveries`),
probes the phone, quarantines it when the probe fails and lets it
rejoin after ``farm.rejoin_after_ok`` good probes in a row.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import redis
from celery import Celery

from core.config import Settings
from device_farm.adb_driver import AdbDriver
from device_farm.errors import DeviceError
from device_farm.health import HealthCheckedDriver, probe_device
from device_farm.models import DeviceInfo, DeviceState
from device_farm.registry import DeviceRegistry
from tasks.worker.deliveries import HeldDeliveries
from tasks.worker.queues import app_queue, device_queue

__all__ = ["BoundDevice", "bind_device", "bound_device", "unbind_device"]

log = logging.getLogger(__name__)

_BOUND: BoundDevice | None = None


class BoundDevice:
    """Everything a device-bound task needs about its phone."""

    def __init__(
        self, settings: Settings, info: DeviceInfo, raw_driver: AdbDriver, registry: DeviceRegistry
    ) -> None:
        self.settings = settings
        self.info = info
        self.registry = registry
        self.raw_driver = raw_driver
        self.driver = HealthCheckedDriver(raw_driver, registry, settings.farm.max_failed_observes)
        self.hostname = ""
        self.app: Celery | None = None
        self.consumer: Any = None  # celery.worker.consumer.Consumer, set by a bootstep
        self.deliveries = HeldDeliveries()
        self._run_id: str | None = None
        self._hold = False
        self._hold_since = 0.0  # time.monotonic() when the run paused for a person
        self._consuming = True
        self._apps_paused = False  # app.* queues cancelled while a run waits for a person
        self._good_probes = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def serial(self) -> str:
        return self.info.serial

    @property
    def run_id(self) -> str | None:
        return self._run_id

    @property
    def queues(self) -> tuple[str, ...]:
        """``device.<serial>`` and ``app.<package>`` for every installed app."""
        return (device_queue(self.serial), *(app_queue(p) for p in self.info.packages))

    # ------------------------------------------------------------------ runs and leases

    def begin_run(self, run_id: str) -> None:
        """Lease the phone for ``run_id`` (raises DeviceBusy if another run holds it)."""
        self.registry.leases.acquire_or_raise(self.serial, run_id)
        with self._lock:
            self._run_id, self._hold = run_id, False
        self.registry.set_state(self.serial, DeviceState.LEASED, f"run {run_id}")

    def hold_for_user(self) -> None:
        """Keep the lease after this task returns: the run paused for a person."""
        self._hold, self._hold_since = True, time.monotonic()

    def end_run(self) -> None:
        """After a task: keep the phone for a paused run, else free it."""
        with self._lock:
            run_id, hold = self._run_id, self._hold
        if run_id is None:
            return
        if hold:
            self.registry.set_state(self.serial, DeviceState.PAUSED_FOR_USER,
                                    f"run {run_id} waits for a person")
            # Only this run may use the phone now; it comes back on device.<serial>.
            self._cancel_queues([app_queue(p) for p in self.info.packages], direct=True)
            self._apps_paused = True
            return
        self._free(run_id)

    def _free(self, run_id: str) -> None:
        self.registry.leases.release(self.serial, run_id)
        with self._lock:
            self._run_id, self._hold = None, False
        self.registry.set_state(self.serial, DeviceState.IDLE)
        if self._consuming and self._apps_paused:
            self._apps_paused = False
            self._add_queues([app_queue(p) for p in self.info.packages])

    @property
    def _longest_hold_s(self) -> float:
        """How long a paused run may keep the phone: its pause timeout plus two lease TTLs."""
        return self.settings.budgets.pause_timeout_s + 2 * self.settings.farm.lease_ttl_s

    # ------------------------------------------------------------------ health

    def quarantine(self, reason: str, *, direct: bool = True) -> None:
        """Stop taking sub-tasks, drop the run's lease and say why in the registry."""
        log.warning("quarantining %s: %s", self.serial, reason)
        self.registry.set_state(self.serial, DeviceState.QUARANTINED, reason)
        with self._lock:
            run_id, self._run_id, self._hold = self._run_id, None, False
            self._consuming, self._good_probes = False, 0
        if run_id is not None:
            self.registry.leases.release(self.serial, run_id)
        self._cancel_queues(list(self.queues), direct=direct)

    def rejoin(self) -> None:
        """Healthy again: idle, consuming every queue."""
        log.warning("%s is healthy again; rejoining", self.serial)
        with self._lock:
            self._consuming, self._apps_paused = True, False
        self.registry.record_observe(self.serial, ok=True)
        self.registry.set_state(self.serial, DeviceState.IDLE)
        self._add_queues(list(self.queues))

    def _cancel_queues(self, queues: list[str], *, direct: bool) -> None:
        if direct and self.consumer is not None:
            # Inside a task (solo pool): we are on the consumer's own thread, so cancel
            # now, before the rejected message is back on the queue for us to take.
            for queue in queues:
                self.consumer.cancel_task_queue(queue)
            return
        if self.app is not None:
            for queue in queues:
                self.app.control.cancel_consumer(queue, destination=[self.hostname])

    def _add_queues(self, queues: list[str]) -> None:
        # Broadcast to ourselves: the consumer applies it on its own thread.
        if self.app is not None:
            for queue in queues:
                self.app.control.add_consumer(queue, destination=[self.hostname])

    # ------------------------------------------------------------------ heartbeat

    def start_heartbeat(self) -> None:
        """Start the heartbeat thread (idempotent)."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._beat_forever, name=f"heartbeat-{self.serial}",
                                        daemon=True)
        self._thread.start()

    def stop_heartbeat(self) -> None:
        """Stop beating; the registry will show the phone offline after the beat TTL."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _beat_forever(self) -> None:
        while not self._stop.wait(self.settings.farm.heartbeat_s):
            try:
                self.beat_once()
            except redis.RedisError as exc:
                # Redis restarting: keep trying; the worker's broker connection reconnects too.
                log.warning("heartbeat for %s failed: %s", self.serial, exc)

    def beat_once(self) -> None:
        """One heartbeat: re-register if Redis lost us, renew the lease, probe health."""
        if not self.registry.is_registered(self.serial):
            self.registry.register(self.info, self.hostname)  # Redis restarted empty
        self.registry.heartbeat(self.serial)
        self.deliveries.keep_visible(self.registry.client)
        with self._lock:
            run_id, hold, held_s = self._run_id, self._hold, time.monotonic() - self._hold_since
        if run_id is not None and hold and held_s > self._longest_hold_s:
            # The run's own pause timeout is long past: the process that waited has died.
            log.warning("%s: run %s paused %.0f s ago and never came back; freeing the phone",
                        self.serial, run_id, held_s)
            self._free(run_id)
        elif run_id is not None and not self.registry.leases.renew(self.serial, run_id) and hold:
            # The paused run let go of the phone (skipped, timed out, or found dead by `resume`).
            self._free(run_id)
        problem = probe_device(self.raw_driver, self.raw_driver.address, self.raw_driver.adb_serial)
        with self._lock:
            consuming = self._consuming
        if problem is not None:
            if consuming:
                self.quarantine(problem, direct=False)
            else:
                self.registry.set_state(self.serial, DeviceState.QUARANTINED, problem)
            return
        if consuming:
            return
        self._good_probes += 1
        if self._good_probes >= self.settings.farm.rejoin_after_ok:
            self.rejoin()


def bind_device(device: BoundDevice) -> None:
    """Bind this process to ``device`` (once, at worker start)."""
    global _BOUND
    if _BOUND is not None and _BOUND is not device:
        raise DeviceError(
            f"this worker is already bound to {_BOUND.serial}", serial=device.serial,
            hint="run one worker process per phone",
        )
    _BOUND = device


def unbind_device() -> None:
    """Forget the binding (worker shutdown)."""
    global _BOUND
    _BOUND = None


def bound_device() -> BoundDevice:
    """The phone this worker serves; raises outside a device worker."""
    if _BOUND is None:
        raise DeviceError(
            "this process is not a device worker, so device tasks cannot run here",
            hint="start workers with `droidretriever farm up`; call the task function directly in tests",
        )
    return _BOUND
