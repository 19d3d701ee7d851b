"""Bring a farm up and down: phones (virtual, adb-attached, emulators), one worker each, a monitor,
and the host's shared OCR service when the workers ask one (:mod:`deploy.farm.ocr`).

Used by ``droidretriever farm up|down``; everything runs as background
processes recorded in ``<state_dir>/farm/farm.json`` (see deploy.farm.processes).
The farm's monitor (:mod:`deploy.farm.monitor`) starts a dead worker again by itself
within seconds; ``droidretriever up`` repairs a farm that is up with dead processes
(:func:`repair_farm`): the virtual phones, workers and monitor are started again
with their recorded command lines; an emulator is not (it boots for minutes:
``farm down`` and ``farm up`` is the way), and neither is a worker that runs but
does not beat: both are errors that say what to do.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import redis

from core.config import Settings
from deploy.farm.ocr import start_shared_ocr, worker_ocr_args
from deploy.farm.processes import (
    FarmManifest,
    ProcessRecord,
    is_running,
    manifest_lock,
    read_manifest,
    start_process,
    stop_process,
    stop_processes,
    write_manifest,
)
from deploy.local.processes import is_port_free
from device_farm.adb_client import list_adb_devices
from device_farm.emulators import (
    emulator_argv,
    emulator_serial,
    find_emulator_binary,
    wait_for_boot,
)
from device_farm.errors import DeviceError, FarmSetupError
from device_farm.registry import DeviceRegistry
from device_farm.serials import farm_serial, host_label

__all__ = [
    "bring_down",
    "bring_up_adb",
    "bring_up_emulators",
    "bring_up_sim",
    "ensure_sim_farm",
    "farm_serials",
    "repair_farm",
    "running_farm",
    "wait_for_workers",
    "worker_process_name",
]


def running_farm(settings: Settings) -> FarmManifest | None:
    """The manifest of the farm up under ``settings.state_dir``, if any of its processes runs."""
    manifest = read_manifest(settings.state_dir)
    if manifest is not None and any(is_running(p) for p in manifest.processes):
        return manifest
    return None


def _check_no_farm(settings: Settings) -> None:
    manifest = running_farm(settings)
    if manifest is not None:
        raise FarmSetupError(
            f"a farm ({manifest.mode}, {len(manifest.serials)} phones) is already up "
            f"under {settings.state_dir}",
            hint="`droidretriever farm down` first, or use another DROIDRETRIEVER_STATE_DIR",
        )


def _wait_for_adb(host: str, port: int, count: int, timeout_s: float) -> tuple[str, ...]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            serials = tuple(e.serial for e in list_adb_devices(host, port) if e.state == "device")
            if len(serials) >= count:
                return serials
        except DeviceError:
            pass
        time.sleep(0.2)
    raise FarmSetupError(
        f"the virtual phones did not come up on {host}:{port} within {timeout_s:.0f} s",
        hint="see <state_dir>/farm/sim.log",
    )


def worker_process_name(serial: str) -> str:
    """The name of a phone's worker process (its pid and log files under <state_dir>/farm)."""
    return "worker-" + re.sub(r"[^A-Za-z0-9_.-]", "_", serial)


def farm_serials(settings: Settings, adb_serials: Sequence[str]) -> dict[str, str]:
    """Each phone's farm serial (host-qualified where adb's is host-local) -> its adb serial."""
    host = host_label(settings.farm.host_name)
    return {farm_serial(serial, host): serial for serial in adb_serials}


def _start_workers(settings: Settings, host: str, port: int,
                   serials: dict[str, str]) -> list[ProcessRecord]:
    records = [
        start_process(settings.state_dir, worker_process_name(name), [
            "python", "-m", "tasks.worker.device_worker", "--serial", adb_serial,
            "--farm-serial", name, "--adb-host", host, "--adb-port", str(port),
            *worker_ocr_args(settings),
        ])
        for name, adb_serial in serials.items()
    ]
    records.append(start_process(settings.state_dir, "monitor",
                                 ["python", "-m", "deploy.farm.monitor"]))
    return records


