"""``python -m flows.runner``: the questions asked from the dashboard run here, as Prefect runs.

The API never runs a flow inside a request: ``POST /runs`` creates a flow run of
the ``retrieve/dashboard`` deployment (:func:`start_run`), and this process, the
local stack's ``runner`` service, picks it up (it polls every second) and
executes it in a child process, as Prefect's runner does. So a run started in a
browser keeps running when the browser closes, shows in the Prefect UI beside
``ask``'s runs, and pauses and resumes like them; up to ``api.concurrent_runs``
run at once (a paused run keeps its slot while it waits for a person).

What it serves is written to ``--status-file`` (for ``droidretriever status``).
"""

from __future__ import annotations

import argparse
import logging
import os
import threading
from pathlib import Path
from typing import cast
from uuid import UUID

import httpx
from prefect.client.orchestration import get_client
from prefect.deployments.runner import RunnerDeployment
from prefect.exceptions import ObjectNotFound, PrefectException
from prefect.settings import PREFECT_CLIENT_MAX_RETRIES, temporary_settings

from droidretriever.config import Settings, load_settings
from droidretriever.models import ServingStatus, utcnow
from flows.errors import FlowError
from flows.models import RetrieveRequest
from flows.retrieve import retrieve
from flows.serve import write_status

__all__ = ["DEPLOYMENT", "POLL_S", "main", "serve_runs", "start_run", "to_deployment"]

log = logging.getLogger(__name__)

DEPLOYMENT = "retrieve/dashboard"  # <flow name>/<deployment name>
POLL_S = 1  # how often the runner asks Prefect for new runs: the start latency it adds
_STALE_S = 60.0  # a runner that has not polled for this long is not running
_STATUS_EVERY_S = 5.0  # deploy.local.RunnerService.check_interval_s
# POST /runs waits on Prefect for at most two requests of this long each, each tried twice (a
# busy server's SQLite can stall one), not Prefect's default of 60 s tried six times: a person
# who asked gets an answer (503 with a hint) within a minute.
START_REQUEST_S = 10.0
_START_TRIES = 2


def to_deployment() -> RunnerDeployment:
    """The ``retrieve`` flow as the deployment the runner serves (no schedule: runs on demand)."""
    # Called from sync code, so Prefect's async-dispatching method returns the deployment itself.
    return cast(RunnerDeployment, retrieve.to_deployment(
        name=DEPLOYMENT.split("/", 1)[1], tags=["dashboard"],
        description="Questions asked from the dashboard or the HTTP API (POST /runs).",
    ))


def start_run(request: RetrieveRequest) -> UUID:
    """Create a flow run of the served deployment for ``request``; the runner executes it.

    Returns the Prefect flow run id at once. Raises :class:`FlowError` when the
    deployment does not exist, no runner has polled for it lately, or Prefect does
    not answer in time (:data:`START_REQUEST_S`). The run id is the flow run's
    idempotency key, so a request tried again never makes a second run.
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
    except (httpx.HTTPError, PrefectException) as exc:
        raise FlowError(f"cannot start the run on Prefect: {exc}",
                        hint="is the Prefect server up? `droidretriever status`") from exc
    return flow_run.id


def serve_runs(settings: Settings, status_file: Path | None) -> None:
    """Serve the deployment until stopped, reporting to ``status_file`` every few seconds."""
    from prefect import serve

    stop = threading.Event()
    if status_file is not None:
        threading.Thread(target=_report, args=(status_file, stop), daemon=True,
                         name="runner-status").start()
    try:
        serve(to_deployment(), print_starting_message=False, limit=settings.api.concurrent_runs,
              pause_on_shutdown=False, query_seconds=POLL_S)
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
    serve_runs(load_settings(), args.status_file)


if __name__ == "__main__":
    main()
