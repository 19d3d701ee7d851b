"""Device leases: one run holds a phone, across a pause, until it lets go or stops renewing.

A lease is the Redis key ``farm:lease:<serial>`` holding the run id, created
with ``SET NX PX`` so two runs can never hold the same phone. The holder
renews it (the phone's worker does so with every heartbeat while the run is
on it, paused included); if nobody renews it, it expires and the phone is
free. Renew and release compare the holder atomically (Lua), so a run whose
lease already expired and went to another run cannot extend or drop it.
"""

from __future__ import annotations

import redis

from device_farm.errors import DeviceBusy, DeviceLost
from device_farm.keys import lease_key

__all__ = ["LeaseManager"]

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class LeaseManager:
    """Acquire, renew, release and inspect device leases on one Redis."""

    def __init__(self, client: redis.Redis[bytes], ttl_s: float) -> None:
        self._redis = client
        self._ttl_ms = max(1, int(ttl_s * 1000))
        self._renew = client.register_script(_RENEW)
        self._release = client.register_script(_RELEASE)

    @staticmethod
    def key(serial: str) -> str:
        return lease_key(serial)

    def acquire(self, serial: str, run_id: str) -> bool:
        """Take the phone for ``run_id``; True if it is now (or already was) this run's."""
        try:
            if self._redis.set(self.key(serial), run_id, nx=True, px=self._ttl_ms):
                return True
            return self.renew(serial, run_id)
        except redis.RedisError as exc:
            raise DeviceLost(
                f"cannot reach the farm registry to lease {serial}: {exc}", serial=serial,
                hint="is Redis up? `droidretriever status`",
            ) from exc

    def acquire_or_raise(self, serial: str, run_id: str) -> None:
        """Like :meth:`acquire` but raises :class:`DeviceBusy` naming the holder."""
        if not self.acquire(serial, run_id):
            raise DeviceBusy(
                f"{serial} is leased by run {self.holder(serial)}, not {run_id}", serial=serial
            )

    def renew(self, serial: str, run_id: str) -> bool:
        """Push the expiry out by one TTL; False if ``run_id`` no longer holds it."""
        try:
            return bool(self._renew(keys=[self.key(serial)], args=[run_id, self._ttl_ms]))
        except redis.RedisError as exc:
            raise DeviceLost(
                f"cannot reach the farm registry to renew {serial}'s lease: {exc}", serial=serial
            ) from exc

    def release(self, serial: str, run_id: str) -> bool:
        """Let go; False if ``run_id`` did not hold it (expired or never taken)."""
        try:
            return bool(self._release(keys=[self.key(serial)], args=[run_id]))
        except redis.RedisError as exc:
            raise DeviceLost(
                f"cannot reach the farm registry to release {serial}: {exc}", serial=serial
            ) from exc

    def holder(self, serial: str) -> str | None:
        """The run holding the phone, or None."""
        try:
            value = self._redis.get(self.key(serial))
        except redis.RedisError as exc:
            raise DeviceLost(
                f"cannot reach the farm registry to read {serial}'s lease: {exc}", serial=serial,
                hint="is Redis up? `droidretriever status`",
            ) from exc
        return _text(value)

    def remaining_s(self, serial: str) -> float | None:
        """Seconds before the lease expires, or None when there is none."""
        ttl_ms = int(self._redis.pttl(self.key(serial)))
        return ttl_ms / 1000 if ttl_ms > 0 else None


def _text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8")
    return str(value)
