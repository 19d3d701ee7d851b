"""No service of the local stack answers a client without credentials (issue 13).

``droidretriever up --no-farm`` starts the real stack once, in a temporary state
folder, and each test asks as a stranger on this machine would: Redis without
its password, SeaweedFS's filer, master and volume ports without the stack's
certificate, S3 with the old default keys, the Prefect API without its auth,
PostgreSQL (Prefect's database, issue 32) without its password.
"""

from __future__ import annotations

import asyncio
import io
import os
import pwd
import socket
import ssl
import stat
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import httpx
import pytest
import redis
from minio import Minio
from minio.error import S3Error
from prefect import flow
from prefect.client.orchestration import get_client

from core.config import Settings, load_settings
from core.secrets import StackSecret
from droidretriever.testing import free_port, free_port_block
from flows.runtime import use_prefect_server

pytestmark = [pytest.mark.services, pytest.mark.slow]

CLI = str(Path(sys.executable).parent / "droidretriever")
OLD_DEFAULT_KEYS = ("droidretriever", "droidretriever-local-secret")


@dataclass(frozen=True)
class Stack:
    env: dict[str, str]
    state: Path
    settings: Settings  # as a client of the stack reads them (secrets filled in)

    @property
    def weed_base(self) -> int:
        return self.settings.stack.weed_base_port


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CLI, *args], env=env, capture_output=True, text=True, timeout=240,
                          check=False)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    home = tmp_path_factory.mktemp("home")
    state = home / "state"
    env = {
        "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
        # The code under test, when it is not the installed copy (a worktree's).
        **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
        "HOME": str(home), "COLUMNS": "250",
        "DROIDRETRIEVER_STATE_DIR": str(state),
        "DROIDRETRIEVER_REDIS__URL": f"redis://127.0.0.1:{free_port()}/0",
        "DROIDRETRIEVER_S3__ENDPOINT": f"http://127.0.0.1:{free_port()}",
        "DROIDRETRIEVER_PREFECT__API_URL": f"http://127.0.0.1:{free_port()}/api",
        "DROIDRETRIEVER_PREFECT__DATABASE_PORT": str(free_port()),
        "DROIDRETRIEVER_STACK__WEED_BASE_PORT": str(free_port_block(7)),
        "DROIDRETRIEVER_API__PORT": str(free_port()),  # not 8700: another stack may hold it
    }
    try:
        up = _cli(env, "up", "--no-farm")
        assert up.returncode == 0, up.stdout + up.stderr
        patch = pytest.MonkeyPatch()
        for key, value in env.items():
            if key.startswith("DROIDRETRIEVER_"):
                patch.setenv(key, value)
        try:
            settings = load_settings()
        finally:
            patch.undo()
        yield Stack(env, state, settings)
    finally:
        _cli(env, "down")


def test_redis_refuses_ping_without_the_password(stack: Stack) -> None:
    settings = stack.settings.redis
    stranger = redis.Redis(host="127.0.0.1", port=settings.port, socket_timeout=3)
    with pytest.raises(redis.AuthenticationError):
        stranger.ping()
    stranger.close()
    assert settings.has_password
    client = redis.Redis.from_url(settings.url, socket_timeout=3)
    assert client.ping() is True
    client.close()


def _s3(stack: Stack) -> Minio:
    s3 = stack.settings.s3
    assert s3.access_key is not None and s3.secret_key is not None
    return Minio(s3.host_port, access_key=s3.access_key, secret_key=s3.secret_key.get_secret_value(),
                 secure=False)


