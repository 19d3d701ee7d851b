"""The stack across three hosts, made of Linux network namespaces and veth pairs.

    services host   10.231.0.1 (on its loopback)  Redis, SeaweedFS S3, Prefect, the API, runner
                                                  and subscriptions: `droidretriever up --no-farm`
                                                  with stack.serve_hosts = [10.231.0.1]
    farm host A     10.231.0.10 -- veth -- 10.231.0.9   two virtual phones (emulator-5554, -5556),
    farm host B     10.231.0.14 -- veth -- 10.231.0.13  and two more named the same, a worker
                                                  each and a farm monitor: `droidretriever farm up --sim 2`

The farm hosts are named farm-a and farm-b (each in its own UTS namespace, as two machines
are), and both number their phones from emulator-5554, as every host numbers its emulators:
the farm names them farm-a.emulator-5554 ... farm-b.emulator-5556 (device_farm.serials), so
the four register, are listed and take sub-tasks without one shadowing another.

Each host has its own network stack: nothing reaches the machine's network, and nothing of it
reaches them (addresses only on the veths and the namespaces' loopbacks). Every process talks
to the services over 10.231.0.1, with the secrets the test generates. Three questions of the
paper's suite are asked at once on the services host; the first time a phone of farm host A
has a sub-task in flight, host A is stopped as by a power cut (every process of its namespace
SIGKILLed, its link deleted). The runs must finish on host B: every run completed, every
capture of every manifest in the store, none twice, and host B's phones did the work.

The namespaces are removed in teardown, whatever happened (their processes killed first).
Needs root (network namespaces); elsewhere it skips with that one reason.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from droidretriever.testing import FAST_FARM  # a dead host's sub-task is handed on in seconds

ROOT = Path(__file__).resolve().parents[2]
SERVICES_IP = "10.231.0.1"
# Quick paper tasks that complete on the virtual phones with no model (bench.chaos's list):
# one question over two apps, two over one.
TASKS = ("s2_multi_05_big_mac", "s2_single_01_meituan_permissions",
         "s2_single_02_bilibili_guidelines")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def _can_make_namespaces() -> str | None:
    """None when this process can make network namespaces, else why not."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        return "network namespaces need root and iproute2 (`ip`); CI runs this as root"
    probe = f"drmh-probe-{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True, check=False)
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, check=False)
    return None if made.returncode == 0 else "cannot make network namespaces here (`ip netns add`)"


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


@dataclass
class Hosts:
    """Three namespaces joined by two veth pairs; what runs in them is killed on ``remove``."""

    tag: str
    names: dict[str, str] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)  # farm -> the services side of its veth

    def make(self) -> None:
        for role in ("svc", "a", "b"):
            self.names[role] = f"drmh-{role}-{self.tag}"
            ip("netns", "add", self.names[role])
            ip("-n", self.names[role], "link", "set", "lo", "up")
        svc = self.names["svc"]
        ip("-n", svc, "addr", "add", f"{SERVICES_IP}/32", "dev", "lo")
        for farm, net in (("a", 8), ("b", 12)):
            inside, outside = f"dr{farm}s{self.tag}", f"dr{farm}f{self.tag}"
            # Both ends are made inside their namespaces: the veth never exists on the machine's.
            ip("link", "add", inside, "netns", svc, "type", "veth", "peer", "name", outside,
               "netns", self.names[farm])
            ip("-n", svc, "addr", "add", f"10.231.0.{net + 1}/30", "dev", inside)
            ip("-n", svc, "link", "set", inside, "up")
            ip("-n", self.names[farm], "addr", "add", f"10.231.0.{net + 2}/30", "dev", outside)
            ip("-n", self.names[farm], "link", "set", outside, "up")
            ip("-n", self.names[farm], "route", "add", f"{SERVICES_IP}/32", "via", f"10.231.0.{net + 1}")
            self.links[farm] = inside

    def pids(self, role: str) -> list[int]:
        out = subprocess.run(["ip", "netns", "pids", self.names[role]], capture_output=True,
                             text=True, check=False).stdout
        return [int(pid) for pid in out.split()]

    def remove(self) -> None:
        """SIGTERM what runs in each namespace, SIGKILL what is left after 10 s, delete them."""
        for role in self.names:
            for pid in self.pids(role):
                _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(self.pids(role) for role in self.names):
            time.sleep(0.2)
        for role in self.names:
            for pid in self.pids(role):
                _signal(pid, signal.SIGKILL)
            subprocess.run(["ip", "netns", "del", self.names[role]], capture_output=True,
                           check=False)


def _signal(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


@pytest.fixture
def hosts() -> Iterator[Hosts]:
    reason = _can_make_namespaces()
    if reason is not None:
        pytest.skip(reason)
    made = Hosts(tag=secrets.token_hex(2))
    try:
        made.make()
        yield made
    finally:
        made.remove()
    assert not any(made.names[r] in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                                   text=True, check=False).stdout
                   for r in made.names)


