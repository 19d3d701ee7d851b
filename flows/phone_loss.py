"""A sub-flow whose phone dies: the pause ends, the run says so, the sub-task goes on elsewhere.

    _wait_for_person  ->  PhoneWatch (a thread): is the paused phone still up?
                            down for a heartbeat TTL (its worker died, or it was quarantined)
                            -> ``lost`` = why; the sub-flow's own pause is resumed, so it stops
                               waiting for a person who can no longer use that phone
    run_app           ->  phone_lost event ("... the sub-task goes to another phone with the app")
                          navigate again on ``app.<package>``: any free phone with the app, the
                          same one once the farm has restarted its worker
                      ->  MoveWatch (a thread): the first live phone that runs the sub-task for
                          this run -> subtask_moved event ("goes on on sim-2")

A dead worker with a sub-task in flight is the farm monitor's (it puts the message back and
tells the run: :mod:`tasks.worker.farm_monitor`); this module handles the phone a sub-flow holds
without a task on it: paused for a person, or a person driving it.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from types import TracebackType
from typing import Self
from uuid import UUID

import httpx
import redis
from prefect.exceptions import PrefectException
from prefect.flow_runs import resume_flow_run

from core.models import RunEventKind, SubTask
from device_farm.errors import DeviceError
from device_farm.health import find_down_phones
from device_farm.registry import DeviceRegistry
from flows.models import PersonInput
from flows.runtime import FlowServices
from tasks.worker.queues import app_queue

__all__ = ["MoveWatch", "PhoneLost", "PhoneWatch", "announce_loss", "find_running_phone"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PhoneLost:
    """How a pause ended when its phone went down: why, in words."""

    why: str


class _Watcher(ABC):
    """A daemon thread that calls ``_check`` every ``interval_s`` until it returns True or stops."""

    def __init__(self, interval_s: float, name: str) -> None:
        self._interval = interval_s
        self._name = name
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @abstractmethod
    def _check(self) -> bool:
        """One look; True ends the watch."""

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                if self._check():
                    return
            except (redis.RedisError, DeviceError) as exc:  # Redis restarting: look again later
                log.debug("%s: %s", self._name, exc)

    def __enter__(self) -> Self:
        self._thread = threading.Thread(target=self._loop, daemon=True, name=self._name)
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None


class PhoneWatch(_Watcher):
    """Watches the phone a paused sub-flow holds; when it is down, ends that pause.

    Down must be seen for ``confirm_s`` (a heartbeat TTL: no beat for two TTLs in all), so
    that a worker starved of CPU for a moment does not end a person's pause; a phone the
    registry does not know (Redis restarted empty) is never taken for down.
    """

    def __init__(self, client: redis.Redis[bytes], serial: str, flow_run_id: UUID | None,
                 interval_s: float, confirm_s: float) -> None:
        super().__init__(interval_s, f"phone-watch-{serial}")
        self._redis, self._serial, self._flow_run_id = client, serial, flow_run_id
        self._confirm_s = confirm_s
        self._down_since: float | None = None
        self.lost: str | None = None  # why the phone is down, once it is

    def _check(self) -> bool:
        if self.lost is None:
            why = find_down_phones(self._redis, [self._serial]).get(self._serial)
            now = time.monotonic()
            if why is None or self._down_since is None:
                self._down_since = now if why is not None else None
                return False
            if now - self._down_since < self._confirm_s:
                return False
            self.lost = why
            log.warning("%s is down while its sub-flow waits for a person: %s", self._serial, why)
        return self._wake()

    def _wake(self) -> bool:
        """Resume the waiting sub-flow (its answer is ignored: ``lost`` is read instead)."""
        if self._flow_run_id is None:
            return True
        answer = PersonInput(action="continue", note=f"{self._serial} is down").model_dump(
            mode="json", exclude={"app", "reason", "category"})
        try:
            resume_flow_run(self._flow_run_id, run_input=answer)
        except (httpx.HTTPError, PrefectException, RuntimeError) as exc:
            # Not paused yet (the pause is being set up), or answered meanwhile: try again.
            log.debug("could not end the pause of %s yet: %s", self._flow_run_id, exc)
            return False
        return True


class MoveWatch(_Watcher):
    """Tells the run where a sub-task that lost its phone goes on: the first live phone that
    runs it (its app's queue, for this run), said once in a ``subtask_moved`` event."""

    def __init__(self, services: FlowServices, run_id: str, subtask: SubTask, lost: str) -> None:
        super().__init__(0.25, f"move-watch-{subtask.id}")
        self._services, self._run_id, self._subtask, self._lost = services, run_id, subtask, lost
        self.serial: str | None = None

    def _check(self) -> bool:
        serial = find_running_phone(self._services.registry, self._run_id, self._subtask.package)
        if serial is not None:
            self.announce(serial)
        return serial is not None

    def announce(self, serial: str) -> None:
        """Publish where the sub-task goes on (once)."""
        if self.serial is not None:
            return
        self.serial = serial
        app = self._subtask.app_label
        where = (f"{serial} again (the farm restarted its worker)" if serial == self._lost
                 else f"{serial} (instead of {self._lost})")
        self._services.publish(self._run_id, RunEventKind.SUBTASK_MOVED, subtask_id=self._subtask.id,
                               message=f"{app} goes on on {where}")


def find_running_phone(registry: DeviceRegistry, run_id: str, package: str) -> str | None:
    """A live phone running a sub-task of ``run_id`` taken from ``package``'s queue, if any."""
    queue = app_queue(package)
    for status in registry.statuses():
        inflight = status.inflight
        if (status.heartbeat_alive and status.lease_run == run_id and inflight is not None
                and inflight.queue == queue):
            return status.info.serial
    return None


def announce_loss(services: FlowServices, run_id: str, subtask: SubTask, serial: str,
                  why: str, *, person: bool) -> None:
    """The ``phone_lost`` event of a sub-flow's phone: what happened, what becomes of it."""
    app = subtask.app_label
    held = "while it waited for a person" if person else "between two sub-tasks"
    services.publish(run_id, RunEventKind.PHONE_LOST, subtask_id=subtask.id, message=(
        f"{serial} went down {held}: {why}. {app} goes on on another phone with {app}, "
        f"or on {serial} once the farm has restarted its worker"))