def bring_up_sim(settings: Settings, phones: int, recordings: Sequence[Path] = ()) -> FarmManifest:
    """Start ``phones`` virtual phones (one background process) and a worker for each.

    ``recordings`` (else ``settings.sim.recordings``) are DroidBot recordings the
    simulator installs as apps of replay phones, one phone per recorded screen
    size, numbered after the ``phones``; they get workers like any phone.
    """
    _check_no_farm(settings)
    recorded = list(recordings) or ([settings.sim.recordings] if settings.sim.recordings else [])
    missing = [str(p) for p in recorded if not p.is_dir()]
    if missing:
        raise FarmSetupError(f"no recordings folder at {', '.join(missing)}",
                             hint="pass a folder with DroidBot's states/ and events/ (or a folder of such folders)")
    host, port = settings.sim.host, settings.sim.adb_port
    if not is_port_free(host, port):  # TIME_WAIT leftovers of a stopped farm do not count
        raise FarmSetupError(
            f"port {host}:{port} for the virtual phones' adb server is taken",
            hint="stop what uses it, or set DROIDRETRIEVER_SIM__ADB_PORT to a free port",
        )
    sim = start_process(settings.state_dir, "sim", [
        "python", "-m", "device_farm.sim", "--phones", str(phones), "--host", host,
        "--port", str(port), "--seed", str(settings.sim.seed),
        "--first-index", str(settings.sim.first_index),
        "--latency", settings.sim.latency.value,
        *(["--recordings", *(str(p.resolve()) for p in recorded)] if recorded else []),
    ])
    try:
        serials = farm_serials(settings, _wait_for_adb(host, port, phones, timeout_s=60.0))
        ocr = start_shared_ocr(settings)
    except FarmSetupError:
        stop_process(sim)
        raise
    records = [sim, *ocr, *_start_workers(settings, host, port, serials)]
    manifest = FarmManifest(mode="sim", adb_host=host, adb_port=port, serials=tuple(serials),
                            processes=tuple(records))
    write_manifest(settings.state_dir, manifest)
    return manifest


def bring_up_adb(settings: Settings) -> FarmManifest:
    """A worker for every phone the adb server lists as ``device``."""
    _check_no_farm(settings)
    host, port = settings.farm.adb_host, settings.farm.adb_port
    entries = list_adb_devices(host, port)
    serials = farm_serials(settings, [e.serial for e in entries if e.state == "device"])
    if not serials:
        others = ", ".join(f"{e.serial} ({e.state})" for e in entries) or "none"
        raise FarmSetupError(
            f"adb at {host}:{port} lists no usable phone (listed: {others})",
            hint="plug a phone in with USB debugging on and accept the prompt, or "
            "`adb connect <ip>:5555` for Wi-Fi adb (see docs/device-farm.md)",
        )
    ocr = start_shared_ocr(settings)
    manifest = FarmManifest(mode="adb", adb_host=host, adb_port=port, serials=tuple(serials),
                            processes=(*ocr, *_start_workers(settings, host, port, serials)))
    write_manifest(settings.state_dir, manifest)
    return manifest


def bring_up_emulators(settings: Settings, avds: list[str]) -> FarmManifest:
    """Boot each AVD headless from its clean snapshot, wait for boot, start their workers."""
    _check_no_farm(settings)
    binary = find_emulator_binary(settings.farm.android_sdk_root)
    host, port = settings.farm.adb_host, settings.farm.adb_port
    emulators = [
        start_process(settings.state_dir, f"emulator-{avd}", emulator_argv(binary, avd, index))
        for index, avd in enumerate(avds)
    ]
    # Every host's emulators are emulator-5554, ...: their farm serials carry the host's name.
    serials = farm_serials(settings, [emulator_serial(index) for index in range(len(avds))])
    try:
        for serial in serials.values():
            wait_for_boot(host, port, serial, settings.farm.emulator_boot_timeout_s)
        ocr = start_shared_ocr(settings)
    except DeviceError:  # FarmSetupError is one
        for record in emulators:
            stop_process(record)
        raise
    records = [*emulators, *ocr, *_start_workers(settings, host, port, serials)]
    manifest = FarmManifest(mode="emulators", adb_host=host, adb_port=port, serials=tuple(serials),
                            processes=tuple(records))
    write_manifest(settings.state_dir, manifest)
    return manifest


def ensure_sim_farm(settings: Settings, phones: int,
                    wait_s: float = 90.0) -> tuple[FarmManifest, bool, tuple[str, ...]]:
    """A farm of ``phones`` virtual phones, started unless one is up.

    Returns the manifest, whether the farm was started now, and the processes of
    a farm already up that had died and were started again (:func:`repair_farm`).
    A farm already up (any mode, any size) is otherwise left as it is:
    ``droidretriever up`` stays idempotent, and changing the farm is ``farm down``
    then ``farm up``.
    """
    manifest = running_farm(settings)
    if manifest is not None:
        manifest, restarted = repair_farm(settings, manifest, wait_s)
        return manifest, False, restarted
    manifest = bring_up_sim(settings, phones)
    try:
        wait_for_workers(DeviceRegistry.from_settings(settings), manifest.serials, timeout_s=wait_s)
    except FarmSetupError:
        bring_down(settings)  # nothing half-started is left behind
        raise
    return manifest, True, ()


