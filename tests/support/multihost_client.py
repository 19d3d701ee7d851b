"""The client of the multi-host run (``tests/deploy/test_multihost.py``), run on the services host.

    python -m tests.support.multihost_client --tasks ID [ID ...] --stop-netns NS --stop-link VETH
        --stop-serials S [S ...] --out result.json

Asks the suite's questions at once, as ``droidretriever ask`` runs them (the flow in this
process, against the settings of the environment), while watching the farm registry: the
first time one of ``--stop-serials`` (the phones of one farm host) has a sub-task in flight,
that host is stopped, as a power cut would: every process of its network namespace is
SIGKILLed and its link to the services host deleted. When every run has ended it writes what
each run stored (bench.chaos's inspection: captures in the manifest, missing from the store,
duplicated) and what each phone did, as JSON, for the test to judge.
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import importlib
import json
import os
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.chaos import RunRecord, ask_question, inspect_run
from core.config import load_settings
from device_farm.registry import DeviceRegistry
from flows.runtime import use_prefect_server
from suites import load_suite

__all__ = ["main", "stop_host_when_busy"]


def stop_host_when_busy(registry: DeviceRegistry, serials: set[str], netns: str, link: str,
                        done: threading.Event) -> dict[str, Any]:
    """Wait until a phone of ``serials`` has a sub-task in flight, then stop that host."""
    while not done.is_set():
        busy = [s for s in registry.statuses() if s.info.serial in serials and s.inflight is not None]
        if busy:
            pids = subprocess.run(["ip", "netns", "pids", netns], capture_output=True, text=True,
                                  check=True).stdout.split()
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)
            subprocess.run(["ip", "link", "del", link], check=True)
            inflight = busy[0].inflight
            return {"serial": busy[0].info.serial, "task": inflight.task_name if inflight else "",
                    "killed": len(pids), "at": time.monotonic()}
        time.sleep(0.05)
    return {}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", nargs="+", required=True, help="suite task ids")
    parser.add_argument("--stop-netns", required=True)
    parser.add_argument("--stop-link", required=True)
    parser.add_argument("--stop-serials", nargs="+", required=True)
    parser.add_argument("--run-timeout-s", type=float, default=300.0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    settings = load_settings()
    suite = {task.id: task for task in load_suite()}
    questions = [suite[task_id].query for task_id in args.tasks]
    importlib.import_module("flows.retrieve")  # before the clock starts: imports take seconds
    registry = DeviceRegistry.from_settings(settings)
    with use_prefect_server(settings):
        origin = time.monotonic()
        done = threading.Event()
        with ThreadPoolExecutor(max_workers=len(questions) + 1) as pool:
            stopper = pool.submit(stop_host_when_busy, registry, set(args.stop_serials),
                                  args.stop_netns, args.stop_link, done)
            context = contextvars.copy_context()
            runs = [pool.submit(context.copy().run, ask_question, question, "multihost", origin,
                                args.run_timeout_s) for question in questions]
            records: list[RunRecord] = [future.result() for future in runs]
            done.set()
            stopped = stopper.result()
        wall_s = time.monotonic() - origin
        inspected = [inspect_run(record) for record in records]
    phones = {s.info.serial: {"adb_serial": s.info.local_serial, "state": s.state.value,
                              "tasks_done": s.tasks_done,
                              "tasks_failed": s.tasks_failed}
              for s in registry.statuses()}
    if stopped:
        stopped["at"] = round(stopped["at"] - origin, 2)
    args.out.write_text(json.dumps({
        "wall_s": round(wall_s, 2),
        "stopped": stopped,
        "runs": [record.model_dump() for record in inspected],
        "phones": phones,
    }, indent=2))


if __name__ == "__main__":
    main()