def test_the_filer_port_serves_and_takes_nothing_without_the_stack_certificate(stack: Stack) -> None:
    bucket = stack.settings.s3.bucket
    client = _s3(stack)
    client.put_object(bucket, "runs/r1/report.md", io.BytesIO(b"# private report"), 16)
    filer = f"127.0.0.1:{stack.weed_base + 4}"
    for url in (f"http://{filer}/buckets/{bucket}/runs/r1/report.md", f"http://{filer}/buckets/"):
        answer = _plain_get(url)
        assert answer is None or (answer.status_code >= 400 and b"private" not in answer.content)
    with pytest.raises((ssl.SSLError, httpx.HTTPError)):
        httpx.get(f"https://{filer}/buckets/{bucket}/runs/r1/report.md", verify=False, timeout=5)
    put = _plain_put(f"http://{filer}/buckets/{bucket}/runs/r1/planted.md", b"planted")
    assert put is None or put.status_code >= 400
    with pytest.raises(S3Error):
        client.get_object(bucket, "runs/r1/planted.md")
    # The master's HTTP API (which drops a bucket's data on /col/delete) is closed the same way.
    master = f"127.0.0.1:{stack.weed_base}"
    dropped = _plain_get(f"http://{master}/col/delete?collection={bucket}")
    assert dropped is None or dropped.status_code >= 400
    with pytest.raises((ssl.SSLError, httpx.HTTPError)):
        httpx.get(f"https://{master}/col/delete?collection={bucket}", verify=False, timeout=5)
    assert client.get_object(bucket, "runs/r1/report.md").read() == b"# private report"


def _plain_get(url: str) -> httpx.Response | None:
    try:
        return httpx.get(url, timeout=5)
    except httpx.HTTPError:
        return None  # refused or cut: nothing served


def _plain_put(url: str, data: bytes) -> httpx.Response | None:
    try:
        return httpx.put(url, content=data, timeout=5)
    except httpx.HTTPError:
        return None


def test_s3_keys_are_generated_and_the_old_defaults_are_refused(stack: Stack) -> None:
    secrets = stack.settings.secrets
    access, secret = secrets.read(StackSecret.S3_ACCESS_KEY), secrets.read(StackSecret.S3_SECRET_KEY)
    assert access and secret and (access, secret) != OLD_DEFAULT_KEYS
    s3 = stack.settings.s3
    defaults = Minio(s3.host_port, access_key=OLD_DEFAULT_KEYS[0], secret_key=OLD_DEFAULT_KEYS[1],
                     secure=False)
    with pytest.raises(S3Error):
        defaults.list_buckets()
    anonymous = httpx.get(f"http://{s3.host_port}/{s3.bucket}/", timeout=5)
    assert anonymous.status_code == 403


def test_the_prefect_api_answers_nothing_without_its_credential(stack: Stack) -> None:
    api = str(stack.settings.prefect.api_url).rstrip("/")
    stranger = httpx.post(f"{api}/flow_runs/filter", json={}, timeout=10)
    assert stranger.status_code == 401
    auth = stack.settings.prefect.auth_string
    assert auth is not None
    user, _, password = auth.get_secret_value().partition(":")
    assert httpx.post(f"{api}/flow_runs/filter", json={}, auth=(user, password),
                      timeout=10).status_code == 200


def test_the_state_folder_secrets_logs_and_database_are_the_owners_alone(stack: Stack) -> None:
    def mode(path: Path) -> int:
        return stat.S_IMODE(path.stat().st_mode)

    assert mode(stack.state) == 0o700
    assert mode(stack.state / "secrets") == 0o700
    assert {mode(p) for p in (stack.state / "secrets").iterdir()} == {0o600}
    logs = list((stack.state / "logs").glob("*.log"))
    assert logs and {mode(p) for p in logs} == {0o600}
    cluster = stack.state / "postgres" / "data"
    assert mode(stack.state / "postgres") == 0o700 and mode(cluster) == 0o700
    if os.geteuid() == 0:  # PostgreSQL refuses root: the cluster is the postgres user's
        assert cluster.stat().st_uid == pwd.getpwnam("postgres").pw_uid
    assert mode(stack.state / "redis" / "redis.conf") == 0o600
    pid_files = list((stack.state / "run").glob("*.pid"))
    assert pid_files and {mode(p) for p in pid_files} == {0o600}
    assert mode(stack.state / "run") == 0o700
    leaked = [p for p in logs if any(
        value and value in p.read_text(errors="replace")
        for value in (stack.settings.secrets.read(name) for name in StackSecret)
        if value and len(value) > 20 and "BEGIN" not in value)]
    assert leaked == [], "a generated secret is written in a log"
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True).stdout
    for name in (StackSecret.REDIS_PASSWORD, StackSecret.POSTGRES_PASSWORD):
        password = stack.settings.secrets.read(name)
        assert password and password not in ps  # never on a command line


