"""The ADB host server the virtual phones sit behind, and :class:`SimServer`.

Speaks the smart-socket protocol adbutils (and the ``adb`` client) use:
host services (``host:version``, ``host:devices[-l]``, ``host:track-devices``,
transports ``host:transport:<serial>`` / ``host:tport:serial:<serial>`` /
``host:transport-id:<n>``, ``host-serial:<serial>:<cmd>``), then device
services (``shell:``, ``shell,v2:``, ``exec:``, ``sync:``, ``framebuffer:``),
plus ``sim-control:<json>`` for :mod:`device_farm.sim.control`.

Only the user who runs the server is served (:mod:`device_farm.sim.peer`): a
connection from any other user, or one whose user cannot be found, gets
``FAIL`` and is closed before it can name a phone. ``host:sim-access`` answers
the rule (``owner-only uid=N``) for ``droidretriever status``.

``SimServer`` runs the asyncio server in a background thread so tests use it
in-process while other processes (Celery workers) reach it over TCP.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import socket
import struct
import threading
from collections.abc import Iterable, Mapping, Sequence
from types import TracebackType

from core.config import LatencyProfile, SimSettings
from device_farm.sim.catalog import Catalog, load_catalog
from device_farm.sim.control import CONTROL_SERVICE, SimControlClient, apply_control
from device_farm.sim.errors import ControlError, SimError, SimServerError
from device_farm.sim.farm import Farm, VirtualDevice
from device_farm.sim.peer import is_own_user
from device_farm.sim.protocol import read_request, write_fail, write_okay
from device_farm.sim.replay.graph import ReplayApp
from device_farm.sim.shell import run_shell
from device_farm.sim.sync_service import serve_sync
from device_farm.virtual_control import CONTROL_LENGTH_DIGITS

__all__ = ["ACCESS_SERVICE", "ADB_SERVER_VERSION", "SimServer"]

ADB_SERVER_VERSION = 41  # >= 41 makes adbutils use host:tport:serial (and read the 8-byte transport id)
# No stat_v2 / ls_v2 / sendrecv_v2: the sync service speaks v1 (STAT, LIST, RECV, SEND), and a
# client told of v2 sends STA2 / LIS2 (stock `adb push/pull`: "failed to read stat response").
_FEATURES = "shell_v2,cmd,fixed_push_mkdir,apex,abb_exec"
ACCESS_SERVICE = "host:sim-access"
_STRANGER = ("this ADB server serves only the user who runs it (uid {uid}); "
             "run the client as that user on this host")
_FREEZE_POLL_S = 0.05


class _Handler:
    """Serves one client connection."""

    def __init__(self, farm: Farm, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.farm, self.reader, self.writer = farm, reader, writer

    def _listing(self, extended: bool) -> str:
        lines = []
        for dev in self.farm.devices.values():
            state = "offline" if dev.faults.offline else "device"
            if extended:
                model = dev.phone.identity.model.replace(" ", "_")
                lines.append(f"{dev.serial:<22} {state} product:sdk_gphone64_x86_64 model:{model} "
                             f"device:emu64x transport_id:{dev.transport_id}\n")
            else:
                lines.append(f"{dev.serial}\t{state}\n")
        return "".join(lines)

    def _pick(self, selector: str) -> VirtualDevice | str:
        """A device for a transport selector, or the FAIL reason."""
        devices = list(self.farm.devices.values())
        if selector in ("any", "usb", "local", "transport-any", "transport-local", "transport-usb"):
            if len(devices) != 1:
                return "more than one device/emulator" if devices else "no devices/emulators found"
            return devices[0]
        if selector.startswith("transport-id:") or selector.startswith("id:"):
            raw = selector.split(":", 1)[1]
            dev = self.farm.by_transport_id(int(raw)) if raw.isdigit() else None
            return dev or f"no device with transport id '{raw}'"
        return self.farm.get(selector) or f"device '{selector}' not found"

    async def _admit(self, dev: VirtualDevice) -> bool:
        """Apply the phone's faults; False when the connection must end without a reply."""
        if dev.faults.drop_connections > 0:
            dev.faults.drop_connections -= 1
            self.writer.transport.abort()
            return False
        if dev.faults.offline:
            write_fail(self.writer, "device offline")
            return False
        return True

    async def serve(self) -> None:
        device: VirtualDevice | None = None
        while True:
            request = await read_request(self.reader)
            if request is None:
                return
            if device is not None:
                await self._device_service(device, request)
                return
            if request.startswith(CONTROL_SERVICE):
                try:
                    reply = apply_control(self.farm, request[len(CONTROL_SERVICE):])
                    write_okay(self.writer, reply.model_dump_json(), digits=CONTROL_LENGTH_DIGITS)
                except ControlError as exc:
                    write_fail(self.writer, f"{exc} ({exc.hint})" if exc.hint else str(exc),
                               digits=CONTROL_LENGTH_DIGITS)
                return
            device = await self._host_service(request)
            if device is None:
                return

    async def _host_service(self, request: str) -> VirtualDevice | None:
        """Answer a host request; returns the device when it selected a transport."""
        w = self.writer
        if request == "host:version":
            write_okay(w, f"{ADB_SERVER_VERSION:04x}")
        elif request == ACCESS_SERVICE:
            write_okay(w, f"owner-only uid={os.getuid()}")
        elif request in ("host:devices", "host:devices-l"):
            write_okay(w, self._listing(request.endswith("-l")))
        elif request == "host:track-devices":
            write_okay(w, self._listing(False))
            await w.drain()
            await self.reader.read()  # stays open until the client leaves
        elif request == "host:kill":
            write_okay(w)
        elif request in ("host:features", "host:host-features"):
            write_okay(w, _FEATURES)
        elif request == "host:list-forward":
            write_okay(w, "")
        elif request.startswith(("host:transport", "host:tport:")):
            selector = request.removeprefix("host:tport:").removeprefix("host:transport:")
            selector = selector.removeprefix("host:").removeprefix("serial:")
            picked = self._pick(selector)
            if isinstance(picked, str):
                write_fail(w, picked)
            elif await self._admit(picked):
                write_okay(w)
                if request.startswith("host:tport:"):
                    w.write(struct.pack("<Q", picked.transport_id))
                await w.drain()
                return picked
            return None
        elif request.startswith(("host-serial:", "host-transport-id:", "host-usb:", "host-local:", "host:")):
            await self._per_device(request)
        else:
            write_fail(w, f"unknown host service '{request}'")
        return None

    async def _per_device(self, request: str) -> None:
        w = self.writer
        kind, _, rest = request.partition(":")
        if kind == "host-serial":
            serial = next((s for s in self.farm.serials if rest.startswith(s + ":")), None)
            if serial is None:
                write_fail(w, f"device '{rest.split(':')[0]}' not found")
                return
            picked: VirtualDevice | str = self.farm.devices[serial]
            command = rest[len(serial) + 1:]
        elif kind == "host-transport-id":
            raw, _, command = rest.partition(":")
            picked = self._pick(f"id:{raw}")
        else:
            picked, command = self._pick("any"), rest
        if isinstance(picked, str):
            write_fail(w, picked)
            return
        if not await self._admit(picked):
            return
        answers = {"get-state": "device", "get-serialno": picked.serial, "get-devpath": "unknown",
                   "features": _FEATURES, "list-forward": ""}
        if command in answers:
            write_okay(w, answers[command])
        elif command.startswith("wait-for-"):
            write_okay(w)
            write_okay(w)
        elif command.startswith(("forward", "killforward")):
            write_fail(w, "port forwarding is not supported by the simulator (it has no device ports)")
        else:
            write_fail(w, f"unknown host service '{command}'")

    async def _hang_while_frozen(self, dev: VirtualDevice) -> None:
        """A frozen phone accepts the service, then says nothing (clients hit their read timeout)."""
        if not dev.faults.is_frozen():
            return
        write_okay(self.writer)
        await self.writer.drain()
        while dev.faults.is_frozen() and not self.reader.at_eof():
            await asyncio.sleep(_FREEZE_POLL_S)
        raise ConnectionResetError("phone was frozen; the request is dropped")

    async def _device_service(self, dev: VirtualDevice, request: str) -> None:
        w = self.writer
        await self._hang_while_frozen(dev)
        if request.startswith("shell,v2") or request.startswith("shell,raw"):
            command = request.split(":", 1)[1] if ":" in request else ""
            result = run_shell(dev, command)
            await asyncio.sleep(result.delay_s)
            write_okay(w)
            for stream, data in result.outputs:
                w.write(bytes([stream]) + struct.pack("<I", len(data)) + data)
            w.write(bytes([3]) + struct.pack("<I", 1) + bytes([result.code & 0xFF]))
        elif request.startswith(("shell:", "exec:", "abb_exec:")):
            command = request.split(":", 1)[1]
            if request.startswith("abb_exec:"):  # `cmd` without the shell: arguments split by NUL
                command = "cmd " + " ".join(shlex.quote(arg) for arg in command.split("\0"))
            write_okay(w)
            if command.strip():
                result = run_shell(dev, command)
                await asyncio.sleep(result.delay_s)
                w.write(result.merged if request.startswith("shell:") else result.stdout)
        elif request == "sync:":
            write_okay(w)
            await w.drain()
            await serve_sync(dev.phone, self.reader, w)
        elif request == "framebuffer:":
            raw = dev.phone.screenshot_raw()
            width, height = struct.unpack("<II", raw[:8])
            pixels = raw[16:]
            write_okay(w)
            w.write(struct.pack("<12I", 1, 32, len(pixels), width, height, 0, 8, 16, 8, 8, 8, 24, 8))
            w.write(pixels)
        elif request == "root:":
            write_okay(w)
            w.write(b"adbd cannot run as root in production builds\n")
        elif request.startswith(("reboot:", "remount:")):
            write_okay(w)
        else:
            write_fail(w, f"unsupported device service '{request.split(':')[0]}'")
        await w.drain()


