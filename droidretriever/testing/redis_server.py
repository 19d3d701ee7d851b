"""A real redis-server with a generated password, for tests and benchmarks (as ``up`` runs it)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from droidretriever.secrets import generate_secret
from droidretriever.testing.ports import free_port, wait_for_port

__all__ = ["running_redis"]


@contextmanager
def running_redis(data_dir: Path, port: int | None = None) -> Iterator[str]:
    """Start redis-server on loopback with ``requirepass``; yields its URL, password included.

    The password is in a 0600 config file, never on the command line; no data is
    persisted. The server is stopped when the block ends.
    """
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed: run scripts/test.sh (it installs it)")
    port = port or free_port()
    password = generate_secret()
    data_dir.mkdir(parents=True, exist_ok=True)
    config = data_dir / "redis.conf"
    config.touch(mode=0o600)
    config.write_text(f'requirepass "{password}"\n')
    proc = subprocess.Popen(
        [binary, str(config), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data_dir),
         "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port)
        yield f"redis://:{password}@127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
