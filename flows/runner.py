"""``python -m flows.runner``: the questions asked from the dashboard run here, as Prefect runs.

The API never runs a flow inside a request: ``POST /runs`` creates a flow run of
the ``retrieve/dashboard`` deployment (:func:`start_run`) and announces its id on
Redis (:data:`~flows.keys.RUNNER_WAKE_CHANNEL`). This process, the local stack's
``runner`` service, has the project imported already (a warm runner): it claims
the flow run (Pending) and runs it at once in a thread of its own, through
Prefect's flow engine, so the run reports its states, logs and sub-flows to the
Prefect UI beside ``ask``'s runs, keeps running when the browser closes, and
pauses and resumes like them. Up to ``api.concurrent_runs`` run at once (a
paused run keeps its slot while it waits for a person); a run created while
all slots are taken, one created elsewhere (the Prefect UI's "Run"), or one
whose announcement was missed is found by a poll every :data:`POLL_S` seconds,
and at once when a slot frees. A run cancelled in the Prefect UI is asked to stop
and report (:func:`flows.stop.request_stop`), as the dashboard's Stop does.

    POST /runs --create flow run--> Prefect      (Scheduled)
               --publish id-------> Redis ---> WarmRunner: claim (Pending) -> thread:
                                               run_flow(retrieve, flow_run) -> Running ...

A run whose runner process dies is found by the crash sweep (its beacon goes
out, :mod:`flows.crashes`), as before. What it serves is written to
``--status-file`` (for ``droidretriever status``).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import queue
import threading
import time
from pathlib import Path
from typing import Any, cast
from uuid import UUID

import httpx
import redis
from prefect import Flow
from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.filters import (
    FlowRunFilter,
    FlowRunFilterId,
    FlowRunFilterState,
    FlowRunFilterStateType,
)
from prefect.client.schemas.objects import FlowRun, StateType
from prefect.client.schemas.responses import FlowRunResponse
from prefect.deployments.runner import RunnerDeployment
from prefect.exceptions import Abort, ObjectNotFound, PrefectException
from prefect.flow_engine import load_flow_run, run_flow
from prefect.settings import PREFECT_CLIENT_MAX_RETRIES, temporary_settings
from prefect.states import Crashed, Pending
from prefect.utilities.engine import propose_state_sync
from pydantic import ValidationError

from core.config import Settings, load_settings
from core.models import ServingStatus, utcnow
from core.redis_client import open_redis
from flows.errors import FlowError
from flows.keys import RUNNER_WAKE_CHANNEL
from flows.models import RetrieveRequest
from flows.retrieve import retrieve
from flows.serve import write_status
from flows.stop import request_stop

__all__ = ["DEPLOYMENT", "POLL_S", "WarmRunner", "main", "serve_runs", "start_run",
           "to_deployment"]

log = logging.getLogger(__name__)

DEPLOYMENT = "retrieve/dashboard"  # <flow name>/<deployment name>
# How often the runner asks Prefect for runs nobody announced (and marks itself alive there):
# announced runs start at once, so this only bounds the wait of a run queued for a free slot.
POLL_S = 2.0
_STALE_S = 60.0  # a runner that has not polled for this long is not running
_STATUS_EVERY_S = 5.0  # deploy.local.RunnerService.check_interval_s
# POST /runs waits on Prefect for at most two requests of this long each, each tried twice (a
# busy server's SQLite can stall one), not Prefect's default of 60 s tried six times: a person
# who asked gets an answer (503 with a hint) within a minute.
START_REQUEST_S = 10.0
_START_TRIES = 2
_PREFECT_ERRORS = (httpx.HTTPError, PrefectException)


def to_deployment() -> RunnerDeployment:
    """The ``retrieve`` flow as the deployment the runner serves (no schedule: runs on demand)."""
    # Called from sync code, so Prefect's async-dispatching method returns the deployment itself.
    return cast(RunnerDeployment, retrieve.to_deployment(
        name=DEPLOYMENT.split("/", 1)[1], tags=["dashboard"],
        description="Questions asked from the dashboard or the HTTP API (POST /runs).",
    ))


def start_run(request: RetrieveRequest, wake: redis.Redis[bytes] | None = None) -> UUID:
    """Create a flow run of the served deployment for ``request``; the runner executes it.

    Returns the Prefect flow run id at once, after announcing it on ``wake`` (the runner
    starts an announced run at once; without ``wake`` it finds it at its next poll). Raises
    :class:`FlowError` when the deployment does not exist, no runner has polled for it
    lately, or Prefect does not answer in time (:data:`START_REQUEST_S`). The run id is the
    flow run's idempotency key, so a request tried again never makes a second run.
    """
    if request.run_id is None:
        raise ValueError("start_run needs a run id chosen by the caller")
    try:
        with temporary_settings({PREFECT_CLIENT_MAX_RETRIES: _START_TRIES - 1}), \
                get_client(sync_client=True,
                           httpx_settings={"timeout": httpx.Timeout(START_REQUEST_S)}) as client:
            deployment = client.read_deployment_by_name(DEPLOYMENT)
            polled = deployment.last_polled
            if polled is None or (utcnow() - polled).total_seconds() > _STALE_S:
                raise FlowError(
                    "no runner executes the dashboard's runs now",
                    hint="start it with `droidretriever up` (the `runner` service); "
                         "`droidretriever status` shows it")
            flow_run = client.create_flow_run_from_deployment(
                deployment.id, parameters={"request": request.model_dump(mode="json")},
                tags=[f"run:{request.run_id}", "dashboard"], idempotency_key=request.run_id)
    except ObjectNotFound as exc:
        raise FlowError("the dashboard's runs have no Prefect deployment yet",
                        hint="start the `runner` service with `droidretriever up`") from exc
    except httpx.TimeoutException as exc:
        raise FlowError(f"Prefect did not answer within {START_REQUEST_S:g} s "
                        f"({type(exc).__name__}); the run was not started",
                        hint="try again in a minute; `droidretriever status` shows Prefect") from exc
    except _PREFECT_ERRORS as exc:
        raise FlowError(f"cannot start the run on Prefect: {exc}",
                        hint="is the Prefect server up? `droidretriever status`") from exc
    if wake is not None:
        try:
            wake.publish(RUNNER_WAKE_CHANNEL, str(flow_run.id))
        except redis.RedisError as exc:  # the runner's poll finds the run a little later
            log.warning("could not announce flow run %s to the runner: %s", flow_run.id, exc)
    return flow_run.id


class WarmRunner:
    """Executes a deployment's flow runs in this process, each in a thread, ``limit`` at once.

    ``flow`` is the deployment's flow (``retrieve`` for the dashboard's deployment); its runs
    take the dashboard's run id from their ``request`` parameter (for a cancel in Prefect).
    ``poll_s``: how often it asks Prefect for runs nobody announced, and for cancels.

    One thread (:meth:`serve`) claims runs: announced ids from the listener thread, the
    poll's findings, a fresh poll whenever a run ends. Claiming proposes Pending, so a run
    another runner took, or one cancelled before it started, is left alone.
    """

    def __init__(self, deployment_id: UUID, limit: int, client: redis.Redis[bytes],
                 flow: Flow[[RetrieveRequest], Any] = retrieve, poll_s: float = POLL_S) -> None:
        self._deployment_id = deployment_id
        self._poll_s = poll_s
        self._flow = flow
        self._limit = limit
        self._redis = client
        self._lock = threading.Lock()
        self._running: dict[UUID, str] = {}  # flow run id -> run id, claimed or running here
        self._stopping: set[UUID] = set()  # cancelled in Prefect, asked to stop already
        self._inbox: queue.Queue[UUID | None] = queue.Queue()  # None: a slot freed, poll now
        self.started = 0

    @property
    def running(self) -> int:
        """Flow runs claimed or running in this process now."""
        with self._lock:
            return len(self._running)

    def serve(self, stop: threading.Event) -> None:
        """Claim and start runs until ``stop`` is set (the runs under way go on meanwhile)."""
        threading.Thread(target=self._listen, args=(stop,), daemon=True,
                         name="runner-wake").start()
        next_poll = 0.0
        with get_client(sync_client=True) as client:
            while not stop.is_set():
                if time.monotonic() >= next_poll:
                    self._poll(client)
                    next_poll = time.monotonic() + self._poll_s
                try:
                    woken = self._inbox.get(timeout=max(0.0, next_poll - time.monotonic()))
                except queue.Empty:
                    continue
                if woken is None:
                    next_poll = 0.0
                    continue
                try:
                    self._offer(client, client.read_flow_run(woken))
                except _PREFECT_ERRORS as exc:
                    log.warning("cannot read announced flow run %s: %s", woken, exc)

    def _listen(self, stop: threading.Event) -> None:
        """Put every announced flow run id in the inbox; a lost Redis is retried each second."""
        while not stop.is_set():
            try:
                with self._redis.pubsub(ignore_subscribe_messages=True) as channel:
                    channel.subscribe(RUNNER_WAKE_CHANNEL)
                    while not stop.is_set():
                        message = channel.get_message(timeout=1.0)
                        if message is not None:
                            self._inbox.put(UUID(bytes(message["data"]).decode()))
            except (redis.RedisError, ValueError) as exc:
                log.warning("runner announcements: %s; the poll finds new runs meanwhile", exc)
                stop.wait(1.0)

    def _poll(self, client: SyncPrefectClient) -> None:
        """Offer every scheduled run of the deployment (oldest first); mark cancelled ones."""
        try:
            found = client.get_scheduled_flow_runs_for_deployments(
                deployment_ids=[self._deployment_id], scheduled_before=utcnow())
            for flow_run in sorted(found, key=lambda r: r.expected_start_time or utcnow()):
                self._offer(client, flow_run)
            self._stop_cancelled(client)
        except _PREFECT_ERRORS as exc:
            log.warning("cannot ask Prefect for the dashboard's runs: %s", exc)

    def _offer(self, client: SyncPrefectClient, flow_run: FlowRun | FlowRunResponse) -> None:
        """Start ``flow_run`` here if it is the deployment's, still scheduled, and a slot is free."""
        if flow_run.deployment_id != self._deployment_id or flow_run.state is None \
                or not flow_run.state.is_scheduled():
            return
        with self._lock:
            if flow_run.id in self._running or len(self._running) >= self._limit:
                return
            self._running[flow_run.id] = _run_id_of(flow_run)
        try:
            claimed = propose_state_sync(client, Pending(), flow_run_id=flow_run.id).is_pending()
        except Abort:
            claimed = False  # another runner has it, or it was cancelled meanwhile
        except _PREFECT_ERRORS as exc:
            log.warning("cannot claim flow run %s: %s", flow_run.id, exc)
            claimed = False
        if not claimed:
            self._release(flow_run.id)
            return
        self.started += 1
        threading.Thread(target=self._execute, args=(flow_run.id,), daemon=True,
                         name=f"run-{flow_run.id}").start()

    def _execute(self, flow_run_id: UUID) -> None:
        """Run the claimed flow run through Prefect's engine, in this thread."""
        try:
            run_flow(self._flow, flow_run=load_flow_run(flow_run_id), return_type="state")
        except Exception as exc:  # the engine itself failed; the flow's own errors are its state
            log.exception("flow run %s could not run", flow_run_id)
            _propose_crashed(flow_run_id, f"the runner could not run it: {type(exc).__name__}: {exc}")
        finally:
            self._release(flow_run_id)

    def _release(self, flow_run_id: UUID) -> None:
        with self._lock:
            self._running.pop(flow_run_id, None)
            self._stopping.discard(flow_run_id)
        self._inbox.put(None)  # a slot is free: look for runs that waited for one

    def _stop_cancelled(self, client: SyncPrefectClient) -> None:
        """Runs here that someone cancelled in the Prefect UI stop and report, as the Stop button."""
        with self._lock:
            asked = [i for i in self._running if i not in self._stopping]
        if not asked:
            return
        cancelled = client.read_flow_runs(flow_run_filter=FlowRunFilter(
            id=FlowRunFilterId(any_=asked),
            state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.CANCELLING]))))
        for flow_run in cancelled:
            with self._lock:
                run_id = self._running.get(flow_run.id)
                self._stopping.add(flow_run.id)
            if run_id:
                log.info("flow run %s was cancelled in Prefect: run %s stops and reports",
                         flow_run.id, run_id)
                request_stop(self._redis, run_id)