def base_env() -> dict[str, str]:
    """The environment every host shares: the services' URLs on 10.231.0.1 and their secrets."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DROIDRETRIEVER_", "PREFECT_"))}
    redis_password = secrets.token_hex(16)
    return {
        **env,
        "DROIDRETRIEVER_REDIS__URL": f"redis://:{redis_password}@{SERVICES_IP}:6390/0",
        "DROIDRETRIEVER_S3__ENDPOINT": f"http://{SERVICES_IP}:8333",
        "DROIDRETRIEVER_S3__ACCESS_KEY": "droidretriever",
        "DROIDRETRIEVER_S3__SECRET_KEY": secrets.token_hex(16),
        "DROIDRETRIEVER_PREFECT__API_URL": f"http://{SERVICES_IP}:4200/api",
        "DROIDRETRIEVER_PREFECT__AUTH_STRING": f"admin:{secrets.token_hex(12)}",
        "DROIDRETRIEVER_API_TOKEN": secrets.token_hex(16),
        "DROIDRETRIEVER_API__HOST": SERVICES_IP,
        "DROIDRETRIEVER_STACK__START_TIMEOUT_S": "180",
        "DROIDRETRIEVER_SIM__LATENCY": "realistic",
        **FAST_FARM,
        "PYTHONPATH": str(ROOT),
    }


def process_costs(pids: list[int]) -> list[dict[str, object]]:
    """Resident memory and CPU seconds so far of each process (a farm host's sizing)."""
    ticks = os.sysconf("SC_CLK_TCK")
    costs = []
    for pid in pids:
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            status = Path(f"/proc/{pid}/status").read_text()
            stat = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        rss_kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS"))
        module = argv[2].decode() if len(argv) > 2 and argv[1] == b"-m" else argv[0].decode()
        costs.append({"process": module, "rss_mb": round(rss_kb / 1024, 1),
                      "cpu_s": round((int(stat[11]) + int(stat[12])) / ticks, 1)})
    return costs


def run_in(hosts: Hosts, role: str, env: dict[str, str], *argv: str,
           timeout_s: float) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(["ip", "netns", "exec", hosts.names[role], *argv], env=env, cwd=ROOT,
                            capture_output=True, text=True, timeout=timeout_s, check=False)
    assert result.returncode == 0, f"{role}: {' '.join(argv)}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


def test_runs_finish_on_the_other_farm_host_when_one_is_stopped(hosts: Hosts, tmp_path: Path) -> None:
    started = time.monotonic()
    env = base_env()
    cli = str(Path(sys.executable).parent / "droidretriever")
    svc_env = {**env, "DROIDRETRIEVER_STATE_DIR": str(tmp_path / "svc"),
               "DROIDRETRIEVER_STACK__SERVE_HOSTS": json.dumps([SERVICES_IP])}
    run_in(hosts, "svc", svc_env, cli, "up", "--no-farm", timeout_s=240)
    farm_env = {}
    for farm in ("a", "b"):
        farm_env[farm] = {**env, "DROIDRETRIEVER_STATE_DIR": str(tmp_path / farm)}
        # Its own host name, as on its own machine; what `farm up` starts keeps it.
        run_in(hosts, farm, farm_env[farm], "unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"',
               f"farm-{farm}", cli, "farm", "up", "--sim", "2", timeout_s=240)
    up_s = time.monotonic() - started

    # The API on the services host lists the four phones of both farm hosts.
    check = ("import httpx, os, json; r = httpx.get(os.environ['DEVICES_URL'], timeout=10, "
             "headers={'authorization': 'Bearer ' + os.environ['DROIDRETRIEVER_API_TOKEN']}); "
             "r.raise_for_status(); print(json.dumps(sorted(d['serial'] for d in r.json())))")
    devices_env = {**farm_env["b"], "DEVICES_URL": f"http://{SERVICES_IP}:8700/devices"}
    listed = json.loads(run_in(hosts, "b", devices_env, sys.executable, "-c", check,
                               timeout_s=60).stdout)
    farm_a = ["farm-a.emulator-5554", "farm-a.emulator-5556"]
    farm_b = ["farm-b.emulator-5554", "farm-b.emulator-5556"]
    assert listed == sorted(farm_a + farm_b)

    out = tmp_path / "result.json"
    run_in(hosts, "svc", svc_env, sys.executable, "-m", "tests.support.multihost_client",
           "--tasks", *TASKS, "--stop-netns", hosts.names["a"], "--stop-link", hosts.links["a"],
           "--stop-serials", *farm_a, "--run-timeout-s", "300", "--out", str(out), timeout_s=420)
    result = json.loads(out.read_text())
    # Shown with -s: the numbers docs/deploy.md quotes (time, runs, what a farm host's processes cost).
    print(json.dumps({"up_s": round(up_s, 1), **result, "farm_b": process_costs(hosts.pids("b"))},
                     indent=1))

    assert result["stopped"], "no phone of farm host A took a sub-task: nothing was stopped"
    assert result["stopped"]["serial"] in farm_a  # host A's emulator-555x took one
    assert hosts.pids("a") == []
    for run in result["runs"]:
        assert run["status"] == "completed", run
        assert run["captures"] > 0, run
        assert run["missing"] == 0 and run["extra"] == 0, run
    phones = result["phones"]
    # The same adb serials on both hosts, four phones in the farm.
    for names in (farm_a, farm_b):
        assert [phones[s]["adb_serial"] for s in names] == ["emulator-5554", "emulator-5556"]
    assert sum(phones[s]["tasks_done"] for s in farm_b) >= 1
    assert phones[result["stopped"]["serial"]]["state"] == "offline"  # the monitor saw host A go
    # Only the namespaces held the veths and 10.231.0.0/24: the machine's own network never did.
    own = subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True, check=True).stdout
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True, check=True).stdout
    assert "10.231." not in own and hosts.tag not in links
