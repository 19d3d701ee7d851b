"""The local stack's dashboard: the HTTP API (``python -m droidretriever.api``) and the runner
that executes the runs asked from it (``python -m flows.runner``).

    api      the API and dashboard on ``api.host:api.port``; GET /health with the bearer token
    runner   serves the ``retrieve/dashboard`` Prefect deployment; a status file says it lives

The API's bearer token is ``settings.api_token`` when set, else the generated
``<state_dir>/secrets/api-token`` (0600), created on the first ``up``
(:func:`ensure_api_token`); ``droidretriever api token`` prints it.
"""

from __future__ import annotations

import sys
from typing import ClassVar

import httpx

from core.config import Settings
from core.secrets import SecretFiles
from deploy.local.builtin import SubscriptionsService
from deploy.local.service import Health, PortClaim, ProcessCommand, ProcessService

__all__ = ["API_TOKEN_SECRET", "ApiService", "RunnerService", "ensure_api_token", "read_api_token"]

API_TOKEN_SECRET = "api-token"


def read_api_token(settings: Settings) -> str | None:
    """The API's bearer token: the setting when given, else the generated file (None: none yet)."""
    if settings.api_token is not None:
        return settings.api_token.get_secret_value()
    return SecretFiles(settings.state_dir).read(API_TOKEN_SECRET)


def ensure_api_token(settings: Settings) -> str:
    """The API's bearer token, generated into the state folder's secrets if there is none."""
    if settings.api_token is not None:
        return settings.api_token.get_secret_value()
    return SecretFiles(settings.state_dir).ensure(API_TOKEN_SECRET)


class ApiService(ProcessService):
    """``python -m droidretriever.api``: the HTTP API and the dashboard."""

    name: ClassVar[str] = "api"
    after: ClassVar[tuple[str, ...]] = ("redis", "s3", "prefect")
    needed_by_runs: ClassVar[bool] = False
    grace_s: ClassVar[float] = 10.0

    @property
    def url(self) -> str:
        return self.settings.api.base_url

    @property
    def host(self) -> str:
        return self.settings.api.host

    def ports(self) -> tuple[PortClaim, ...]:
        return (PortClaim(port=self.settings.api.port, purpose="HTTP API and dashboard",
                          setting="DROIDRETRIEVER_API__PORT"),)

    def prepare(self) -> None:
        super().prepare()
        ensure_api_token(self.settings)

    def command(self) -> ProcessCommand:
        return ProcessCommand(
            argv=(sys.executable, "-m", "droidretriever.api"),
            env={**self.settings.prefect.client_env(),
                 "DROIDRETRIEVER_PREFECT__API_URL": str(self.settings.prefect.api_url)},
        )

    def check_health(self) -> Health:
        token = read_api_token(self.settings)
        if token is None:
            return Health(healthy=False, detail="no API token yet (`droidretriever up` makes it)")
        try:
            response = httpx.get(f"{self.url}/health", timeout=2.0,
                                 headers={"authorization": f"Bearer {token}"})
        except httpx.HTTPError as exc:
            return Health(healthy=False, detail=f"GET /health failed: {type(exc).__name__}")
        if response.status_code != 200:
            return Health(healthy=False, detail=f"GET /health answered {response.status_code}")
        return Health(healthy=True, detail=f"dashboard {self.url}")


class RunnerService(SubscriptionsService):
    """``python -m flows.runner``: executes the runs asked from the dashboard and the API.

    Served like the subscriptions (a Prefect deployment, a status file the
    health check reads), so it shares their service's plumbing.
    """

    name: ClassVar[str] = "runner"
    check_interval_s: ClassVar[float] = 5.0  # how often it writes its status file

    def command(self) -> ProcessCommand:
        return ProcessCommand(
            argv=(sys.executable, "-m", "flows.runner", "--status-file", str(self.status_file)),
            env={**self.settings.prefect.client_env(),
                 "DROIDRETRIEVER_PREFECT__API_URL": str(self.settings.prefect.api_url)},
        )

    def check_health(self) -> Health:
        health = super().check_health()
        if not health.healthy:
            return health
        return Health(healthy=True, detail=f"serving the dashboard's runs, "
                                           f"{self.settings.api.concurrent_runs} at once")
