"""The ``Service`` seam of the local stack, and the base class for process-backed ones.

A service is anything ``up`` starts, ``down`` stops and ``status`` reports: the
three of the embedded stack today, and later the device farm, the API server
and workers. Each names its URL, the ports it needs (with the setting that
moves each), how to start it and how to tell it is healthy.
"""

from __future__ import annotations

import os
import re
import signal
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar, Protocol

from pydantic import Field

from core.config import LOOPBACK_HOSTS, Settings
from core.models import Frozen
from core.private_files import make_private_dir
from core.text import mask_url
from deploy.errors import PortTakenError, ServiceStartError
from deploy.local.processes import (
    PidFile,
    is_port_free,
    is_running,
    spawn_process,
    stop_process,
)

__all__ = [
    "LOOPBACK_HOSTS",
    "AuthCheck",
    "Health",
    "PortClaim",
    "ProcessCommand",
    "ProcessService",
    "Service",
    "ServiceStatus",
]


# Lines that say why a server died: glog's fatal prefix (weed), Go panics, Python's
# final exception line, and the bind failure every server reports.
_FATAL_LINE = re.compile(
    r"^F\d{4} |^panic: |FATAL|[A-Za-z]+Error: |(?i:address already in use)"
)



class Health(Frozen):
    healthy: bool
    detail: str = ""


class AuthCheck(Frozen):
    """Whether a client without credentials is refused (asked as such a client would)."""

    required: bool | None  # None: nothing to ask (not running, or no port)
    detail: str = ""


class PortClaim(Frozen):
    """A port a service binds, and the setting (env var) that moves it."""

    port: int
    purpose: str
    setting: str


class ProcessCommand(Frozen):
    argv: tuple[str, ...]
    env: dict[str, str] = Field(default_factory=dict)  # added to (and overriding) the caller's environment


class ServiceStatus(Frozen):
    """One row of ``droidretriever status``."""

    name: str
    url: str
    managed: bool  # False: the URL points elsewhere; the stack only checks it
    pid: int | None = None
    running: bool = False
    health: Health
    auth: AuthCheck = AuthCheck(required=None)
    log_path: Path | None = None


class Service(Protocol):
    """What the stack needs from a service."""

    @property
    def name(self) -> str: ...

    @property
    def after(self) -> tuple[str, ...]:
        """Names of the services that must be healthy before this one starts."""
        ...

    @property
    def needed_by_runs(self) -> bool:
        """Whether answering a question needs it (``ask`` checks only those)."""
        ...

    @property
    def url(self) -> str: ...

    def check_ports(self) -> None:
        """Raise PortTakenError if a port it needs is held by something else."""
        ...

    def start(self) -> None:
        """Start it if it is not running (idempotent); return without waiting."""
        ...

    def wait_healthy(self, timeout_s: float) -> None:
        """Block until healthy, or raise ServiceStartError."""
        ...

    def stop(self) -> bool:
        """Stop it if we started it; return whether anything was stopped."""
        ...

    def check_health(self) -> Health:
        """Whether it answers now, whoever started it."""
        ...

    def check_auth(self) -> AuthCheck:
        """Whether it refuses a client that has no credentials."""
        ...

    def status(self) -> ServiceStatus:
        """Its current row for the status table."""
        ...