def test_status_says_every_service_requires_credentials(stack: Stack) -> None:
    status = _cli(stack.env, "status")
    assert status.returncode == 0, status.stdout + status.stderr
    rows = {line.split("│")[1].strip(): line for line in status.stdout.splitlines()
            if line.startswith("│") and line.split("│")[1].strip()}
    for service in ("redis", "s3", "postgres", "prefect"):
        assert "required" in rows[service], rows[service]
    assert "client certificate" in rows["s3"]
    assert "OPEN" not in status.stdout
    assert "redis://:***@" in status.stdout  # the URL is shown with its password masked
    password = stack.settings.secrets.read(StackSecret.POSTGRES_PASSWORD)
    assert password and password not in status.stdout + status.stderr
    assert f"127.0.0.1:{stack.settings.prefect.database_port}/prefect" in rows["postgres"]


def test_postgres_refuses_a_login_without_its_password(stack: Stack) -> None:
    port = stack.settings.prefect.database_port
    for password in (None, "", "prefect", OLD_DEFAULT_KEYS[1]):
        with pytest.raises((asyncpg.InvalidAuthorizationSpecificationError,
                            asyncpg.InterfaceError)):
            asyncio.run(_select_one(port, password))
    assert asyncio.run(_select_one(port, stack.settings.secrets.read(StackSecret.POSTGRES_PASSWORD))) == 1
    # Loopback only, and no unix socket in the usual place.
    with pytest.raises(OSError):
        socket.create_connection((_other_address(), port), timeout=2).close()
    assert not list(Path("/var/run/postgresql").glob(f".s.PGSQL.{port}"))


async def _select_one(port: int, password: str | None) -> object:
    connection = await asyncpg.connect(host="127.0.0.1", port=port, user="prefect",
                                       password=password, database="prefect", timeout=5)
    try:
        return await connection.fetchval("SELECT 1")
    finally:
        await connection.close()


def _other_address() -> str:
    """An address of this machine that is not loopback (its route to the outside)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # TEST-NET: nothing is sent
        return str(probe.getsockname()[0])


@flow(name="pg-probe", persist_result=False)
def pg_probe() -> None:
    """A flow that is only ever created, never run: a row for the database to keep."""


def test_prefect_keeps_its_runs_in_postgres(stack: Stack) -> None:
    """A flow run created through Prefect's client is read back, and it is a row of
    PostgreSQL's ``flow_run`` table; no SQLite file is made."""
    with use_prefect_server(stack.settings), get_client(sync_client=True) as client:
        created = client.create_flow_run(pg_probe, name=f"pg-{uuid.uuid4().hex[:8]}")
        assert client.read_flow_run(created.id).name == created.name
    password = stack.settings.secrets.read(StackSecret.POSTGRES_PASSWORD)

    async def stored_name() -> object:
        connection = await asyncpg.connect(
            host="127.0.0.1", port=stack.settings.prefect.database_port, user="prefect",
            password=password, database="prefect", timeout=5)
        try:
            return await connection.fetchval("SELECT name FROM flow_run WHERE id = $1", created.id)
        finally:
            await connection.close()

    assert asyncio.run(stored_name()) == created.name
    assert not (stack.state / "prefect" / "prefect.db").exists()
