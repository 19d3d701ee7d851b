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
from pathlib import Path
from typing import ClassVar

import httpx
from pydantic import ValidationError

from deploy.local.service import Health, PortClaim, ProcessCommand, ProcessService
from droidretriever.config import Settings
from droidretriever.models import ServingStatus, utcnow
from droidretriever.secrets import SecretFiles

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


class RunnerService(ProcessService):
    """``python -m flows.runner``: executes the runs asked from the dashboard and the API."""

    name: ClassVar[str] = "runner"
    after: ClassVar[tuple[str, ...]] = ("redis", "s3", "prefect")
    needed_by_runs: ClassVar[bool] = False
    grace_s: ClassVar[float] = 30.0  # a running flow is marked crashed, not cut mid-write
    status_every_s: ClassVar[float] = 5.0

    @property
    def url(self) -> str:
        return f"{self.settings.prefect.ui_url}/deployments"

    @property
    def host(self) -> str:
        return self.settings.prefect.api_url.host or "127.0.0.1"

    @property
    def status_file(self) -> Path:
        return self.data_dir / "serving.json"

    def ports(self) -> tuple[PortClaim, ...]:
        return ()

    def prepare(self) -> None:
        super().prepare()
        self.status_file.unlink(missing_ok=True)  # a previous process's status is not ours

    def command(self) -> ProcessCommand:
        return ProcessCommand(
            argv=(sys.executable, "-m", "flows.runner", "--status-file", str(self.status_file)),
            env={**self.settings.prefect.client_env(),
                 "DROIDRETRIEVER_PREFECT__API_URL": str(self.settings.prefect.api_url)},
        )

    def check_health(self) -> Health:
        try:
            serving = ServingStatus.model_validate_json(self.status_file.read_bytes())
        except FileNotFoundError:
            return Health(healthy=False, detail="no status yet")
        except (OSError, ValidationError) as exc:
            return Health(healthy=False, detail=f"unreadable status file: {type(exc).__name__}")
        age = (utcnow() - serving.updated_at).total_seconds()
        if age > 3 * self.status_every_s + 5:
            return Health(healthy=False, detail=f"status not updated for {age:.0f} s")
        return Health(healthy=True, detail=f"serving {', '.join(serving.deployments)}, "
                                           f"{self.settings.api.concurrent_runs} at once")