def repair_farm(settings: Settings, manifest: FarmManifest,
                wait_s: float = 90.0) -> tuple[FarmManifest, tuple[str, ...]]:
    """Start the farm's dead processes again; (the updated manifest, names restarted).

    The phones' process first (its phones come back with the same serials), then
    the dead workers and the monitor, each with the command line it was started
    with. Raises FarmSetupError, saying what to do, for what cannot be repaired
    here: a dead emulator, a worker that does not register again, or one that
    runs but no longer beats.
    """
    dead = [p for p in manifest.processes if not is_running(p)]
    emulators = [p.name for p in dead if p.name.startswith("emulator-")]
    if emulators:
        raise FarmSetupError(
            f"the device farm's {', '.join(emulators)} exited",
            hint="restart the farm: `droidretriever farm down`, then "
            "`droidretriever farm up --emulators ...`",
        )
    registry = DeviceRegistry.from_settings(settings, retry_window_s=0)
    restarted_at = datetime.now(UTC)
    with manifest_lock(settings.state_dir):  # the monitor may be starting a worker again too
        manifest = read_manifest(settings.state_dir) or manifest
        dead = [p for p in manifest.processes if not is_running(p)]
        records = {p.name: p for p in manifest.processes}
        for record in sorted(dead, key=lambda p: p.name != "sim"):  # the phones before workers
            records[record.name] = start_process(settings.state_dir, record.name, list(record.argv))
            if record.name == "sim":
                _wait_for_adb(manifest.adb_host, manifest.adb_port, len(manifest.serials), 60.0)
        repaired = manifest.model_copy(update={"processes": tuple(records.values())})
        if dead:
            write_manifest(settings.state_dir, repaired)
    workers = {worker_process_name(s): s for s in manifest.serials}
    again = tuple(workers[p.name] for p in dead if p.name in workers)
    wait_for_workers(registry, again, timeout_s=wait_s, since=restarted_at)
    silent = [s for s in manifest.serials
              if s not in again and worker_process_name(s) in records and registry.last_heartbeat(s) is None]
    if silent:
        raise FarmSetupError(
            f"the workers of {', '.join(silent)} run but do not beat (hung?)",
            hint="see <state_dir>/farm/worker-*.log; restart the farm: `droidretriever farm down` "
            "then `droidretriever up`",
        )
    return repaired, tuple(p.name for p in dead)


def wait_for_workers(registry: DeviceRegistry, serials: tuple[str, ...],
                     timeout_s: float = 60.0, since: datetime | None = None) -> None:
    """Wait until every serial's worker has registered and beats (beaten after ``since``)."""
    deadline = time.monotonic() + timeout_s
    missing = set(serials)
    while time.monotonic() < deadline:
        missing = {s for s in serials if not _beats(registry, s, since)}
        if not missing:
            return
        time.sleep(0.2)
    raise FarmSetupError(
        f"workers for {', '.join(sorted(missing))} did not register within {timeout_s:.0f} s",
        hint="see their logs under <state_dir>/farm/worker-*.log; is Redis up (`droidretriever up`)?",
    )


def _beats(registry: DeviceRegistry, serial: str, since: datetime | None) -> bool:
    beat = registry.last_heartbeat(serial)
    return beat is not None and (since is None or beat > since)


def bring_down(settings: Settings) -> tuple[str, ...]:
    """Stop the monitor first (it would start stopped workers again), then the workers (warm:
    unfinished sub-tasks go back), then the phones."""
    manifest = read_manifest(settings.state_dir)
    if manifest is None:
        return ()
    monitor = [p for p in manifest.processes if p.name == "monitor"]
    workers = [p for p in manifest.processes if p.name.startswith("worker-")]
    others = [p for p in manifest.processes if p not in monitor and p not in workers]
    stopped = [*stop_processes(monitor), *stop_processes(workers), *stop_processes(others)]
    try:
        registry = DeviceRegistry.from_settings(settings, retry_window_s=0)
        for serial in manifest.serials:
            registry.remove(serial)
    except redis.RedisError:
        pass  # Redis already down: nothing left to clean there
    write_manifest(settings.state_dir, None)
    return tuple(stopped)
