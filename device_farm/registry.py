"""The device registry on Redis: what each phone is and where it stands.

Keys (all under ``farm:``):

    farm:devices                  SET   every serial ever registered (until removed)
    farm:device:<serial>:info     STR   DeviceInfo JSON (model, size, apps with labels)
    farm:device:<serial>          HASH  state, reason, worker, tasks_done, tasks_failed,
                                        failed_observes (in a row), inflight (InflightTask JSON)
    farm:heartbeat:<serial>       STR   ISO time of the last beat; expires after
                                        heartbeat_s * heartbeat_missed, so "missing" = missed beats
    farm:lease:<serial>           STR   see device_farm.leases

The registry never holds a module-global client: build it with
:meth:`DeviceRegistry.from_settings` (or hand it a client) wherever needed.
"""

from __future__ import annotations

from datetime import UTC, datetime

import redis

from device_farm.errors import DeviceError
from device_farm.leases import LeaseManager
from device_farm.models import DeviceInfo, DeviceState, DeviceStatus, InflightTask
from droidretriever.config import FarmSettings, Settings

__all__ = ["DeviceRegistry", "open_redis"]

_DEVICES = "farm:devices"


def open_redis(url: str) -> redis.Redis[bytes]:
    """A client for ``url`` that gives up fast and keeps its sockets alive."""
    return redis.Redis.from_url(
        url, socket_connect_timeout=3, socket_timeout=10, socket_keepalive=True,
        health_check_interval=15,
    )


class DeviceRegistry:
    """Read and write the farm's device records."""

    def __init__(self, client: redis.Redis[bytes], farm: FarmSettings) -> None:
        self._redis = client
        self._farm = farm
        self.leases = LeaseManager(client, farm.lease_ttl_s)

    @classmethod
    def from_settings(cls, settings: Settings) -> DeviceRegistry:
        """A registry on ``settings.redis.url`` with ``settings.farm`` timings."""
        return cls(open_redis(settings.redis.url), settings.farm)

    @property
    def client(self) -> redis.Redis[bytes]:
        return self._redis

    @property
    def heartbeat_ttl_s(self) -> float:
        return self._farm.heartbeat_s * self._farm.heartbeat_missed

    @staticmethod
    def _hash(serial: str) -> str:
        return f"farm:device:{serial}"

    @staticmethod
    def _info(serial: str) -> str:
        return f"farm:device:{serial}:info"

    @staticmethod
    def _beat(serial: str) -> str:
        return f"farm:heartbeat:{serial}"

    # ------------------------------------------------------------------ writes

    def register(self, info: DeviceInfo, worker: str) -> None:
        """Record a phone as its worker starts: idle, counters kept, heartbeat now."""
        pipe = self._redis.pipeline()
        pipe.sadd(_DEVICES, info.serial)
        pipe.set(self._info(info.serial), info.model_dump_json())
        pipe.hset(self._hash(info.serial), mapping={
            "state": DeviceState.IDLE.value, "reason": "", "worker": worker,
            "failed_observes": 0,
        })
        pipe.hdel(self._hash(info.serial), "inflight")
        pipe.execute()
        self.heartbeat(info.serial)

    def heartbeat(self, serial: str) -> None:
        """Say the phone's worker is alive, for ``heartbeat_s * heartbeat_missed`` seconds."""
        self._redis.set(
            self._beat(serial), datetime.now(UTC).isoformat(),
            px=max(1, int(self.heartbeat_ttl_s * 1000)),
        )

    def set_state(self, serial: str, state: DeviceState, reason: str = "") -> None:
        """Set the phone's state and why (the reason is shown by ``farm status``)."""
        self._redis.hset(self._hash(serial), mapping={"state": state.value, "reason": reason})

    def record_task(self, serial: str, *, ok: bool) -> None:
        """Count one finished sub-task as done or failed."""
        self._redis.hincrby(self._hash(serial), "tasks_done" if ok else "tasks_failed", 1)

    def record_observe(self, serial: str, *, ok: bool) -> int:
        """Track observe failures in a row; returns the current run of failures."""
        if ok:
            self._redis.hset(self._hash(serial), "failed_observes", 0)
            return 0
        return int(self._redis.hincrby(self._hash(serial), "failed_observes", 1))

    def set_inflight(self, serial: str, task: InflightTask | None) -> None:
        """Remember (or forget) the sub-task the phone's worker is running."""
        if task is None:
            self._redis.hdel(self._hash(serial), "inflight")
        else:
            self._redis.hset(self._hash(serial), "inflight", task.model_dump_json())

    def take_inflight(self, serial: str) -> InflightTask | None:
        """Read and clear the in-flight record at once (so only one monitor redelivers it)."""
        pipe = self._redis.pipeline()
        pipe.hget(self._hash(serial), "inflight")
        pipe.hdel(self._hash(serial), "inflight")
        raw, _ = pipe.execute()
        return InflightTask.model_validate_json(raw) if raw else None

    def remove(self, serial: str) -> None:
        """Forget a phone entirely (``farm down``)."""
        self._redis.delete(self._hash(serial), self._info(serial), self._beat(serial),
                           self.leases.key(serial))
        self._redis.srem(_DEVICES, serial)

    # ------------------------------------------------------------------ reads

    def serials(self) -> tuple[str, ...]:
        """Every registered serial, sorted."""
        return tuple(sorted(_text(s) for s in self._redis.smembers(_DEVICES)))

    def info(self, serial: str) -> DeviceInfo:
        """What the phone is; raises DeviceError for an unknown serial."""
        raw = self._redis.get(self._info(serial))
        if raw is None:
            raise DeviceError(
                f"no phone {serial!r} in the farm registry", serial=serial,
                hint="`droidretriever farm status` lists the phones; start one with `farm up`",
            )
        return DeviceInfo.model_validate_json(raw)

    def last_heartbeat(self, serial: str) -> datetime | None:
        raw = self._redis.get(self._beat(serial))
        return datetime.fromisoformat(_text(raw)) if raw else None

    def status(self, serial: str) -> DeviceStatus:
        """The phone's current standing; a missed heartbeat shows as offline."""
        info = self.info(serial)
        fields = {_text(k): _text(v) for k, v in self._redis.hgetall(self._hash(serial)).items()}
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
        raw = self._redis.hget(self._hash(serial), "failed_observes")
        return int(raw) if raw else 0

    def devices_with_app(self, package: str) -> tuple[str, ...]:
        """Serials of registered phones that have ``package`` installed."""
        return tuple(s for s in self.serials() if package in self.info(s).packages)


def _text(value: bytes | str) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value
