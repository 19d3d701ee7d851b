"""The control API: faults, snapshots, clock, login and latency, per phone.

It is an extra smart-socket service on the ADB port, ``sim-control:<json>``,
so tests in another process reach it exactly as adbutils reaches the
phones. :class:`SimControlClient` is the Python side; every method sends one
:class:`ControlRequest` and returns the :class:`ControlReply` (or raises
:class:`ControlError` with the server's reason).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.config import LatencyProfile
from device_farm.errors import DeviceCommandFailed, DeviceLost
from device_farm.sim.errors import ControlError
from device_farm.sim.farm import LATENCY_PROFILES, Farm, Faults, VirtualDevice
from device_farm.sim.replay.cursor import ReplayStep
from device_farm.sim.spec import DialogButton, DialogKind, DialogSpec
from device_farm.sim.state import PhoneState
from device_farm.virtual_control import CONTROL_SERVICE, send_control

__all__ = ["CONTROL_SERVICE", "ControlReply", "ControlRequest", "PhoneStatus", "SimControlClient", "apply_control"]


Op = Literal[
    "status", "drop_connections", "freeze", "unfreeze", "slow_screenshot", "network_error", "popup",
    "offline", "clear_faults", "snapshot", "reset", "advance_clock", "set_day", "set_logged_in",
    "set_latency", "install", "uninstall",
]


class ControlRequest(BaseModel):
    """One control operation; ``serial`` None means every phone."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    op: Op
    serial: str | None = None
    package: str | None = None
    name: str = "boot"
    seconds: float = Field(default=0.0, ge=-10 * 365 * 86400, le=10 * 365 * 86400)
    count: int = Field(default=1, ge=0, le=1000)
    day: int = 0
    on: bool = True
    profile: LatencyProfile = LatencyProfile.ZERO
    title: str = "Limited-time offer"
    message: str = ""


class PhoneStatus(BaseModel):
    model_config = ConfigDict(frozen=True)

    serial: str
    model: str
    width: int
    height: int
    package: str
    activity: str
    day: int
    clock: str
    logged_in: dict[str, bool]
    frozen: bool
    offline: bool
    drop_connections: int
    network_error: list[str]
    snapshots: list[str]
    packages: list[str] = []  # installed apps
    recorded: list[str] = []  # installed apps that replay a recording
    replay_screens: dict[str, str] = {}  # running recorded app -> its screen key
    replay_trail: list[ReplayStep] = []  # every action on recorded apps since boot/reset, oldest first
    # The app in front's screen (its id in the app's YAML), for benchmarks that check what an agent
    # reached; "" on the launcher or a recorded app.
    screen: str = ""


class ControlReply(BaseModel):
    model_config = ConfigDict(frozen=True)

    ok: bool = True
    message: str = ""
    phones: list[PhoneStatus] = []


def _status(dev: VirtualDevice) -> PhoneStatus:
    phone = dev.phone
    package, activity = phone.focused_activity()
    return PhoneStatus(
        serial=phone.serial, model=phone.identity.model, width=phone.display.width,
        height=phone.display.height, package=package, activity=activity, day=phone.clock.day,
        clock=phone.clock.now().isoformat(timespec="seconds"), logged_in=dict(phone.state.logged_in),
        frozen=dev.faults.is_frozen(), offline=dev.faults.offline, drop_connections=dev.faults.drop_connections,
        network_error=sorted(phone.state.network_error), snapshots=sorted(phone.snapshots),
        packages=sorted(phone.catalog.apps), recorded=sorted(phone.replays),
        replay_screens={p: c.screen for p, c in phone.state.replay.items()},
        replay_trail=list(phone.state.replay_trail),
        screen=_front_screen(phone.state),
    )


def _front_screen(state: PhoneState) -> str:
    stack = state.stacks.get(state.foreground or "", [])
    return stack[-1].screen if stack else ""


def _apply_one(dev: VirtualDevice, req: ControlRequest) -> None:
    phone, faults = dev.phone, dev.faults
    op = req.op
    if op == "drop_connections":
        faults.drop_connections = req.count
    elif op == "freeze":
        faults.frozen_until = time.monotonic() + (req.seconds or 3600.0)
    elif op == "unfreeze":
        faults.frozen_until = 0.0
    elif op == "slow_screenshot":
        faults.slow_screenshot_s = max(req.seconds, 0.0)
    elif op == "offline":
        faults.offline = req.on
    elif op == "clear_faults":
        dev.faults = Faults()
        phone.state.network_error.clear()
        phone.touch()
    elif op == "network_error":
        _need_package(phone.catalog.apps, req)
        (phone.state.network_error.add if req.on else phone.state.network_error.discard)(str(req.package))
        phone.touch()
    elif op == "popup":
        package = req.package or phone.state.foreground
        if package is None or phone.app(package) is None:
            raise ControlError("no app to show a pop-up over", hint="open an app first or pass package=")
        spec = DialogSpec(kind=DialogKind.AD, title=req.title, message=req.message, image="#F39C12",
                          caption=req.title, buttons=(DialogButton(text="Close"),))
        dev.gestures.inject_popup(package, spec)
    elif op == "snapshot":
        phone.save_snapshot(req.name)
    elif op == "reset":
        if not phone.restore_snapshot(req.name):
            raise ControlError(f"{phone.serial} has no snapshot {req.name!r}",
                               hint=f"take one first (op=snapshot); it has {sorted(phone.snapshots)}")
    elif op == "advance_clock":
        phone.clock.advance(req.seconds)
        phone.touch()
    elif op == "set_day":
        phone.clock.set_day(req.day)
        phone.touch()
    elif op == "set_logged_in":
        _need_package(phone.catalog.apps, req)
        phone.state.logged_in[str(req.package)] = req.on
        phone.touch()
    elif op == "set_latency":
        dev.latency = LATENCY_PROFILES[req.profile]
    elif op == "install" and not phone.install(str(req.package)):
        raise ControlError(f"no app {req.package!r} to install on {phone.serial}",
                           hint="pass the package of an app in the simulator's catalog (device_farm/sim/apps)")
    elif op == "uninstall" and not phone.uninstall(str(req.package)):
        raise ControlError(f"{req.package!r} is not installed on {phone.serial}",
                           hint=f"installed there: {', '.join(sorted(phone.catalog.apps))}")