class ProcessService(ABC):
    """A service run as one background process with a pid file and a log file.

    Subclasses give the name, URL, ports, command and health check. A service
    whose URL is not on this machine (loopback, or an address of ``stack.serve_hosts``)
    is "external": never started or stopped, only health-checked (production points
    the URLs at real servers).
    """

    name: ClassVar[str]
    after: ClassVar[tuple[str, ...]] = ()  # services that must be healthy before this starts
    needed_by_runs: ClassVar[bool] = True  # False: a question can be answered without it
    grace_s: ClassVar[float] = 10.0  # stop_signal to SIGKILL
    stop_signal: ClassVar[signal.Signals] = signal.SIGTERM
    inherit_env: ClassVar[bool] = True  # False: the command's environment only

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.pid_file = PidFile(settings.state_dir / "run", self.name)
        self.log_path = settings.logs_dir / f"{self.name}.log"
        self.data_dir = settings.state_dir / self.name

    # ------------------------------------------------------------------ to implement

    @property
    @abstractmethod
    def url(self) -> str: ...

    @property
    @abstractmethod
    def host(self) -> str: ...

    @abstractmethod
    def ports(self) -> tuple[PortClaim, ...]: ...

    @abstractmethod
    def command(self) -> ProcessCommand: ...

    @abstractmethod
    def check_health(self) -> Health: ...

    def prepare(self) -> None:
        """Create the data folder (its owner's only); subclasses also write config files (call super)."""
        make_private_dir(self.data_dir)

    def after_healthy(self) -> None:
        """One-time setup once healthy, e.g. create a bucket (default: nothing)."""
        return None

    def check_auth(self) -> AuthCheck:
        """Whether a client without credentials is refused (default: no port to ask)."""
        return AuthCheck(required=None, detail="no port")

    # ------------------------------------------------------------------ lifecycle

    @property
    def managed(self) -> bool:
        """Whether ``up`` runs it: bound to loopback or to one of ``stack.serve_hosts``."""
        return self.settings.serves_here(self.host)

    def is_ours_running(self) -> bool:
        """Whether the process of our pid file is alive and still ours."""
        record = self.pid_file.read()
        return record is not None and is_running(record)

    def check_ports(self) -> None:
        """Raise PortTakenError naming the port and the setting that moves it."""
        if not self.managed or self.is_ours_running():
            return
        for claim in self.ports():
            if not is_port_free(self.host, claim.port):
                raise PortTakenError(
                    f"port {claim.port} ({claim.purpose}) is already in use by a program "
                    f"that `droidretriever up` did not start",
                    hint=f"stop that program, or choose a free port with {claim.setting}",
                )

    def start(self) -> None:
        """Spawn the process unless ours is already running."""
        if not self.managed or self.is_ours_running():
            return
        self.pid_file.remove()  # stale: the process is gone or the pid was reused
        self.prepare()
        command = self.command()
        env: Mapping[str, str] = {**os.environ, **command.env} if self.inherit_env else command.env
        record = spawn_process(
            self.name, command.argv, env=env, log_path=self.log_path, cwd=self.data_dir
        )
        self.pid_file.write(record)

    def wait_healthy(self, timeout_s: float) -> None:
        """Poll the health check until it passes; fail fast if the process died."""
        deadline = time.monotonic() + timeout_s
        health = Health(healthy=False, detail="not checked yet")
        while time.monotonic() < deadline:
            if self.managed and not self.is_ours_running():
                raise ServiceStartError(
                    f"{self.name} exited while starting: {self._exit_reason()}",
                    hint=f"see its log: {self.log_path}",
                )
            health = self.check_health()
            if health.healthy:
                self.after_healthy()
                return
            time.sleep(0.25)
        raise ServiceStartError(
            f"{self.name} at {mask_url(self.url)} was not healthy after {timeout_s:.0f}s ({health.detail})",
            hint=f"see its log: {self.log_path}; raise DROIDRETRIEVER_STACK__START_TIMEOUT_S "
            "on a slow machine",
        )

    def stop(self) -> bool:
        """Stop our process (never another one that took its pid)."""
        record = self.pid_file.read()
        if record is None:
            return False
        if not is_running(record):
            self.pid_file.remove()
            return False
        stop_process(record, grace_s=self.grace_s, first=self.stop_signal)
        self.pid_file.remove()
        return True

    def status(self) -> ServiceStatus:
        """Pid, liveness and health (health is only asked when something should answer)."""
        record = self.pid_file.read()
        running = record is not None and is_running(record)
        if running or not self.managed:
            health = self.check_health()
            auth = self.check_auth()
        else:
            health = Health(healthy=False, detail="not started")
            auth = AuthCheck(required=None)
        return ServiceStatus(
            name=self.name,
            url=mask_url(self.url),
            managed=self.managed,
            pid=record.pid if running and record is not None else None,
            running=running,
            health=health,
            auth=auth,
            log_path=self.log_path if self.managed else None,
        )

    def _exit_reason(self) -> str:
        """The log line that says why the process died: its last fatal line, else its last line."""
        try:
            lines = [ln for ln in self.log_path.read_text(errors="replace").splitlines() if ln]
        except OSError:
            return "no log written"
        if not lines:
            return "no output"
        fatal = [ln for ln in lines if _FATAL_LINE.search(ln)]
        return (fatal or lines)[-1][:300]
