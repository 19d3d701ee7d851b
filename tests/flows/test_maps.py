"""`droidretriever map build | list | show` and `memory list | forget` as a person runs them: the
`build-maps` flow sends `mapping.build` to a worker's phone, and the map lands in the store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from prefect.settings import PREFECT_API_URL

from storage import MapStore, open_object_store
from tests.flows.conftest import FlowFarm

CLI = str(Path(sys.executable).parent / "droidretriever")


def _cli(flow_farm: FlowFarm, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **flow_farm.env, "COLUMNS": "200",
           "DROIDRETRIEVER_PREFECT__API_URL": str(PREFECT_API_URL.value()),
           # A small budget: the test is about the way there, not the whole app.
           "DROIDRETRIEVER_MAPS__SCREENS": "4", "DROIDRETRIEVER_MAPS__ACTIONS": "40"}
    return subprocess.run([CLI, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False)


def test_map_build_explores_an_app_on_a_farm_phone_and_list_and_show_read_it(flow_farm: FlowFarm) -> None:
    built = _cli(flow_farm, "map", "build", "Settings")
    assert built.returncode == 0, built.stderr
    assert "maps built" in built.stdout and "Settings" in built.stdout
    stored = MapStore(open_object_store(flow_farm.settings)).latest("com.android.settings")
    assert stored is not None and stored.complete and 2 <= len(stored.screens) <= 4
    assert stored.device in flow_farm.registry.serials()
    listed = _cli(flow_farm, "map", "list")
    assert listed.returncode == 0 and "com.android.settings" in listed.stdout, listed.stderr
    shown = _cli(flow_farm, "map", "show", "Settings")
    assert shown.returncode == 0 and "Settings" in shown.stdout and "->" in shown.stdout, shown.stderr
    again = _cli(flow_farm, "map", "build", "Settings")  # complete for this version: nothing explored
    assert again.returncode == 0, again.stderr
    assert MapStore(open_object_store(flow_farm.settings)).latest("com.android.settings") == stored


def test_naming_an_app_no_phone_has_is_one_line_and_its_fix(flow_farm: FlowFarm) -> None:
    done = _cli(flow_farm, "map", "build", "NoSuchApp")
    assert done.returncode == 2, done.stdout + done.stderr
    # A usage error is one line, its fix at the end (Prefect's own log lines may stand around it).
    lines = [line for line in done.stderr.splitlines() if line.startswith(("error:", "fix:"))]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: no phone of the farm has 'NoSuchApp'"), done.stderr
    assert "; name an installed app (12306, Alipay, " in lines[0], done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    missing = _cli(flow_farm, "map", "show", "Weverse")
    assert missing.returncode == 2 and "map build" in missing.stderr, missing.stderr


def test_memory_commands_say_what_to_do_when_there_is_nothing_to_forget(flow_farm: FlowFarm) -> None:
    listed = _cli(flow_farm, "memory", "list")
    assert listed.returncode == 0 and "remembered routes" in listed.stdout, listed.stderr
    forgot = _cli(flow_farm, "memory", "forget", "com.example.none", "--all")
    assert forgot.returncode == 2 and "memory list" in forgot.stderr, forgot.stderr
    both = _cli(flow_farm, "memory", "forget", "x", "abcd1234", "--all")
    assert both.returncode == 2 and "not both" in both.stderr