def _need_package(apps: Mapping[str, object], req: ControlRequest) -> None:
    if req.package is None or req.package not in apps:
        raise ControlError(f"unknown package {req.package!r} for {req.op}",
                           hint="pass the package name of an installed app (pm list packages)")


def apply_control(farm: Farm, raw: str) -> ControlReply:
    """Validate and run one request against ``farm``."""
    try:
        req = ControlRequest.model_validate_json(raw)
    except ValidationError as exc:
        raise ControlError(f"bad control request: {exc.errors()[0]['msg']}",
                           hint="send a ControlRequest as JSON") from exc
    if req.serial is not None and farm.get(req.serial) is None:
        raise ControlError(f"no phone {req.serial!r}", hint=f"phones are {', '.join(farm.serials)}")
    targets = [farm.devices[req.serial]] if req.serial else list(farm.devices.values())
    for dev in targets:
        if req.op != "status":
            _apply_one(dev, req)
    return ControlReply(phones=[_status(d) for d in targets])


class SimControlClient:
    """Talks to a running simulator's control service (same host and port as its ADB server)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 15037, timeout_s: float = 10.0) -> None:
        self.host, self.port, self.timeout_s = host, port, timeout_s

    def request(self, req: ControlRequest) -> ControlReply:
        """Send ``req``; raise :class:`ControlError` when the server refuses it."""
        try:
            body = send_control(self.host, self.port, req.model_dump_json(), timeout_s=self.timeout_s)
        except DeviceLost as exc:
            raise ControlError(f"cannot reach the simulator at {self.host}:{self.port}: {exc.__cause__ or exc}",
                               hint="start it with `droidretriever farm sim` or check the port") from exc
        except DeviceCommandFailed as exc:
            raise ControlError(str(exc), hint="see device_farm/sim/control.py for the operations") from exc
        return ControlReply.model_validate_json(body)

    def status(self, serial: str | None = None) -> list[PhoneStatus]:
        return self.request(ControlRequest(op="status", serial=serial)).phones

    def drop_connections(self, serial: str, count: int = 1) -> None:
        """Cut the next ``count`` connections to the phone (adbutils sees a closed socket)."""
        self.request(ControlRequest(op="drop_connections", serial=serial, count=count))

    def freeze(self, serial: str, seconds: float = 3600.0) -> None:
        """The phone stops answering (clients time out) for ``seconds``."""
        self.request(ControlRequest(op="freeze", serial=serial, seconds=seconds))

    def unfreeze(self, serial: str) -> None:
        self.request(ControlRequest(op="unfreeze", serial=serial))

    def slow_screenshot(self, serial: str, seconds: float) -> None:
        self.request(ControlRequest(op="slow_screenshot", serial=serial, seconds=seconds))

    def network_error(self, serial: str, package: str, on: bool = True) -> None:
        """The app shows its network-error page instead of content while on."""
        self.request(ControlRequest(op="network_error", serial=serial, package=package, on=on))

    def popup(self, serial: str, package: str | None = None, title: str = "Limited-time offer") -> None:
        """An unexpected pop-up over the app in front (or ``package``)."""
        self.request(ControlRequest(op="popup", serial=serial, package=package, title=title))

    def set_offline(self, serial: str, on: bool = True) -> None:
        self.request(ControlRequest(op="offline", serial=serial, on=on))

    def clear_faults(self, serial: str | None = None) -> None:
        self.request(ControlRequest(op="clear_faults", serial=serial))

    def snapshot(self, name: str, serial: str | None = None) -> None:
        self.request(ControlRequest(op="snapshot", serial=serial, name=name))

    def reset(self, name: str = "boot", serial: str | None = None) -> None:
        """Put the phone(s) back to snapshot ``name`` (``boot`` = as started)."""
        self.request(ControlRequest(op="reset", serial=serial, name=name))

    def advance_clock(self, seconds: float, serial: str | None = None) -> None:
        self.request(ControlRequest(op="advance_clock", serial=serial, seconds=seconds))

    def set_day(self, day: int, serial: str | None = None) -> None:
        self.request(ControlRequest(op="set_day", serial=serial, day=day))

    def set_logged_in(self, serial: str, package: str, logged_in: bool) -> None:
        self.request(ControlRequest(op="set_logged_in", serial=serial, package=package, on=logged_in))

    def set_latency(self, profile: LatencyProfile, serial: str | None = None) -> None:
        self.request(ControlRequest(op="set_latency", serial=serial, profile=profile))

    def install(self, serial: str, package: str) -> None:
        """Install a catalog app on one phone (its launcher, ``pm list packages`` and ``monkey`` see it)."""
        self.request(ControlRequest(op="install", serial=serial, package=package))

    def uninstall(self, serial: str, package: str) -> None:
        """Remove an app from one phone, closing whatever it had open."""
        self.request(ControlRequest(op="uninstall", serial=serial, package=package))