def _run_id_of(flow_run: FlowRun | FlowRunResponse) -> str:
    """The run id the dashboard gave ``flow_run`` ("" when its parameters carry none)."""
    try:
        return RetrieveRequest.model_validate(flow_run.parameters.get("request", {})).run_id or ""
    except ValidationError:
        return ""


def _propose_crashed(flow_run_id: UUID, message: str) -> None:
    try:
        with get_client(sync_client=True) as client:
            flow_run = client.read_flow_run(flow_run_id)
            if flow_run.state is None or not flow_run.state.is_final():
                propose_state_sync(client, Crashed(message=message), flow_run_id=flow_run_id)
    except (Abort, *_PREFECT_ERRORS) as exc:
        log.warning("cannot mark flow run %s crashed: %s", flow_run_id, exc)


def serve_runs(settings: Settings, status_file: Path | None) -> None:
    """Serve the deployment until interrupted, reporting to ``status_file`` every few seconds."""
    # Sync code: Prefect's async-dispatching method returns the id itself.
    deployment_id = cast(UUID, to_deployment().apply())
    runner = WarmRunner(deployment_id, settings.api.concurrent_runs, open_redis(settings.redis))
    stop = threading.Event()
    if status_file is not None:
        threading.Thread(target=_report, args=(status_file, stop), daemon=True,
                         name="runner-status").start()
    log.info("serving %s, %d runs at once", DEPLOYMENT, settings.api.concurrent_runs)
    try:
        runner.serve(stop)
    finally:
        stop.set()


def _report(path: Path, stop: threading.Event) -> None:
    while True:
        write_status(path, ServingStatus(pid=os.getpid(), child_pid=os.getpid(),
                                         deployments=(DEPLOYMENT,)))
        if stop.wait(_STATUS_EVERY_S):
            return


def main(argv: list[str] | None = None) -> None:
    """Serve the dashboard's runs."""
    parser = argparse.ArgumentParser(description="Run the questions asked from the dashboard.")
    parser.add_argument("--status-file", type=Path, default=None,
                        help="where to write what is served (for `droidretriever status`)")
    args = parser.parse_args(argv)
    logging.basicConfig(level="INFO", format="%(asctime)s %(name)s %(levelname)s %(message)s")
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C in a terminal: no traceback
        serve_runs(load_settings(), args.status_file)


if __name__ == "__main__":
    main()
