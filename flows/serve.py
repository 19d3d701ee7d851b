"""``python -m flows.serve``: run every subscription and benchmark schedule on its schedule.

This is the local stack's ``subscriptions`` service (``droidretriever up`` starts
it after the Prefect server). The Prefect server's scheduler creates each
subscription's flow runs; this process executes them. Prefect's ``serve()``
serves the deployments it started with, so this process supervises a child that
serves them and restarts it whenever the set of subscriptions (or a schedule)
changes, checked every ``--interval`` seconds. What it serves is written to
``--status-file`` for ``droidretriever status``. At each check it also marks
crashed the runs whose process died (:func:`flows.crashes.sweep_crashed_runs`),
so a killed ``ask`` is found while the stack runs, whether or not anyone looks.

Both processes talk to the Prefect server the settings name
(``DROIDRETRIEVER_PREFECT__API_URL``), never to a temporary one.
"""

from __future__ import annotations

import argparse
import ctypes
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

from core.config import Settings, load_settings
from core.errors import DroidRetrieverError
from core.models import ServingStatus
from core.private_files import write_private
from flows.bench.schedules import BenchScheduleStore, bench_deployment_name, to_bench_deployment
from flows.crashes import sweep_crashed_runs
from flows.maps import maps_deployment
from flows.runtime import open_services
from flows.subscriptions import SubscriptionStore, deployment_name, to_deployment
from storage import StorageError, open_object_store

__all__ = ["main", "serve_current", "subscription_signature", "write_status"]

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1


def subscription_signature(store: SubscriptionStore, benches: BenchScheduleStore | None = None,
                           ) -> tuple[tuple[str, str, bool], ...]:
    """What the served set depends on: each deployment's name, schedule and paused flag
    (the subscriptions', then the benchmark schedules')."""
    served = [(deployment_name(s.id), s.schedule, s.paused) for s in store.list()]
    if benches is not None:
        served += [(bench_deployment_name(b.id), b.schedule, b.paused) for b in benches.list()]
    return tuple(served)


def serve_current(settings: Settings) -> None:
    """Serve the subscriptions that exist now (blocks; the supervisor restarts it on change)."""
    from prefect import serve

    objects = open_object_store(settings)
    deployments = [to_deployment(s) for s in SubscriptionStore(objects).list()]
    deployments += [to_bench_deployment(b) for b in BenchScheduleStore(objects).list()]
    if settings.maps.refresh_hours > 0:
        deployments.append(maps_deployment(settings.maps.refresh_hours))
    if not deployments:
        log.info("no subscriptions yet; waiting for `droidretriever subscribe`")
        while True:
            time.sleep(3600)
    # One run at a time: subscriptions share the farm's phones with everything else. A stopped
    # service leaves the schedules active (runs go Late), it does not pause them.
    serve(*deployments, print_starting_message=False, limit=1, pause_on_shutdown=False)


def write_status(path: Path, status: ServingStatus) -> None:
    """Write the status file whole (temp file + rename), readable only by us."""
    write_private(path, status.model_dump_json())


def _die_with_parent() -> None:
    """In the child: SIGTERM when the supervisor dies, even by SIGKILL (Linux)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


def _start_child(settings: Settings) -> subprocess.Popen[bytes]:
    env = {**os.environ, **settings.prefect.client_env()}
    return subprocess.Popen([sys.executable, "-m", "flows.serve", "--child"], env=env,
                            preexec_fn=_die_with_parent)


def supervise(settings: Settings, status_file: Path | None, interval_s: float) -> None:
    """Keep a child serving the current subscriptions; restart it when they change or it dies."""
    objects = open_object_store(settings)
    store, benches = SubscriptionStore(objects), BenchScheduleStore(objects)
    error: str | None = None
    while True:
        try:
            signature = subscription_signature(store, benches)
        except StorageError as exc:
            error = f"cannot read the subscriptions: {exc}"
            log.warning("%s; retrying in %.0f s", error, interval_s)
            _report(status_file, None, (), error)
            time.sleep(interval_s)
            continue
        child = _start_child(settings)
        log.info("serving %d subscription(s) (pid %d)", len(signature), child.pid)
        try:
            while child.poll() is None:
                _report(status_file, child.pid, signature, error)
                time.sleep(interval_s)
                _sweep(settings)
                try:
                    if subscription_signature(store, benches) != signature:
                        log.info("subscriptions changed; restarting the serving process")
                        break
                except StorageError as exc:
                    log.warning("cannot read the subscriptions (serving the last known set): %s",
                                exc)
            else:
                error = f"the serving process exited with code {child.returncode}"
                log.warning("%s; restarting it in %.0f s", error, interval_s)
                _report(status_file, None, signature, error)
                time.sleep(interval_s)
        finally:
            if child.poll() is None:
                child.terminate()
                try:
                    child.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()


def _sweep(settings: Settings) -> None:
    """Mark crashed the runs whose process died; a sweep that cannot run now is logged."""
    try:
        for found in sweep_crashed_runs(open_services(settings)):
            log.warning("%s", found.describe())
    except DroidRetrieverError as exc:
        log.warning("crashed runs not looked for: %s", exc)


def _report(path: Path | None, child_pid: int | None,
            signature: tuple[tuple[str, str, bool], ...], error: str | None) -> None:
    if path is None:
        return
    write_status(path, ServingStatus(
        pid=os.getpid(), child_pid=child_pid,
        deployments=tuple(name for name, _, _ in signature),
        paused=sum(1 for _, _, paused in signature if paused), error=error))


def main(argv: list[str] | None = None) -> None:
    """Supervise a serving child (or, with ``--child``, be it)."""
    parser = argparse.ArgumentParser(description="Serve DroidRetriever subscriptions.")
    parser.add_argument("--interval", type=float, default=10.0,
                        help="seconds between checks for changed subscriptions")
    parser.add_argument("--status-file", type=Path, default=None,
                        help="where to write what is served (for `droidretriever status`)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    logging.basicConfig(level="INFO", format="%(asctime)s %(name)s %(levelname)s %(message)s")
    settings = load_settings()
    if args.child:
        serve_current(settings)
        return
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    supervise(settings, args.status_file, args.interval)


if __name__ == "__main__":
    main()
