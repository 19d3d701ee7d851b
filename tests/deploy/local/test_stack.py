"""``droidretriever up | status | down`` on the real services, in a temporary state folder.

``up`` also brings up the device farm (virtual phones and their workers) unless
``--no-farm``; ``down`` stops it first.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from core.config import RedisSettings, load_settings
from deploy.errors import ServiceStartError
from deploy.local import PidFile, ProcessRecord, RedisService, ensure_stack_secrets
from deploy.local.processes import is_port_free, is_running, read_start_ticks
from droidretriever.testing import free_port, free_port_block

pytestmark = [pytest.mark.services, pytest.mark.slow]

CLI = str(Path(sys.executable).parent / "droidretriever")


@pytest.fixture()
def stack_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    env = {
        "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
        # The code under test, when it is not the installed copy (a worktree's).
        **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
        "HOME": str(tmp_path),
        "COLUMNS": "200",  # keep rich from wrapping the lines we assert on
        "DROIDRETRIEVER_STATE_DIR": str(tmp_path / "state"),
        "DROIDRETRIEVER_REDIS__URL": f"redis://127.0.0.1:{free_port()}/0",
        "DROIDRETRIEVER_S3__ENDPOINT": f"http://127.0.0.1:{free_port()}",
        "DROIDRETRIEVER_PREFECT__API_URL": f"http://127.0.0.1:{free_port()}/api",
        "DROIDRETRIEVER_PREFECT__DATABASE_PORT": str(free_port()),
        "DROIDRETRIEVER_STACK__WEED_BASE_PORT": str(free_port_block(7)),
        "DROIDRETRIEVER_SIM__ADB_PORT": str(free_port()),
        "DROIDRETRIEVER_PERCEPTION__OCR_SERVICE_URL": f"http://127.0.0.1:{free_port()}",
        "DROIDRETRIEVER_API__PORT": str(free_port()),
    }
    yield env
    # Whatever happened, leave no service behind.
    subprocess.run([CLI, "down"], env=env, capture_output=True, timeout=120, check=False)


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CLI, *args], env=env, capture_output=True, text=True, timeout=180, check=False
    )


def test_up_status_down(stack_env: dict[str, str]) -> None:
    redis_port = int(stack_env["DROIDRETRIEVER_REDIS__URL"].rsplit(":", 1)[1].split("/")[0])
    state = Path(stack_env["DROIDRETRIEVER_STATE_DIR"])

    # Something else holds the Redis port: a clear error, and nothing half-started.
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", redis_port))
        squatter.listen()
        taken = _cli(stack_env, "up")
    assert taken.returncode == 1
    assert f"port {redis_port} (Redis) is already in use" in taken.stderr
    assert "DROIDRETRIEVER_REDIS__URL" in taken.stderr
    assert "Traceback" not in taken.stderr
    assert not list(state.glob("run/*.pid"))

    first = _cli(stack_env, "up", "--no-farm")
    assert first.returncode == 0, first.stderr
    assert first.stdout.count("healthy") == 7
    assert "no subscriptions yet" in first.stdout  # the service that runs the schedules
    assert "serving the dashboard's runs" in first.stdout  # the runner
    assert "device farm: not running" in first.stdout
    pids = sorted(p.read_text() for p in (state / "run").glob("*.pid"))
    assert len(pids) == 7
    # The dashboard: a one-time login link, never the token; `api token` prints the token.
    api_port = stack_env["DROIDRETRIEVER_API__PORT"]
    link = next(line.removeprefix("dashboard: ") for line in first.stdout.splitlines()
                if line.startswith("dashboard: "))
    assert link.startswith(f"http://127.0.0.1:{api_port}/login?code=")
    token = _cli(stack_env, "api", "token").stdout.strip()
    assert len(token) >= 40 and token not in first.stdout
    assert (state / "secrets" / "api-token").stat().st_mode & 0o777 == 0o600
    assert httpx.get(link).status_code == 200  # logs a browser in
    assert httpx.get(link).status_code == 401  # once
    assert _cli(stack_env, "api", "login").stdout.strip().startswith(
        f"http://127.0.0.1:{api_port}/login?code=")

    # Services already up (same pids), and now the farm: one phone, its worker, the monitor, OCR.
    with_farm = _cli(stack_env, "up", "--sim", "1")
    assert with_farm.returncode == 0, with_farm.stderr
    assert sorted(p.read_text() for p in (state / "run").glob("*.pid")) == pids
    assert "device farm (sim): 1 phone, 1/1 workers healthy, 4/4 processes running" in with_farm.stdout
    farm_pids = sorted(p.read_text() for p in (state / "farm").glob("*.pid"))
    assert len(farm_pids) == 4  # + the shared OCR service

    again = _cli(stack_env, "up")  # idempotent: same processes, no new ones, farm left as it is
    assert again.returncode == 0, again.stderr
    assert sorted(p.read_text() for p in (state / "run").glob("*.pid")) == pids
    assert sorted(p.read_text() for p in (state / "farm").glob("*.pid")) == farm_pids
    assert "device farm already up (sim, phones: 1)" in again.stdout

    status = _cli(stack_env, "status")
    assert status.returncode == 0, status.stderr
    for name in ("redis", "s3", "postgres", "prefect", "subscriptions", "runner", "api"):
        assert name in status.stdout
    assert status.stdout.count("healthy") == 8  # seven services and the farm's workers
    assert "1/1 workers healthy" in status.stdout and "1 idle" in status.stdout
    assert "storage spool" in status.stdout
    assert (state / "logs" / "prefect.log").is_file()

    down = _cli(stack_env, "down")
    assert down.returncode == 0, down.stderr
    assert "device farm: stopped 4 processes" in down.stdout
    assert down.stdout.index("device farm") < down.stdout.index("redis: stopped")
    assert "subscriptions: stopped" in down.stdout
    assert "postgres: stopped" in down.stdout  # Prefect's database (after Prefect), its port free
    assert is_port_free("127.0.0.1", int(stack_env["DROIDRETRIEVER_PREFECT__DATABASE_PORT"]))
    assert not list((state / "run").glob("*.pid"))
    assert not (state / "farm" / "farm.json").exists()
    after = _cli(stack_env, "status")
    assert after.returncode == 3  # unhealthy: scripts can tell
    assert after.stdout.count("not started") == 7
    assert "device farm: not running" in after.stdout


def test_down_never_signals_a_process_that_is_not_ours(tmp_path: Path) -> None:
    settings = load_settings(
        state_dir=tmp_path, redis=RedisSettings(url=f"redis://127.0.0.1:{free_port()}/0")
    )
    stranger = subprocess.Popen(["sleep", "60"])
    try:
        ticks = read_start_ticks(stranger.pid)
        assert ticks is not None
        service = RedisService(settings)
        # A stale pid file whose pid now belongs to another process (start time differs).
        service.pid_file.write(
            ProcessRecord(
                name="redis", pid=stranger.pid, start_ticks=ticks - 1,
                argv=("redis-server",), log_path=tmp_path / "redis.log",
            )
        )
        assert service.stop() is False
        assert stranger.poll() is None  # still alive
        assert PidFile(tmp_path / "run", "redis").read() is None  # the stale record is gone
        assert not is_running(
            ProcessRecord(
                name="x", pid=stranger.pid, start_ticks=ticks + 1, argv=(), log_path=tmp_path
            )
        )
    finally:
        stranger.kill()
        stranger.wait()


def test_a_server_that_dies_on_start_is_reported_with_the_line_that_says_why(
    tmp_path: Path,
) -> None:
    port = free_port()
    settings = ensure_stack_secrets(
        load_settings(state_dir=tmp_path, redis=RedisSettings(url=f"redis://127.0.0.1:{port}/0")))
    service = RedisService(settings)
    with socket.socket() as squatter:
        # Taken after any port check and before the server binds: the race `up` cannot rule out.
        squatter.bind(("127.0.0.1", port))
        squatter.listen()
        service.start()
        try:
            with pytest.raises(ServiceStartError) as caught:
                service.wait_healthy(30)
        finally:
            service.stop()
    message = str(caught.value)
    assert "redis exited while starting" in message
    assert f"{port}" in message and "address already in use" in message.lower()
    assert str(service.log_path) in (caught.value.hint or "")


def test_a_services_host_runs_what_its_serve_hosts_name(tmp_path: Path) -> None:
    """A URL on another address is external, unless ``stack.serve_hosts`` says it is this host's."""
    redis = RedisSettings(url="redis://:pw@10.231.0.1:6390/0")
    lab = load_settings(state_dir=tmp_path, redis=redis,
                        stack={"serve_hosts": ["10.231.0.1"]})
    assert RedisService(lab).managed
    assert not RedisService(load_settings(state_dir=tmp_path, redis=redis)).managed
    assert RedisService(load_settings(state_dir=tmp_path)).managed  # loopback, as ever
