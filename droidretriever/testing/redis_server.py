"""A real redis-server with a generated password, for tests and benchmarks (as ``up`` runs it)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.secrets import generate_secret
from droidretriever.testing.ports import free_port, wait_for_port

__all__ = ["RedisServer", "running_redis"]


class RedisServer:
    """redis-server on loopback with ``requirepass``, which may be stopped and started again.

    The password is in a 0600 config file, never on the command line. No data is persisted,
    so a restart brings back an empty Redis on the same port and password, unless ``persist``
    (an append-only file in ``data_dir``, as the local stack's Redis keeps one).
    """

    def __init__(self, data_dir: Path, port: int | None = None, *, persist: bool = False) -> None:
        self.data_dir, self.port, self.persist = data_dir, port or free_port(), persist
        self.password = generate_secret()
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Its URL, password included."""
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed: run scripts/test.sh (it installs it)")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        config = self.data_dir / "redis.conf"
        config.touch(mode=0o600)
        config.write_text(f'requirepass "{self.password}"\n')
        self._proc = subprocess.Popen(
            [binary, str(config), "--port", str(self.port), "--bind", "127.0.0.1",
             "--dir", str(self.data_dir), "--save", "", "--appendonly", "yes" if self.persist else "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port)

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(timeout=10)
            self._proc = None


@contextmanager
def running_redis(data_dir: Path, port: int | None = None) -> Iterator[str]:
    """Start a :class:`RedisServer`; yields its URL, password included; stopped when the block ends."""
    server = RedisServer(data_dir, port)
    try:
        server.start()
        yield server.url
    finally:
        server.stop()
