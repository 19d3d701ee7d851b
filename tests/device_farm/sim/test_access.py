"""The phones' ADB port serves the user who runs it, and nobody else on the host."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

from device_farm.sim import SimServer
from device_farm.sim.peer import peer_uid

_NOBODY = 65534
_CLIENT = """
import socket, sys
with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5) as sock:
    sock.sendall(b"000chost:devices")
    print(sock.recv(400).decode())
"""


def test_the_owner_is_served(sim: SimServer) -> None:
    with socket.create_connection(("127.0.0.1", sim.port), timeout=5) as sock:
        sock.sendall(b"000chost:devices")
        assert sock.recv(4) == b"OKAY"


def test_peer_uid_finds_the_client_of_a_loopback_connection() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server, \
            socket.create_connection(server.getsockname()) as client:
        accepted, _ = server.accept()
        with accepted:
            assert peer_uid(accepted) == os.getuid()
        assert client.fileno() >= 0


@pytest.mark.skipif(os.getuid() != 0, reason="acting as another user needs root")
def test_another_user_is_refused(sim: SimServer) -> None:
    python = "/usr/bin/python3"  # the venv may sit in a folder the stranger cannot enter
    if not Path(python).exists():
        pytest.skip(f"{python} is missing")
    answer = subprocess.run([python, "-c", _CLIENT, str(sim.port)], user=_NOBODY, group=_NOBODY, cwd="/",
                            capture_output=True, text=True, timeout=20, check=True).stdout
    assert answer.startswith("FAIL")
    assert "serves only the user who runs it" in answer
    assert "emulator-5554" not in answer
