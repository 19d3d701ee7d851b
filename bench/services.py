"""Services the benchmarks start for themselves: a throwaway redis-server on a free port."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

from droidretriever.testing import free_port, wait_for_port

__all__ = ["throwaway_redis"]


@contextmanager
def throwaway_redis() -> Iterator[str]:
    """A redis-server with nothing saved, on a free loopback port; yields its URL."""
    port = free_port()
    process = subprocess.Popen([shutil.which("redis-server") or "redis-server", "--port", str(port),
                                "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
    try:
        wait_for_port(port)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)
