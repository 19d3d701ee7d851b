"""``droidretriever farm ...``: the phones and their workers."""

from __future__ import annotations

import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from core.config import LatencyProfile
from droidretriever.cli._app import app

__all__ = ["farm_app"]

farm_app = typer.Typer(
    help="Phones (virtual, adb-attached or emulators) and their device-bound workers.",
    no_args_is_help=True,
)
app.add_typer(farm_app, name="farm")

_STATE_STYLE = {
    "idle": "green", "leased": "cyan", "paused_for_user": "yellow",
    "offline": "red", "quarantined": "bold red",
}


@farm_app.command("up")
def up(
    sim: int = typer.Option(0, "--sim", min=0, max=64,
                            help="Start N virtual phones and a worker for each."),
    adb: bool = typer.Option(False, "--adb", help="A worker for every phone `adb devices` lists."),
    emulators: str = typer.Option("", "--emulators", help="Boot these AVDs headless: avd1,avd2."),
    recordings: list[Path] = typer.Option(
        [], "--recordings", help="With --sim: DroidBot recordings to replay as installed apps "
        "(one replay phone per recorded screen size, e.g. ../shared/data/droidbot-real).",
    ),
    wait_s: float = typer.Option(90.0, "--wait", min=1.0, max=3600.0,
                                 help="Seconds to wait for workers to register."),
) -> None:
    """Start phones and one device-bound worker per phone (background processes)."""
    from core.config import load_settings
    from deploy.farm import (
        bring_up_adb,
        bring_up_emulators,
        bring_up_sim,
        wait_for_workers,
    )
    from device_farm.registry import DeviceRegistry

    chosen = [bool(sim), adb, bool(emulators)]
    if sum(chosen) != 1:
        raise typer.BadParameter("choose exactly one of --sim N, --adb, --emulators avd1,avd2")
    if recordings and not sim:
        raise typer.BadParameter("--recordings replays recordings on virtual phones: use it with --sim N")
    settings = load_settings()
    console = Console()
    if sim:
        manifest = bring_up_sim(settings, sim, recordings)
    elif adb:
        manifest = bring_up_adb(settings)
    else:
        manifest = bring_up_emulators(settings, [a.strip() for a in emulators.split(",") if a.strip()])
    console.print(f"{len(manifest.serials)} phones on adb {manifest.adb_host}:{manifest.adb_port}; "
                  "waiting for their workers...")
    wait_for_workers(DeviceRegistry.from_settings(settings), manifest.serials, timeout_s=wait_s)
    _print_status(console)


@farm_app.command("status")
def status() -> None:
    """Each phone: apps, state (and why), lease, last heartbeat, sub-tasks done/failed."""
    _print_status(Console())


@farm_app.command("down")
def down() -> None:
    """Stop the workers (unfinished sub-tasks go back to the queue), the monitor and phones."""
    from core.config import load_settings
    from deploy.farm import bring_down

    stopped = bring_down(load_settings())
    Console().print(f"stopped {len(stopped)} processes" if stopped else "no farm was running")


def _print_status(console: Console) -> None:
    import redis

    from core.config import load_settings
    from core.errors import ServiceError
    from deploy.farm import is_running, read_manifest
    from device_farm.registry import DeviceRegistry

    settings = load_settings()
    manifest = read_manifest(settings.state_dir)
    try:
        statuses = DeviceRegistry.from_settings(settings, retry_window_s=0).statuses()
    except redis.RedisError as exc:
        raise ServiceError(
            f"cannot read the farm registry at {settings.redis.masked_url}: {exc}",
            hint="start the local stack with `droidretriever up` (or set DROIDRETRIEVER_REDIS__URL)",
        ) from exc
    table = Table(title="device farm")
    for column in ("device", "model", "apps", "state", "lease", "last heartbeat", "done", "failed"):
        table.add_column(column)
    now = datetime.now(UTC)
    for st in statuses:
        style = _STATE_STYLE.get(st.state.value, "")
        state = f"[{style}]{st.state.value}[/]" + (f"\n{st.reason}" if st.reason else "")
        lease = f"{st.lease_run} ({st.lease_ttl_s:.0f} s)" if st.lease_run and st.lease_ttl_s else "-"
        beat = f"{(now - st.last_heartbeat).total_seconds():.1f} s ago" if st.last_heartbeat else "missed"
        labels = [app.label for app in st.info.apps]
        apps = f"{len(labels)}: " + ", ".join(labels[:4]) + (", ..." if len(labels) > 4 else "")
        table.add_row(st.info.serial, st.info.model, apps, state, lease, beat,
                      str(st.tasks_done), str(st.tasks_failed))
    console.print(table)
    if manifest is not None:
        running = sum(1 for p in manifest.processes if is_running(p))
        console.print(f"farm mode {manifest.mode}: {running}/{len(manifest.processes)} "
                      f"processes running (logs in {settings.state_dir / 'farm'})")
    elif not statuses:
        console.print("no farm is up: `droidretriever farm up --sim 2` starts two virtual phones")


@farm_app.command("sim")
def sim(
    phones: int | None = typer.Option(None, "--phones", "-n", help="Number of phones (default: settings.sim.phones)."),
    port: int | None = typer.Option(None, "--port", help="ADB port; 0 picks a free one (default: settings)."),
    seed: int | None = typer.Option(None, "--seed", help="Seed for pop-ups and daily variation."),
    latency: LatencyProfile | None = typer.Option(None, "--latency", help="zero or realistic."),
) -> None:
    """Start N virtual phones; prints the ADB port and serials, runs until interrupted."""
    # The simulator is a test double no product module imports: it runs as its own process
    # (`python -m device_farm.sim`, which takes its defaults from the same settings).
    argv = [sys.executable, "-m", "device_farm.sim"]
    for flag, value in (("--phones", phones), ("--port", port), ("--seed", seed)):
        if value is not None:
            argv += [flag, str(value)]
    if latency is not None:
        argv += ["--latency", latency.value]
    with subprocess.Popen(argv) as proc:
        try:
            code = proc.wait()
        except KeyboardInterrupt:
            # A Ctrl-C in the terminal reached the phones too: let them say "stopping" and exit.
            try:
                code = proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGINT)
                code = proc.wait()
    raise typer.Exit(code)

