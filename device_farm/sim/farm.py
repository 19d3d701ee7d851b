"""The set of virtual phones one server hosts, with their latency and faults.

Everything here is touched only from the server's event loop thread, so no
locks: control requests arrive as smart-socket services on the same loop.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from core.config import LatencyProfile
from device_farm.sim.catalog import Catalog
from device_farm.sim.errors import SimServerError
from device_farm.sim.gestures import Gestures
from device_farm.sim.layout import Display
from device_farm.sim.phone import Phone, PhoneIdentity
from device_farm.sim.replay.apps import group_by_display, replay_app_spec
from device_farm.sim.replay.graph import ReplayApp

__all__ = ["LATENCY_PROFILES", "Farm", "Faults", "Latency", "VirtualDevice", "serial_for"]


@dataclass(frozen=True)
class Latency:
    """Seconds a phone takes for a screenshot, a dump, and to settle after an action."""

    screenshot_s: float = 0.0
    dump_s: float = 0.0
    settle_s: float = 0.0


LATENCY_PROFILES: dict[LatencyProfile, Latency] = {
    LatencyProfile.ZERO: Latency(),
    LatencyProfile.REALISTIC: Latency(screenshot_s=0.150, dump_s=0.300, settle_s=0.300),
}


@dataclass
class Faults:
    """Injected faults of one phone (see the control API)."""

    drop_connections: int = 0  # the next N connections to this phone are cut
    frozen_until: float = 0.0  # monotonic time; requests get no answer before it
    slow_screenshot_s: float = 0.0
    offline: bool = False

    def is_frozen(self) -> bool:
        return time.monotonic() < self.frozen_until


@dataclass
class VirtualDevice:
    phone: Phone
    gestures: Gestures
    latency: Latency = Latency()
    faults: Faults = field(default_factory=Faults)
    transport_id: int = 1

    @property
    def serial(self) -> str:
        return self.phone.serial


def serial_for(index: int) -> str:
    """``emulator-5554``, ``emulator-5556``, ... as real emulators are numbered."""
    return f"emulator-{5554 + 2 * index}"


# The paper's phone is 1080x2244; the rest use a common 1080x2340 panel.
_MODELS = (("Pixel 7", Display(1080, 2340, 440)), ("MI 8", Display(1080, 2244, 440)))


class Farm:
    """N phones sharing one app catalog and seed, plus a replay phone per recorded screen size.

    Every phone has every app of the catalog installed, unless ``phone_apps``
    names the packages installed on some phones (``{serial: [package, ...]}``);
    either way any catalog app can be installed later (control ``install``).
    Recorded apps (``replays``) are installed on replay phones of their
    recording's screen size, numbered after the N phones, beside the catalog. The
    first phone is number ``first_index`` (a second host's farm starts after the first's).
    """

    def __init__(self, catalog: Catalog, phones: int, seed: int, latency: LatencyProfile,
                 phone_apps: Mapping[str, Iterable[str]] | None = None,
                 replays: Sequence[ReplayApp] = (), first_index: int = 0) -> None:
        self.catalog = catalog
        self.seed = seed
        self.devices: dict[str, VirtualDevice] = {}
        installed = _installed_sets(catalog, phones, phone_apps or {})
        for i in range(phones):
            model, display = _MODELS[i % len(_MODELS)] if i else _MODELS[0]
            serial = serial_for(first_index + i)
            phone = Phone(PhoneIdentity(serial, model, display, seed), installed.get(serial, catalog),
                          available=catalog)
            self.devices[phone.serial] = VirtualDevice(
                phone, Gestures(phone), LATENCY_PROFILES[latency], transport_id=i + 1
            )
        for j, (display, recorded) in enumerate(group_by_display(replays)):
            index = phones + j
            entries = {p: replay_app_spec(app) for p, app in recorded.items()}
            installed_here = Catalog(apps={**catalog.apps, **entries})
            phone = Phone(PhoneIdentity(serial_for(first_index + index), f"Replay {display.width}x{display.height}",
                                        display, seed), installed_here, available=installed_here,
                          replays=recorded)
            self.devices[phone.serial] = VirtualDevice(
                phone, Gestures(phone), LATENCY_PROFILES[latency], transport_id=index + 1
            )

    @property
    def serials(self) -> list[str]:
        return list(self.devices)

    def get(self, serial: str) -> VirtualDevice | None:
        return self.devices.get(serial)

    def by_transport_id(self, transport_id: int) -> VirtualDevice | None:
        return next((d for d in self.devices.values() if d.transport_id == transport_id), None)


def _installed_sets(catalog: Catalog, phones: int,
                    phone_apps: Mapping[str, Iterable[str]]) -> dict[str, Catalog]:
    """Each named phone's own catalog; unknown serials and packages are refused by name."""
    serials = {serial_for(i) for i in range(phones)}
    out: dict[str, Catalog] = {}
    for serial, packages in phone_apps.items():
        if serial not in serials:
            raise SimServerError(f"phone_apps names {serial!r}, which is not one of the {phones} phones",
                                 hint=f"phones are {', '.join(sorted(serials))}")
        wanted = list(packages)
        unknown = [p for p in wanted if catalog.get(p) is None]
        if unknown:
            raise SimServerError(f"phone_apps for {serial} names apps not in the catalog: {', '.join(unknown)}",
                                 hint="use package names of device_farm/sim/apps/*.yaml")
        out[serial] = Catalog(apps={p: catalog.apps[p] for p in wanted})
    return out
