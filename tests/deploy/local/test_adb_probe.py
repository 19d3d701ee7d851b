"""``droidretriever status`` asks the virtual phones' ADB port as a stranger would: refused?"""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator

import pytest

from deploy.local.probes import is_adb_refused
from device_farm.sim import SimServer
from droidretriever.testing.ports import free_port


class _OpenAdbHandler(socketserver.BaseRequestHandler):
    """A test double of an older simulator: lists phones to anyone and states no rule."""

    def handle(self) -> None:
        self.request.recv(64)
        self.request.sendall(b"OKAY0015emulator-5554\tdevice\n")


@pytest.fixture()
def open_adb_port() -> Iterator[int]:
    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), _OpenAdbHandler) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        yield server.server_address[1]
        server.shutdown()
        thread.join(5)


def test_the_phones_port_refuses_strangers() -> None:
    with SimServer(phones=1) as sim:
        assert is_adb_refused("127.0.0.1", sim.port) is True


def test_an_open_port_is_reported(open_adb_port: int) -> None:
    assert is_adb_refused("127.0.0.1", open_adb_port) is False


def test_nothing_listening_is_unknown() -> None:
    assert is_adb_refused("127.0.0.1", free_port()) is None
