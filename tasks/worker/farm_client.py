"""Send device tasks to the farm and read typed results back.

Messages are pydantic models on the wire (``model_dump(mode="json")`` out,
``model_validate`` back); callers never see the JSON dict.

A message can be lost in the broker: a worker's ``BRPOP`` takes it off its queue
and Redis sends it, but the worker's host loses power or its network before the
message is recorded in ``unacked`` (where the farm monitor and the visibility
sweep would find it). Nothing would ever deliver it again and the caller would
wait for its whole timeout. So while it waits, :meth:`PendingResult.get` looks
for its message every ``LOST_CHECK_S``: on a queue, handed out (``unacked``), in
flight on a phone, or ended. Missing from all of them at ``LOST_AFTER_CHECKS``
checks in a row (a message in the instant between a pop and its record is seen
at the next), it is sent again under the same task id; a worker never runs a
task twice (:func:`tasks.worker.device_tasks.find_repeat_delivery`).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from celery import Celery
from celery.exceptions import TimeoutError as CeleryTimeout
from celery.result import AsyncResult
from pydantic import BaseModel

from device_farm.errors import DeviceError, DeviceTimeout
from device_farm.registry import DeviceRegistry
from tasks.worker.queues import app_queue, device_queue

__all__ = ["LOST_AFTER_CHECKS", "LOST_CHECK_S", "FarmClient", "PendingResult"]

log = logging.getLogger(__name__)

LOST_CHECK_S = 5.0
LOST_AFTER_CHECKS = 2

# KEYS: a queue's lists (one per priority), then the broker's unacked hash; ARGV[1]: a task id.
# 1 when a message of that task waits on the queue or was handed to a worker.
_HELD = """
for i = 1, #KEYS - 1 do
  for _, raw in ipairs(redis.call('LRANGE', KEYS[i], 0, -1)) do
    if string.find(raw, ARGV[1], 1, true) then return 1 end
  end
end
for _, raw in ipairs(redis.call('HVALS', KEYS[#KEYS])) do
  if string.find(raw, ARGV[1], 1, true) then return 1 end
end
return 0
"""

ResultT = TypeVar("ResultT", bound=BaseModel)


@dataclass(frozen=True)
class _Message:
    """A sent device task, as the broker and the registry know it: where to look, how to resend."""

    app: Celery
    registry: DeviceRegistry | None
    task_name: str
    queue: str
    args: tuple[Any, ...]

    def is_lost(self, task_id: str) -> bool:
        """Whether no queue holds the message, no worker was handed it and no phone runs it."""
        with self.app.connection_for_write() as conn:
            channel: Any = conn.default_channel
            lists = [channel._q_for_pri(self.queue, pri) for pri in channel.priority_steps]
            # Searched inside Redis: a long queue's messages never cross the network.
            if channel.client.register_script(_HELD)(keys=[*lists, channel.unacked_key],
                                                     args=[task_id]):
                return False
        if self.registry is None:
            return True
        return not any(s.inflight is not None and s.inflight.task_id == task_id
                       for s in self.registry.statuses())

    def send(self, task_id: str | None = None) -> AsyncResult[Any]:
        return self.app.send_task(self.task_name, args=self.args, queue=self.queue,
                                  routing_key=self.queue, task_id=task_id)


class PendingResult(Generic[ResultT]):
    """A submitted device task; :meth:`get` waits for its typed result."""

    def __init__(self, result: AsyncResult[Any], model: type[ResultT],
                 message: _Message | None = None) -> None:
        self._result = result
        self._model = model
        self._message = message
        self.resent = 0  # how often its message was lost and sent again

    @property
    def task_id(self) -> str:
        return str(self._result.id)

    def ready(self) -> bool:
        return bool(self._result.ready())

    def get(self, timeout: float = 60.0) -> ResultT:
        """The result model; raises DeviceTimeout / DeviceError when the task did not succeed.

        A message lost in the broker is sent again while it waits (see the module doc).
        """
        deadline = time.monotonic() + timeout
        missing = 0
        while True:
            left = deadline - time.monotonic()
            try:
                payload = self._result.get(timeout=max(0.0, min(left, LOST_CHECK_S)),
                                           propagate=True, interval=0.005)
                break
            except CeleryTimeout as exc:
                if left <= LOST_CHECK_S:
                    # Celery keeps a waiter that timed out subscribed until its task ends: let
                    # it go now (a later get() subscribes again).
                    self._result.backend.remove_pending_result(self._result)
                    raise DeviceTimeout(
                        f"task {self.task_id} gave no result within {timeout:.0f} s",
                        hint="are the farm's workers up? `droidretriever farm status`",
                    ) from exc
                missing = self._look_for_message(missing)
            except DeviceError:
                raise
            except Exception as exc:  # the task's own error, re-raised by Celery from the backend
                raise DeviceError(f"task {self.task_id} failed: {type(exc).__name__}: {exc}") from exc
        return self._model.model_validate(payload)

    def _look_for_message(self, missing: int) -> int:
        """One check for a lost message; the checks in a row it was missing (0 once resent)."""
        if self._message is None or self._result.ready():
            return 0
        if not self._message.is_lost(self.task_id):
            return 0
        if missing + 1 < LOST_AFTER_CHECKS:
            return missing + 1
        log.warning("task %s (%s) was lost by the broker (no queue, worker or phone has it): "
                    "sent again", self.task_id, self._message.task_name)
        self._message.send(self.task_id)
        self.resent += 1
        return 0


class FarmClient:
    """Enqueue device tasks by app (any phone with it) or by serial (that phone)."""

    def __init__(self, app: Celery, registry: DeviceRegistry | None = None) -> None:
        """``registry``: where phones record the task they run (a message out of the broker
        while its phone runs it is not lost); without it, only the broker is looked at."""
        self._app = app
        self._registry = registry

    def send_to_app(self, task_name: str, package: str, request: BaseModel,
                    result_model: type[ResultT]) -> PendingResult[ResultT]:
        """Run on any free phone that has ``package`` installed."""
        return self._send(task_name, app_queue(package), request, result_model)

    def send_to_device(self, task_name: str, serial: str, request: BaseModel,
                       result_model: type[ResultT]) -> PendingResult[ResultT]:
        """Run on the phone ``serial`` (e.g. to resume a paused run where it stopped)."""
        return self._send(task_name, device_queue(serial), request, result_model)

    def _send(self, task_name: str, queue: str, request: BaseModel,
              result_model: type[ResultT]) -> PendingResult[ResultT]:
        message = _Message(self._app, self._registry, task_name, queue,
                           (request.model_dump(mode="json"),))
        return PendingResult(message.send(), result_model, message)