class SimServer:
    """N virtual phones behind an ADB server on ``host:port`` (0 = a free port).

    Usable as a context manager; ``start()`` returns once the port is bound.
    ``phone_apps`` (``{serial: [package, ...]}``) installs only those apps on
    the named phones; the others get the whole catalog. ``replays`` (recorded
    apps, :func:`device_farm.sim.load_recordings`) adds a replay phone per
    recorded screen size, numbered after the N phones. Phones are numbered from
    ``first_index`` (``emulator-5554`` is 0), so farms on several hosts differ.
    """

    def __init__(self, phones: int = 2, host: str = "127.0.0.1", port: int = 0, seed: int = 7,
                 latency: LatencyProfile | str = LatencyProfile.ZERO, catalog: Catalog | None = None,
                 phone_apps: Mapping[str, Iterable[str]] | None = None,
                 replays: Sequence[ReplayApp] = (), first_index: int = 0) -> None:
        if phones < 1:
            raise SimServerError(f"phones must be at least 1 (got {phones})", hint="pass phones=1 or more")
        self.host = host
        self._requested_port = port
        self.farm = Farm(catalog or load_catalog(), phones, seed, LatencyProfile(latency), phone_apps,
                         replays, first_index=first_index)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._port: int | None = None
        self._stop: asyncio.Event | None = None

    @classmethod
    def from_settings(cls, settings: SimSettings, port: int | None = None) -> SimServer:
        """A server configured by ``settings.sim`` (``port`` overrides its adb_port)."""
        return cls(phones=settings.phones, host=settings.host,
                   port=settings.adb_port if port is None else port,
                   seed=settings.seed, latency=settings.latency)

    @property
    def port(self) -> int:
        if self._port is None:
            raise SimServerError("the simulator is not running", hint="call start() or use it in a with-block")
        return self._port

    @property
    def serials(self) -> list[str]:
        return self.farm.serials

    @property
    def control(self) -> SimControlClient:
        """The control API client for this server (the same one another process would use)."""
        return SimControlClient(self.host, self.port)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            sock: socket.socket | None = writer.get_extra_info("socket")
            if sock is None or not is_own_user(sock):
                await read_request(reader)  # answer the request: closing on unread data resets it
                write_fail(writer, _STRANGER.format(uid=os.getuid()))
                await writer.drain()
                return
            await _Handler(self.farm, reader, writer).serve()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away mid-request; nothing to answer
        finally:
            if not writer.is_closing():
                writer.close()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        try:
            server = await asyncio.start_server(self._handle, self.host, self._requested_port,
                                                limit=1 << 20, reuse_address=True)
        except OSError as exc:
            self._error = SimServerError(
                f"cannot listen on {self.host}:{self._requested_port}: {exc.strerror}",
                hint="pick another port (port=0 picks a free one) or stop what uses it")
            self._ready.set()
            return
        self._port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        try:
            loop.run_until_complete(self._main())
        except SimError as exc:
            self._error = exc
            self._ready.set()
        finally:
            # connections still open (track-devices, frozen phones) end with the server
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.close()

    def start(self) -> SimServer:
        """Start serving in a background thread; raises :class:`SimServerError` if it cannot."""
        if self._thread is not None:
            return self
        self._thread = threading.Thread(target=self._run, name="sim-adb-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout=30):
            raise SimServerError("the simulator did not start within 30 s", hint="check the logs")
        if self._error is not None:
            self._thread.join(timeout=5)
            self._thread = None
            raise self._error
        return self

    def stop(self) -> None:
        """Stop serving and wait for the thread to end."""
        loop, stop = self._loop, self._stop
        if self._thread is None or loop is None or stop is None:
            return
        loop.call_soon_threadsafe(stop.set)
        self._thread.join(timeout=10)
        self._thread = None
        self._port = None

    def __enter__(self) -> SimServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
