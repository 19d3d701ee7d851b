"""Free loopback ports for servers a test or benchmark starts, and waiting for one to listen."""

from __future__ import annotations

import random
import socket
import time
from pathlib import Path

from deploy.local import is_port_free

__all__ = ["free_port", "free_port_block", "wait_for_port"]


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def free_port_block(count: int) -> int:
    """The first of ``count`` consecutive free loopback ports, below the ephemeral range.

    Servers that a test stops and restarts on the same ports must not sit in the
    kernel's ephemeral range: while they are down, any outgoing connection (their
    own internal ones included) may take one of those ports, and the restart then
    dies with "address already in use" (weed did, once, in CI).
    """
    ephemeral_low, _ = _ephemeral_range()
    low = 20000 if ephemeral_low > 21000 else 10000
    high = ephemeral_low - count
    for _ in range(500):
        base = random.randrange(low, high)
        if all(is_port_free("127.0.0.1", base + i) for i in range(count)):
            return base
    raise RuntimeError(f"no block of {count} free ports found in {low}-{high}")


def free_port() -> int:
    """A free loopback port outside the ephemeral range (see free_port_block)."""
    return free_port_block(1)


def wait_for_port(port: int, timeout: float = 20.0) -> None:
    """Wait until something listens on loopback ``port``; TimeoutError after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout}s")
