"""A whole local stack of one's own, and the faults tests and benchmarks inject into it.

:class:`LocalStack` (a test helper) starts what ``droidretriever up`` starts, with
the same code (``deploy.local``'s services, ``deploy.farm``'s farm), on free
loopback ports with its state in a folder of the caller's: Redis (append-only,
so a restart keeps queues and leases), SeaweedFS S3, PostgreSQL and the Prefect server, and
virtual phones with a worker each and the farm monitor. While it is entered, the
process's environment names it, so ``load_settings()`` everywhere (flows in this
process, workers, a ``droidretriever`` subprocess) reaches it, and Prefect code in
this process talks to its server. The subscriptions service runs too, as under
``up`` (it also marks crashed the runs whose process died, every few seconds).

Faults are what an operator meets: :meth:`LocalStack.restart` stops a service
(SIGTERM, or SIGKILL) and starts it again after a while, as ``droidretriever up``
does; :meth:`LocalStack.kill_worker` SIGKILLs a phone's worker. Each fault is kept
in :attr:`LocalStack.faults` with its times, so a benchmark can say what a restart
cost.
"""

from __future__ import annotations

import os
import signal
import time
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType
from typing import Literal

from prefect.events.worker import EventsWorker
from prefect.logging.handlers import APILogWorker
from pydantic import BaseModel, ConfigDict

from core.config import Settings, load_settings
from deploy.farm import (
    bring_down,
    ensure_sim_farm,
    read_manifest,
    repair_farm,
    worker_process_name,
)
from deploy.local import (
    PrefectService,
    RedisService,
    SeaweedService,
    Stack,
    build_stack,
    ensure_stack_secrets,
)
from deploy.local.service import ProcessService
from droidretriever.testing.ports import free_port, free_port_block
from flows.runtime import use_prefect_server

__all__ = ["FAST_FARM", "Fault", "LocalStack", "ServiceName"]

ServiceName = Literal["redis", "s3", "prefect"]

# Heartbeats every 0.5 s, a phone offline after 2 s without one, leases (and run beacons)
# of 5 s: a dead worker or process is noticed in seconds, not half a minute.
FAST_FARM = {
    "DROIDRETRIEVER_FARM__HEARTBEAT_S": "0.5",
    "DROIDRETRIEVER_FARM__HEARTBEAT_MISSED": "4",
    "DROIDRETRIEVER_FARM__REJOIN_AFTER_OK": "2",
    "DROIDRETRIEVER_FARM__LEASE_TTL_S": "5",
}


class Fault(BaseModel):
    """One fault injected: what, when it began, and when the service answered again."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str  # restart | kill | worker_kill
    target: str  # a service name or a phone's serial
    started: float  # time.monotonic()
    back: float  # time.monotonic() when it answered again (= started for a one-off kill)


class LocalStack:
    """The local stack and a farm of virtual phones on free ports (a test helper)."""

    def __init__(self, state_dir: Path, *, phones: int = 2, latency: str = "realistic",
                 start_timeout_s: float = 180.0) -> None:
        self.state_dir = state_dir
        self.phones = phones
        self.env = {
            "DROIDRETRIEVER_STATE_DIR": str(state_dir),
            "DROIDRETRIEVER_REDIS__URL": f"redis://127.0.0.1:{free_port()}/0",
            "DROIDRETRIEVER_S3__ENDPOINT": f"http://127.0.0.1:{free_port()}",
            "DROIDRETRIEVER_PREFECT__API_URL": f"http://127.0.0.1:{free_port()}/api",
            "DROIDRETRIEVER_PREFECT__DATABASE_PORT": str(free_port()),
            "DROIDRETRIEVER_STACK__WEED_BASE_PORT": str(free_port_block(7)),
            "DROIDRETRIEVER_API__PORT": str(free_port()),  # not 8700: another stack may hold it
            "DROIDRETRIEVER_STACK__START_TIMEOUT_S": str(start_timeout_s),
            "DROIDRETRIEVER_SIM__ADB_PORT": str(free_port()),
            "DROIDRETRIEVER_PERCEPTION__OCR_SERVICE_URL": f"http://127.0.0.1:{free_port()}",
            "DROIDRETRIEVER_SIM__PHONES": str(phones),
            "DROIDRETRIEVER_SIM__LATENCY": latency,
            **FAST_FARM,
        }
        self.faults: list[Fault] = []
        self._saved: dict[str, str | None] = {}
        self._contexts = ExitStack()

    # ------------------------------------------------------------------ lifecycle

    @property
    def settings(self) -> Settings:
        """The stack's settings (read from the environment it set)."""
        return load_settings()

    def services(self) -> dict[ServiceName, ProcessService]:
        """Redis, S3 and the Prefect server, by name (what a question needs)."""
        settings = self.settings
        return {"redis": RedisService(settings), "s3": SeaweedService(settings),
                "prefect": PrefectService(settings)}

    def stack(self) -> Stack:
        """The stack as ``droidretriever up`` starts it (the subscriptions service too)."""
        return build_stack(self.settings)

    def __enter__(self) -> LocalStack:
        self._saved = {key: os.environ.get(key) for key in self.env}
        os.environ.update(self.env)
        try:
            ensure_stack_secrets(self.settings)  # as `up` does: no service without its secret
            self.stack().up()
            ensure_sim_farm(self.settings, self.phones, wait_s=180.0)
            self._contexts.enter_context(use_prefect_server(self.settings))
        except BaseException:
            self._stop()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop()

    def _stop(self) -> None:
        # Prefect sends logs and events from one worker each per process, tied to the first
        # server they met: hand them what they hold while this server still answers, so the
        # next server in this process (a test harness) gets new ones instead of a dead URL.
        APILogWorker.drain_all(timeout=60)
        EventsWorker.drain_all(timeout=60)
        self._contexts.close()
        try:
            bring_down(self.settings)
            self.stack().down()
        finally:
            for key, value in self._saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value

    # ------------------------------------------------------------------ faults

    def restart(self, name: ServiceName, down_s: float, *, kill: bool = False) -> Fault:
        """Stop ``name`` (SIGTERM, or SIGKILL with ``kill``), wait ``down_s``, start it again.

        Returns when it is healthy again, as ``droidretriever up`` would.
        """
        service = self.services()[name]
        started = time.monotonic()
        record = service.pid_file.read()
        if kill and record is not None:
            os.kill(record.pid, signal.SIGKILL)
        service.stop()
        time.sleep(down_s)
        service.start()
        service.wait_healthy(self.settings.stack.start_timeout_s)
        fault = Fault(kind="kill" if kill else "restart", target=name, started=started,
                      back=time.monotonic())
        self.faults.append(fault)
        return fault

    def worker_pid(self, serial: str) -> int:
        """The pid of the worker process of phone ``serial``."""
        manifest = read_manifest(self.state_dir)
        if manifest is None:
            raise RuntimeError("no farm is up")
        name = worker_process_name(serial)
        return next(p.pid for p in manifest.processes if p.name == name)

    def kill_worker(self, serial: str) -> Fault:
        """SIGKILL the worker of phone ``serial`` (the farm monitor redelivers its sub-task)."""
        now = time.monotonic()
        os.kill(self.worker_pid(serial), signal.SIGKILL)
        fault = Fault(kind="worker_kill", target=serial, started=now, back=now)
        self.faults.append(fault)
        return fault

    def repair_farm(self) -> tuple[str, ...]:
        """Start the farm's dead processes again (what ``droidretriever up`` does)."""
        manifest = read_manifest(self.state_dir)
        if manifest is None:
            raise RuntimeError("no farm is up")
        return repair_farm(self.settings, manifest)[1]
