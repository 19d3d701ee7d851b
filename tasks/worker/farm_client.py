"""Send device tasks to the farm and read typed results back.

Messages are pydantic models on the wire (``model_dump(mode="json")`` out,
``model_validate`` back); callers never see the JSON dict.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from celery import Celery
from celery.exceptions import TimeoutError as CeleryTimeout
from celery.result import AsyncResult
from pydantic import BaseModel

from device_farm.errors import DeviceError, DeviceTimeout
from tasks.worker.queues import app_queue, device_queue

__all__ = ["FarmClient", "PendingResult"]

ResultT = TypeVar("ResultT", bound=BaseModel)


class PendingResult(Generic[ResultT]):
    """A submitted device task; :meth:`get` waits for its typed result."""

    def __init__(self, result: AsyncResult[Any], model: type[ResultT]) -> None:
        self._result = result
        self._model = model

    @property
    def task_id(self) -> str:
        return str(self._result.id)

    def ready(self) -> bool:
        return bool(self._result.ready())

    def get(self, timeout: float = 60.0) -> ResultT:
        """The result model; raises DeviceTimeout / DeviceError when the task did not succeed."""
        try:
            payload = self._result.get(timeout=timeout, propagate=True, interval=0.005)
        except CeleryTimeout as exc:
            raise DeviceTimeout(
                f"task {self.task_id} gave no result within {timeout:.0f} s",
                hint="are the farm's workers up? `droidretriever farm status`",
            ) from exc
        except DeviceError:
            raise
        except Exception as exc:  # the task's own error, re-raised by Celery from the backend
            raise DeviceError(f"task {self.task_id} failed: {type(exc).__name__}: {exc}") from exc
        return self._model.model_validate(payload)


class FarmClient:
    """Enqueue device tasks by app (any phone with it) or by serial (that phone)."""

    def __init__(self, app: Celery) -> None:
        self._app = app

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
        result = self._app.send_task(
            task_name, args=(request.model_dump(mode="json"),), queue=queue, routing_key=queue
        )
        return PendingResult(result, result_model)
