"""The device registry on Redis: what each phone is and where it stands.

Its Redis keys are listed in :mod:`device_farm.keys`.

The registry never holds a module-global client: build it with
:meth:`DeviceRegistry.from_settings` (or hand it a client) wherever needed.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import UTC, datetime

import redis

from core.config import FarmSettings, Settings
from core.models import InstalledApp
from core.redis_client import open_redis
from device_farm.errors import DeviceError
from device_farm.keys import DEVICES_KEY, device_info_key, device_key, heartbeat_key
from device_farm.leases import LeaseManager
from device_farm.models import DeviceInfo, DeviceState, DeviceStatus, InflightTask

__all__ = ["DeviceRegistry"]


class DeviceRegistry:
    """Read and write the farm's device records."""

    def __init__(self, client: redis.Redis[bytes], farm: FarmSettings) -> None:
        self._redis = client
        self._farm = farm
        self.leases = LeaseManager(client, farm.lease_ttl_s)

    @classmethod
    def from_settings(cls, settings: Settings, *,
                      retry_window_s: float | None = None) -> DeviceRegistry:
        """A registry on ``settings.redis`` with ``settings.farm`` timings.

        Its client rides out a Redis restart (``redis.retry_window_s``); pass
        ``retry_window_s=0`` for a look that must answer now (``status``).
        """
        return cls(open_redis(settings.redis, retry_window_s=retry_window_s), settings.farm)

    @property
    def client(self) -> redis.Redis[bytes]:
        return self._redis

    @property
    def heartbeat_ttl_s(self) -> float:
        return self._farm.heartbeat_s * self._farm.heartbeat_missed

    # ------------------------------------------------------------------ writes

    def register(self, info: DeviceInfo, worker: str) -> None:
        """Record a phone as its worker starts: idle, counters kept, heartbeat now."""
        pipe = self._redis.pipeline()
        pipe.sadd(DEVICES_KEY, info.serial)
        pipe.set(device_info_key(info.serial), info.model_dump_json())
        pipe.hset(device_key(info.serial), mapping={
            "state": DeviceState.IDLE.value, "reason": "", "worker": worker,
            "failed_observes": 0,
        })
        pipe.hdel(device_key(info.serial), "inflight")
        pipe.execute()
        self.heartbeat(info.serial)

    def heartbeat(self, serial: str) -> None:
        """Say the phone's worker is alive, for ``heartbeat_s * heartbeat_missed`` seconds."""
        self._redis.set(
            heartbeat_key(serial), datetime.now(UTC).isoformat(),
            px=max(1, int(self.heartbeat_ttl_s * 1000)),
        )

    def set_state(self, serial: str, state: DeviceState, reason: str = "") -> None:
        """Set the phone's state and why (the reason is shown by ``farm status``)."""
        self._redis.hset(device_key(serial), mapping={"state": state.value, "reason": reason})

    def record_task(self, serial: str, *, ok: bool) -> None:
        """Count one finished sub-task as done or failed."""
        self._redis.hincrby(device_key(serial), "tasks_done" if ok else "tasks_failed", 1)

    def record_observe(self, serial: str, *, ok: bool) -> int:
        """Track observe failures in a row; returns the current run of failures."""
        if ok:
            self._redis.hset(device_key(serial), "failed_observes", 0)
            return 0
        return int(self._redis.hincrby(device_key(serial), "failed_observes", 1))

    def set_inflight(self, serial: str, task: InflightTask | None) -> None:
        """Remember (or forget) the sub-task the phone's worker is running."""
        if task is None:
            self._redis.hdel(device_key(serial), "inflight")
        else:
            self._redis.hset(device_key(serial), "inflight", task.model_dump_json())

    def take_inflight(self, serial: str) -> InflightTask | None:
        """Read and clear the in-flight record at once (so only one monitor redelivers it)."""
        pipe = self._redis.pipeline()
        pipe.hget(device_key(serial), "inflight")
        pipe.hdel(device_key(serial), "inflight")
        raw, _ = pipe.execute()
        return InflightTask.model_validate_json(raw) if raw else None

    def remove(self, serial: str) -> None:
        """Forget a phone entirely (``farm down``)."""
        self._redis.delete(device_key(serial), device_info_key(serial), heartbeat_key(serial),
                           self.leases.key(serial))
        self._redis.srem(DEVICES_KEY, serial)

    # ------------------------------------------------------------------ reads

    def is_registered(self, serial: str) -> bool:
        """Whether the registry knows the phone (False after Redis restarted empty)."""
        return bool(self._redis.exists(device_info_key(serial)))

    def serials(self) -> tuple[str, ...]:
        """Every registered serial, sorted."""
        return tuple(sorted(_text(s) for s in self._redis.smembers(DEVICES_KEY)))

    def info(self, serial: str) -> DeviceInfo:
        """What the phone is; raises DeviceError for an unknown serial."""
        raw = self._redis.get(device_info_key(serial))
        if raw is None:
            raise DeviceError(
                f"no phone {serial!r} in the farm registry", serial=serial,
                hint="`droidretriever farm status` lists the phones; start one with `farm up`",
            )
        return DeviceInfo.model_validate_json(raw)

    def last_heartbeat(self, serial: str) -> datetime | None:
        raw = self._redis.get(heartbeat_key(serial))
        return datetime.fromisoformat(_text(raw)) if raw else None

    def status(self, serial: str) -> DeviceStatus:
        """The phone's current standing; a missed heartbeat shows as offline."""
        info = self.info(serial)
        fields = {_text(k): _text(v) for k, v in self._redis.hgetall(device_key(serial)).items()}
        beat = self.last_heartbeat(serial)
        state = DeviceState(fields.get("state", DeviceState.OFFLINE.value))
        reason = fields.get("reason", "")
        if beat is None and state is not DeviceState.QUARANTINED:
            state = DeviceState.OFFLINE
            reason = reason or f"no heartbeat for {self.heartbeat_ttl_s:.0f} s (worker down?)"
        inflight = fields.get("inflight")
        return DeviceStatus(
            info=info,
            state=state,
            reason=reason,
            worker=fields.get("worker", ""),
            lease_run=self.leases.holder(serial),
            lease_ttl_s=self.leases.remaining_s(serial),
            last_heartbeat=beat,
            heartbeat_alive=beat is not None,
            tasks_done=int(fields.get("tasks_done", 0)),
            tasks_failed=int(fields.get("tasks_failed", 0)),
            inflight=InflightTask.model_validate_json(inflight) if inflight else None,
        )

    def statuses(self) -> tuple[DeviceStatus, ...]:
        """Every registered phone's status, by serial."""
        return tuple(self.status(s) for s in self.serials())

    def failed_observes(self, serial: str) -> int:
        raw = self._redis.hget(device_key(serial), "failed_observes")
        return int(raw) if raw else 0

    def installed_apps(self) -> tuple[InstalledApp, ...]:
        """Apps on the farm's live phones (labels as the phones show them), each once."""
        return self.apps_of(s for s in self.statuses() if s.heartbeat_alive)

    @staticmethod
    def apps_of(statuses: Iterable[DeviceStatus]) -> tuple[InstalledApp, ...]:
        """The apps of ``statuses``' phones, each once, in the order first seen."""
        apps: dict[str, InstalledApp] = {}
        for status in statuses:
            for app in status.info.apps:
                apps.setdefault(app.package, app)
        return tuple(apps.values())

    def live_statuses_soon(self) -> tuple[DeviceStatus, ...]:
        """The beating phones' statuses, waiting up to two heartbeats while none beats.

        A Redis that restarted empty (or was flushed) holds no phone until each worker's next
        beat registers it again: a question asked in that window waits for the beats instead of
        hearing that no phone is online. A farm whose phones are all down answers after them.
        """
        deadline = time.monotonic() + 2 * self._farm.heartbeat_s
        while True:
            live = tuple(s for s in self.statuses() if s.heartbeat_alive)
            if live or time.monotonic() >= deadline:
                return live
            time.sleep(min(0.1, self._farm.heartbeat_s / 4))

    def devices_with_app(self, package: str) -> tuple[str, ...]:
        """Serials of registered phones that have ``package`` installed."""
        return tuple(s for s in self.serials() if package in self.info(s).packages)


def _text(value: bytes | str) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value
