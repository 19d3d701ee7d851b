"""Start states for virtual phones, from the product's side: reset, simulated day, logins.

The virtual phones (:mod:`device_farm.sim`, a test double no product module
imports) answer an extra smart-socket service on their ADB port,
``sim-control:<json>``. Benchmark runs (``droidretriever bench run``) need a
few of its operations to bring a phone to a task's starting state, so the
wire exchange lives here, below the simulator, and the simulator's own
:class:`device_farm.sim.control.SimControlClient` sends through it too.

    control = VirtualPhoneControl("127.0.0.1", 15037)
    control.is_virtual()                    # False on a real adb server: it refuses the service
    control.reset("boot", serial)           # as booted
    control.set_day(3, serial)              # the simulated day the task's data holds on
    control.set_logged_in(serial, "com.google.android.gm", False)
"""

from __future__ import annotations

import json
import socket

from device_farm.errors import DeviceCommandFailed, DeviceLost

__all__ = ["CONTROL_LENGTH_DIGITS", "CONTROL_SERVICE", "VirtualPhoneControl", "send_control"]

CONTROL_SERVICE = "sim-control:"
CONTROL_LENGTH_DIGITS = 8  # hex digits of a control reply's length: a farm's status passes 64 KiB


def send_control(host: str, port: int, request_json: str, *, timeout_s: float = 10.0) -> str:
    """Send one control request (JSON); the reply's JSON body.

    Raises :class:`DeviceLost` when nothing answers on ``host:port`` and
    :class:`DeviceCommandFailed` with the server's reason when it refuses.
    """
    payload = (CONTROL_SERVICE + request_json).encode("utf-8")
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as sock:
            sock.sendall(f"{len(payload):04x}".encode() + payload)
            status = _read_exact(sock, 4)
            length = int(_read_exact(sock, CONTROL_LENGTH_DIGITS).decode("ascii"), 16)
            body = _read_exact(sock, length).decode("utf-8")
    except (OSError, ValueError) as exc:
        raise DeviceLost(f"cannot reach the phones' server at {host}:{port}: {exc}",
                         hint="is the farm up? `droidretriever farm status`") from exc
    if status != b"OKAY":
        raise DeviceCommandFailed(body or "the control request was refused",
                                  hint="only virtual phones take control requests")
    return body


class VirtualPhoneControl:
    """The operations a benchmark needs on the virtual phones behind one ADB port."""

    def __init__(self, host: str, port: int, timeout_s: float = 10.0) -> None:
        self.host, self.port, self.timeout_s = host, port, timeout_s

    def is_virtual(self) -> bool:
        """Whether the server on this port is the virtual phones' (a real adb server refuses)."""
        try:
            self._send({"op": "status"})
        except (DeviceLost, DeviceCommandFailed):
            return False
        return True

    def reset(self, name: str = "boot", serial: str | None = None) -> None:
        """Put the phone (every phone when ``serial`` is None) back to snapshot ``name``."""
        self._send({"op": "reset", "serial": serial, "name": name})

    def set_day(self, day: int, serial: str | None = None) -> None:
        """Move the phone's clock to simulated day ``day`` (data varies by day)."""
        self._send({"op": "set_day", "serial": serial, "day": day})

    def set_logged_in(self, serial: str, package: str, logged_in: bool) -> None:
        """Log the app in or out on one phone."""
        self._send({"op": "set_logged_in", "serial": serial, "package": package, "on": logged_in})

    def _send(self, request: dict[str, object]) -> str:
        return send_control(self.host, self.port, json.dumps(request), timeout_s=self.timeout_s)


def _read_exact(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ValueError("the server closed the connection")
        data += chunk
    return data
