"""Who is on the other end of a loopback TCP connection: the peer process's user id.

The virtual phones' ADB port serves only the user who runs it (docs/decisions.md,
"The virtual phones' ADB port serves its owner only"). A loopback client's own
socket is listed in ``/proc/net/tcp`` (``tcp6``) with the uid that created it,
local and remote addresses swapped relative to ours: the check ``identd`` makes,
without a reply from the client. A peer that is not found there (another host,
another network namespace, a system without ``/proc``) has no known uid and is
refused.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

__all__ = ["is_own_user", "peer_uid"]

_TABLES = {socket.AF_INET: Path("/proc/net/tcp"), socket.AF_INET6: Path("/proc/net/tcp6")}


def _hex_address(family: int, host: str, port: int) -> str:
    """An address as /proc/net/tcp writes it: the IP's 32-bit words in host order, then the port."""
    packed = socket.inet_pton(family, host)
    words = (packed[i:i + 4] for i in range(0, len(packed), 4))
    ip = "".join(int.from_bytes(word, "little").to_bytes(4, "big").hex() for word in words)
    return f"{ip.upper()}:{port:04X}"


def peer_uid(sock: socket.socket) -> int | None:
    """The uid owning the client end of ``sock`` (an accepted TCP connection), or None if unknown."""
    family = sock.family
    table = _TABLES.get(family)
    if table is None:
        return None
    try:
        ours = sock.getsockname()[:2]
        theirs = sock.getpeername()[:2]
        want_local = _hex_address(family, theirs[0], theirs[1])
        want_remote = _hex_address(family, ours[0], ours[1])
        lines = table.read_text(encoding="ascii").splitlines()[1:]
    except (OSError, ValueError):
        return None
    for line in lines:
        fields = line.split()
        if len(fields) > 7 and fields[1] == want_local and fields[2] == want_remote:
            return int(fields[7]) if fields[7].isdigit() else None
    return None


def is_own_user(sock: socket.socket) -> bool:
    """Whether the peer of ``sock`` runs as this process's user."""
    return peer_uid(sock) == os.getuid()
