"""Fast shell round trips to one phone over adbutils: one connection each, no close sleep.

Two costs of adbutils dominate a driver's round trip to a nearby phone, not
the phone itself:

- Selecting the device by serial (``host:tport:serial:S``) first asks the
  server for its version on a connection of its own. Selecting it by
  transport id (``host:transport-id:N``, N from ``host:devices-l``) needs no
  version, so a command is one connection.
- ``AdbConnection.close()`` shuts down the write side and sleeps 10 ms before
  closing. After reading a shell's output to EOF the phone has already
  closed its end, so the socket is closed directly here.

:class:`PhoneShell` does both, and only for its own connections: adbutils is
not patched. It looks the transport id up lazily (the first command) and again
when the server refuses it, because a phone that reconnects (USB replugged,
Wi-Fi adb back) gets a new transport id. Servers that list no transport id
(old adb) are addressed by serial, as adbutils does.
"""

from __future__ import annotations

import socket

import adbutils
from adbutils.errors import AdbConnectionError, AdbError, AdbTimeout

from device_farm.adb_client import NoSpawnAdbClient, translate_adb_errors

__all__ = ["PhoneShell"]

_CHUNK = 1 << 20


class PhoneShell:
    """Shell commands on one phone (by serial) through an adb server, one connection each."""

    def __init__(self, client: NoSpawnAdbClient, serial: str, timeout_s: float) -> None:
        self._client = client
        self._serial = serial
        self._timeout = timeout_s
        self._device: adbutils.AdbDevice | None = None
        self._transport_id: int | None = None

    @property
    def transport_id(self) -> int | None:
        """The transport id the phone is addressed by; None when by serial (or not yet looked up)."""
        return self._transport_id

    def run(self, command: str, action: str) -> bytes:
        """Run ``command`` and return everything it printed (stdout and stderr, as adb mixes them).

        Errors are the farm's own (DeviceLost, DeviceTimeout, DeviceCommandFailed);
        ``action`` names the step in their message.
        """
        with translate_adb_errors(self._serial, action):
            sock = self._open_shell(command)
            try:
                sock.settimeout(self._timeout)
                return _read_to_eof(sock)
            finally:
                # The phone closed its end (EOF) or we give up on it: no need to linger.
                sock.close()

    def run_text(self, command: str, action: str) -> str:
        """:meth:`run`, decoded as UTF-8 (undecodable bytes replaced) and right-stripped."""
        return self.run(command, action).decode("utf-8", errors="replace").rstrip()

    # ------------------------------------------------------------------ selection

    def _open_shell(self, command: str) -> socket.socket:
        device = self._device or self._select()
        try:
            conn = device.open_transport(timeout=self._timeout)
        except (AdbTimeout, AdbConnectionError):
            raise
        except AdbError:
            # The server refused the transport. If the phone came back under another
            # transport id, the command was never sent: select it again and retry once.
            previous = self._transport_id
            device = self._select()
            if self._transport_id is None or self._transport_id == previous:
                raise
            conn = device.open_transport(timeout=self._timeout)
        sock: socket.socket = conn.conn
        try:
            conn.send_command("shell:" + command)
            conn.check_okay()
        except BaseException:
            sock.close()
            raise
        return sock

    def _select(self) -> adbutils.AdbDevice:
        listed = next((info for info in self._client.list(extended=True)
                       if info.serial == self._serial), None)
        self._transport_id = listed.transport_id if listed is not None else None
        if self._transport_id is not None:
            self._device = adbutils.AdbDevice(self._client, transport_id=self._transport_id)
            return self._device
        by_serial = self._client.device(self._serial)
        # A phone not listed yet is looked up again next time; one listed without an id
        # (an old adb server) stays addressed by serial.
        self._device = by_serial if listed is not None else None
        return by_serial


def _read_to_eof(sock: socket.socket) -> bytes:
    # adbutils grows its result with `bytes +=` per 4 KiB chunk (quadratic: seconds for
    # a 10 MB raw frame); one growing buffer and 1 MiB reads keep it linear.
    buffer = bytearray()
    chunk = memoryview(bytearray(_CHUNK))
    while True:
        received = sock.recv_into(chunk)
        if not received:
            return bytes(buffer)
        buffer += chunk[:received]
