"""Headless Android emulators from the SDK: find the SDK, boot, wait, restore snapshots.

An emulator started on console port ``P`` (even, 5554..5682) shows up in adb as
``emulator-P``. Between runs its app state is reset by loading a named
snapshot through the emulator console (``avd snapshot load``), which takes
about a second instead of a cold boot.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

from device_farm.adb_client import NoSpawnAdbClient, list_adb_devices, translate_adb_errors
from device_farm.errors import DeviceError, DeviceTimeout, FarmSetupError

__all__ = [
    "DEFAULT_SNAPSHOT",
    "emulator_argv",
    "emulator_serial",
    "find_emulator_binary",
    "restore_snapshot",
    "wait_for_boot",
]

DEFAULT_SNAPSHOT = "droidretriever-clean"
_FIRST_CONSOLE_PORT = 5554


def find_emulator_binary(sdk_root: Path | None) -> Path:
    """The SDK's ``emulator`` executable, or FarmSetupError saying how to get one."""
    candidates: list[Path] = []
    for root in (sdk_root, os.environ.get("ANDROID_SDK_ROOT"), os.environ.get("ANDROID_HOME")):
        if root:
            candidates.append(Path(root) / "emulator" / "emulator")
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    looked = ", ".join(str(c) for c in candidates) or "no SDK root set"
    raise FarmSetupError(
        f"no Android SDK emulator found (looked at: {looked})",
        hint="install the SDK's emulator and a system image (`sdkmanager emulator "
        "'system-images;android-34;google_apis;x86_64'`), create an AVD with avdmanager, then "
        "set ANDROID_SDK_ROOT or DROIDRETRIEVER_FARM__ANDROID_SDK_ROOT",
    )


def emulator_serial(index: int) -> str:
    """The adb serial of the ``index``-th emulator a host starts (``emulator-5554``, ...)."""
    return f"emulator-{_FIRST_CONSOLE_PORT + 2 * index}"


def emulator_argv(binary: Path, avd: str, index: int, snapshot: str = DEFAULT_SNAPSHOT) -> list[str]:
    """Command line for a headless emulator; ``index`` picks its console port."""
    port = _FIRST_CONSOLE_PORT + 2 * index
    return [
        str(binary), "-avd", avd, "-port", str(port), "-no-window", "-no-audio",
        "-no-boot-anim", "-gpu", "swiftshader_indirect", "-snapshot", snapshot,
        "-no-snapshot-save",  # every boot starts from the clean snapshot
    ]


def wait_for_boot(adb_host: str, adb_port: int, serial: str, timeout_s: float) -> None:
    """Wait until adb lists ``serial`` as a device and Android says boot completed."""
    deadline = time.monotonic() + timeout_s
    client = NoSpawnAdbClient(adb_host, adb_port, socket_timeout=10.0)
    while time.monotonic() < deadline:
        try:
            states = {e.serial: e.state for e in list_adb_devices(adb_host, adb_port)}
            if states.get(serial) == "device":
                with translate_adb_errors(serial, "boot check"):
                    booted = client.device(serial).shell("getprop sys.boot_completed")
                if booted.strip() == "1":
                    return
        except DeviceError:
            pass  # the adb server or the emulator is still coming up
        time.sleep(2.0)
    raise DeviceTimeout(
        f"{serial} did not finish booting within {timeout_s:.0f} s", serial=serial,
        hint="check the emulator log under <state_dir>/farm; raise "
        "DROIDRETRIEVER_FARM__EMULATOR_BOOT_TIMEOUT_S on slow hosts",
    )


def restore_snapshot(console_port: int, snapshot: str = DEFAULT_SNAPSHOT,
                     timeout_s: float = 60.0) -> None:
    """Load a named snapshot through the emulator console (resets every app's state)."""
    token_file = Path.home() / ".emulator_console_auth_token"
    serial = f"emulator-{console_port}"
    try:
        with socket.create_connection(("127.0.0.1", console_port), timeout=timeout_s) as sock:
            reader = sock.makefile("rb")
            _read_until_ok(reader, serial)
            if token_file.is_file():
                sock.sendall(f"auth {token_file.read_text().strip()}\n".encode())
                _read_until_ok(reader, serial)
            sock.sendall(f"avd snapshot load {snapshot}\n".encode())
            _read_until_ok(reader, serial)
    except OSError as exc:
        raise DeviceError(
            f"{serial}: cannot load snapshot {snapshot!r}: {exc}", serial=serial,
            hint=f"save one first: `adb -s {serial} emu avd snapshot save {snapshot}`",
        ) from exc


def _read_until_ok(reader: object, serial: str) -> None:
    readline = reader.readline  # type: ignore[attr-defined]
    while True:
        line = readline()
        if not line:
            raise DeviceError(f"{serial}: emulator console closed", serial=serial)
        text = line.decode(errors="replace").strip()
        if text.startswith("OK"):
            return
        if text.startswith("KO"):
            raise DeviceError(f"{serial}: emulator console refused: {text}", serial=serial)
