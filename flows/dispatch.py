"""The Prefect task that runs one sub-task on the farm and waits for its typed result.

Retries, one place per kind of fault (docs/architecture.md "Faults"):

- task-level faults are Prefect's: the device task raised (a bug or a
  transient fault inside the copilot), or it ended ``failed`` with tries of
  ``budgets.retries`` left (a copilot that already spent its own tries, with
  reflection between them, is not tried again). The reason is kept in Redis
  (:func:`read_tips`) and published, and the next try goes out as a new
  delivery (:class:`NavigateRequest` ``delivery``), so its captures do not
  collide with the failed try's;
- a worker that dies mid-task is Celery's: ``acks_late`` + the farm monitor put
  the same message back for another phone, and this task keeps waiting for
  the same result id. A timeout or a broken device task is not retried here,
  so a redelivered message is never also re-sent by Prefect;
- a model that refuses its requests (4xx) is a configuration error
  (:class:`ModelConfigError`): never retried, it stops the run.
"""

from __future__ import annotations

import threading
from types import TracebackType

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.objects import State, TaskRun
from prefect.context import TaskRunContext
from prefect.tasks import Task
from redis import Redis

from core.config import load_settings
from core.models import (
    RunEventKind,
    RunManifest,
    SubTask,
    SubTaskResult,
    SubTaskStatus,
    TokenLedger,
    merge_tallies,
    tally_fallbacks,
)
from device_farm.errors import DeviceError, DeviceTimeout
from device_farm.leases import LeaseManager
from flows.errors import AttemptFailedError, ModelConfigError
from flows.keys import tips_key
from flows.runtime import open_services
from tasks.navigate import NavigateRequest

__all__ = [
    "RESULT_TIMEOUT_S",
    "LeaseKeeper",
    "count_model_costs",
    "navigate_subtask",
    "read_tips",
    "retry_failed_attempts",
]

RESULT_TIMEOUT_S = 1800.0  # a sub-task longer than this is stuck; the flow records it as failed
_TIPS_TTL_S = 24 * 3600


def read_tips(run_id: str, subtask_id: str) -> tuple[str, ...]:
    """The tips earlier tries left for this sub-task, oldest first."""
    return _tips(open_services(load_settings()).redis, run_id, subtask_id)


def _tips(client: Redis[bytes], run_id: str, subtask_id: str) -> tuple[str, ...]:
    return tuple(t.decode() for t in client.lrange(tips_key(run_id, subtask_id), 0, -1))


def retry_failed_attempts(task: Task[..., object], task_run: TaskRun, state: State[object]) -> bool:
    """Prefect retries only a try the copilot reported as failed, never a lost worker or timeout."""
    try:
        error = state.result(raise_on_failure=False)
    except Exception:  # an unreadable state: do not guess, do not retry
        return False
    if isinstance(error, AttemptFailedError):
        return True
    # The device task raised: a task-level fault. A timeout is not: the message may still be
    # on its way to another phone (Celery's redelivery), and sending it again would duplicate it.
    return isinstance(error, DeviceError) and not isinstance(error, DeviceTimeout)


@task(
    name="navigate",
    task_run_name="{subtask.app_label} · {subtask.id}",
    cache_policy=NO_CACHE,
    retry_condition_fn=retry_failed_attempts,
    retry_delay_seconds=0,
)
def navigate_subtask(run_id: str, subtask: SubTask, navigate_task: str,
                     device: str | None = None, resumed: int = 0) -> SubTaskResult:
    """Send the sub-task to a phone with its app (or to ``device``) and wait for the result.

    ``resumed``: how often a person has had the phone for it (pauses continued); after one,
    the first try goes on from the screen they left instead of restarting the app.
    """
    services = open_services(load_settings())
    context = TaskRunContext.get()
    attempt = max(1, context.task_run.run_count) if context and context.task_run else 1
    tries = services.settings.budgets.retries
    request = NavigateRequest(run_id=run_id, subtask=subtask, delivery=attempt,
                              tips=_tips(services.redis, run_id, subtask.id) if attempt > 1 else (),
                              resumed=resumed)
    if device is not None:
        pending = services.farm.send_to_device(navigate_task, device, request, SubTaskResult)
    else:
        pending = services.farm.send_to_app(navigate_task, subtask.package, request, SubTaskResult)
    result = pending.get(timeout=RESULT_TIMEOUT_S)
    count_model_costs(run_id, subtask.id, result)
    if result.config_error:
        # A model refusing requests will refuse them on every try: stop, do not retry.
        raise ModelConfigError(result.config_error, hint=result.config_hint)
    if result.status is SubTaskStatus.FAILED and result.attempt < tries and attempt < tries:
        tip = f"try {attempt} failed: {result.reason or 'no reason given'}"
        key = tips_key(run_id, subtask.id)
        services.redis.rpush(key, tip)
        services.redis.expire(key, _TIPS_TTL_S)
        services.publish(run_id, RunEventKind.LOG, subtask_id=subtask.id, message=tip)
        raise AttemptFailedError(result)
    return result


def count_model_costs(run_id: str, subtask_id: str, result: SubTaskResult) -> None:
    """Add one delivery's model tokens and fallbacks to the run's manifest (failed tries count too).

    Fallbacks also go to the Prefect run's log, one line per role.
    """
    ledger = result.trace.ledger
    tallies = tally_fallbacks(result.trace.fallbacks)
    if not ledger.roles and not tallies:
        return
    logger = get_run_logger()
    for tally in tallies:
        logger.warning("%s: %s", subtask_id, tally.sentence())

    def change(manifest: RunManifest) -> RunManifest:
        known = manifest.subtask_tokens.get(subtask_id, TokenLedger())
        return manifest.model_copy(update={
            "subtask_tokens": {**manifest.subtask_tokens, subtask_id: known + ledger},
            "tokens": manifest.tokens + ledger, "fallbacks": merge_tallies(manifest.fallbacks, tallies)})

    open_services(load_settings()).update_manifest(run_id, change)


class LeaseKeeper:
    """Holds a phone's lease for a run while the flow waits (a pause, between sub-tasks).

    The phone's worker renews the lease only while a task of the run is on it;
    between tasks and during a pause the flow renews it itself, every third of
    the TTL, so no other run's sub-task lands on a phone a person is using.
    """

    def __init__(self, leases: LeaseManager, serial: str, run_id: str, ttl_s: float) -> None:
        self._leases, self._serial, self._run_id = leases, serial, run_id
        self._interval = max(0.2, ttl_s / 3)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.held = False

    def start(self) -> bool:
        """Take (or keep) the lease and renew it in the background; False if another run has it."""
        try:
            self.held = self._leases.acquire(self._serial, self._run_id)
        except DeviceError:
            self.held = False
        if self.held:
            self._thread = threading.Thread(target=self._renew, daemon=True,
                                            name=f"lease-{self._serial}")
            self._thread.start()
        return self.held

    def stop(self) -> None:
        """Stop renewing; the lease itself stays until it expires or is released."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> LeaseKeeper:
        self.start()
        return self

    def _renew(self) -> None:
        # A lease lost with a restarted Redis is taken back; one another run took is let go.
        while not self._stop.wait(self._interval):
            try:
                if not self._leases.renew(self._serial, self._run_id) and not self._leases.acquire(
                    self._serial, self._run_id
                ):
                    self.held = False
                    return
            except DeviceError:
                continue  # Redis restarting: try again at the next beat

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
