"""The stack: several services started together, stopped together, reported together."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from core.config import Settings
from deploy.errors import ServiceError, ServiceStartError
from deploy.local.api_service import ApiService, RunnerService
from deploy.local.builtin import (
    PrefectService,
    RedisService,
    SeaweedService,
    SubscriptionsService,
)
from deploy.local.postgres import PostgresService, uses_postgres
from deploy.local.service import Service, ServiceStatus

__all__ = ["Stack", "build_stack"]

T = TypeVar("T")


def _for_each(services: Sequence[Service], work: Callable[[Service], T]) -> list[T]:
    """Run ``work`` on every service at once; re-raise the errors together afterwards."""
    if not services:
        return []
    with ThreadPoolExecutor(max_workers=len(services)) as pool:
        futures = [pool.submit(work, service) for service in services]
    errors = [exc for f in futures if (exc := f.exception()) is not None]
    service_errors = [e for e in errors if isinstance(e, ServiceError)]
    if service_errors and len(service_errors) == len(errors):
        if len(service_errors) == 1:
            raise service_errors[0]
        raise ServiceStartError(
            "; ".join(str(e) for e in service_errors),
            hint=" | ".join(e.hint for e in service_errors if e.hint),
        ) from service_errors[0]
    if errors:
        raise errors[0]  # a bug, not a service fault: keep its own traceback
    return [f.result() for f in futures]


class Stack:
    """An ordered set of services (the order of the status table)."""

    def __init__(self, services: Sequence[Service], *, start_timeout_s: float) -> None:
        self.services = tuple(services)
        self.start_timeout_s = start_timeout_s
        self.waves = _waves(self.services)

    def up(self) -> list[ServiceStatus]:
        """Start what is not running and wait until all are healthy (idempotent).

        Ports are checked for every service before anything starts, so a clash
        leaves nothing half-started. Slow starters (Prefect, ~10 s) start in
        parallel with the rest.
        """
        for service in self.services:
            service.check_ports()

        def start_and_wait(service: Service) -> None:
            service.start()
            service.wait_healthy(self.start_timeout_s)

        for wave in self.waves:
            _for_each(wave, start_and_wait)
        return self.status()

    def down(self) -> dict[str, bool]:
        """Stop every service this stack started, dependents first; name -> whether it ran."""
        stopped: dict[str, bool] = {}
        for wave in reversed(self.waves):
            results = _for_each(wave, lambda service: service.stop())
            stopped.update({s.name: was for s, was in zip(wave, results, strict=True)})
        return {service.name: stopped[service.name] for service in self.services}

    def status(self) -> list[ServiceStatus]:
        """A row per service (health checks run in parallel)."""
        return _for_each(self.services, lambda service: service.status())


def _waves(services: Sequence[Service]) -> list[list[Service]]:
    """The services in start order: each wave only after every service it names in ``after``."""
    names = {service.name for service in services}
    started: set[str] = set()
    waves: list[list[Service]] = []
    pending = list(services)
    while pending:
        wave = [s for s in pending if set(s.after) & names <= started]
        if not wave:
            raise ValueError(f"services wait for each other: {[s.name for s in pending]}")
        waves.append(wave)
        started |= {s.name for s in wave}
        pending = [s for s in pending if s not in wave]
    return waves


def build_stack(settings: Settings) -> Stack:
    """The embedded default stack: Redis, SeaweedFS S3, PostgreSQL then the Prefect server on
    it, then the services that run the subscriptions' schedules and the dashboard's runs, and
    the API.

    PostgreSQL is left out when Prefect keeps SQLite (``prefect.database``) or runs
    elsewhere, unless one an earlier ``up`` started still runs: ``down`` stops it then.
    """
    database = PostgresService(settings)
    databases = [database] if uses_postgres(settings) or database.is_ours_running() else []
    return Stack(
        [RedisService(settings), SeaweedService(settings), *databases, PrefectService(settings),
         SubscriptionsService(settings), RunnerService(settings), ApiService(settings)],
        start_timeout_s=settings.stack.start_timeout_s,
    )
