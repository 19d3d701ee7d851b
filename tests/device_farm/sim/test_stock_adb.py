"""The stock ``adb`` client (Debian's) against the virtual phones: the door a person uses by hand.

Skipped, with the reason, where ``adb`` is not installed (scripts/setup.sh installs it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from device_farm.sim import SimServer

pytestmark = pytest.mark.skipif(shutil.which("adb") is None,
                                reason="the stock adb client is not installed (apt-get install adb; "
                                       "scripts/setup.sh does it)")


@pytest.fixture()
def adb(sim: SimServer, tmp_path: Path) -> Iterator[object]:
    home = tmp_path / "home"
    home.mkdir()
    # The phones' server is up before adb runs: adb starts a server of its own if nothing answers.
    env = {**os.environ, "HOME": str(home), "ADB_SERVER_SOCKET": f"tcp:127.0.0.1:{sim.port}"}
    sim.control.reset("boot")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["adb", "-s", sim.serials[0], *args], env=env, capture_output=True,
                              text=True, timeout=30, check=False)

    yield run


def test_devices_lists_the_phones(adb) -> None:  # type: ignore[no-untyped-def]
    listed = adb("devices")
    assert listed.returncode == 0, listed.stderr
    assert "emulator-5554\tdevice" in listed.stdout


def test_shell_echo(adb) -> None:  # type: ignore[no-untyped-def]
    assert adb("shell", "echo", "hello phone").stdout == "hello phone\n"


def test_push_then_pull_round_trips_a_file(adb, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    original = tmp_path / "notes.bin"
    original.write_bytes(bytes(range(256)) * 700)  # more than one 64 KiB chunk
    pushed = adb("push", str(original), "/sdcard/Download/notes.bin")
    assert pushed.returncode == 0, pushed.stderr
    back = tmp_path / "back.bin"
    pulled = adb("pull", "/sdcard/Download/notes.bin", str(back))
    assert pulled.returncode == 0, pulled.stderr
    assert back.read_bytes() == original.read_bytes()


def test_logcat_dump_prints_lines_and_ends(adb) -> None:  # type: ignore[no-untyped-def]
    log = adb("logcat", "-d")
    assert log.returncode == 0, log.stderr
    assert "ActivityManager" in log.stdout


def test_ls_long_format(adb, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    file = tmp_path / "a.txt"
    file.write_text("12345")
    assert adb("push", str(file), "/sdcard/a.txt").returncode == 0
    listing = adb("shell", "ls", "-l", "/sdcard").stdout.splitlines()
    line = next(ln for ln in listing if ln.endswith(" a.txt"))
    assert line.startswith("-rw-") and " 5 " in line
    assert any(ln.startswith("d") and ln.endswith(" Download") for ln in listing)


def test_install_refuses_with_a_reason(adb, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    apk = tmp_path / "app.apk"
    apk.write_bytes(b"PK\x03\x04 not an app")
    result = adb("install", str(apk))
    assert result.returncode != 0
    assert "installs only its catalog's apps" in result.stdout + result.stderr
