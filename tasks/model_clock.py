"""The run's model clock in Redis: every role's model seconds added, across processes.

The decomposer (the flow's process), each sub-task's roles (device workers,
side by side) and the synthesizer add the time their requests took to one
counter per run; ``budgets.model_s_per_run`` is checked against it before each
call (:class:`inference.llm.ModelMeter`), so a hung or slow server bounds the
whole run, not only each sub-task. A Redis hiccup does not stop a run: the
clock then counts this process's own seconds on top of the last total it read.
"""

from __future__ import annotations

import logging

import redis
from redis import Redis

from tasks.keys import model_seconds_key

__all__ = ["RedisModelClock"]

log = logging.getLogger(__name__)

_TTL_S = 7 * 24 * 3600  # a run's counter outlives any run, and then goes


class RedisModelClock:
    """A :class:`inference.llm.ModelClock` over one Redis key per run."""

    def __init__(self, client: Redis[bytes], run_id: str) -> None:
        self._client = client
        self._key = model_seconds_key(run_id)
        self._known = 0.0  # the last total read or written
        self._unsent = 0.0  # seconds Redis did not take (it was unreachable)

    def spent_s(self) -> float:
        """Seconds of model time the run has spent so far."""
        try:
            raw = self._client.get(self._key)
        except redis.RedisError as exc:
            log.warning("cannot read the run's model time from Redis (%s): counting locally", exc)
            return self._known + self._unsent
        self._known = float(raw) if raw else 0.0
        return self._known + self._unsent

    def add(self, seconds: float) -> float:
        """Add ``seconds`` to the run's model time; returns the new total."""
        try:
            with self._client.pipeline() as pipe:
                pipe.incrbyfloat(self._key, seconds + self._unsent)
                pipe.expire(self._key, _TTL_S)
                total, _ = pipe.execute()
        except redis.RedisError as exc:
            log.warning("cannot add to the run's model time in Redis (%s): counting locally", exc)
            self._unsent += seconds
            return self._known + self._unsent
        self._known, self._unsent = float(total), 0.0
        return self._known
