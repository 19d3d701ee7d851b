"""``droidretriever up | down | status``: the embedded local stack and the device farm.

``up`` starts the services, then (once Redis is healthy) a farm of virtual
phones with their workers, or restarts the dead processes of a farm that is
up; ``down`` stops the farm first, while Redis is still there to hand back
unfinished sub-tasks; ``status`` adds a farm line. ``up`` and ``status`` also
mark crashed the runs whose process died (flows.crashes) and say which.
"""

from __future__ import annotations

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from core.config import Settings, load_settings
from core.errors import DroidRetrieverError
from deploy.local import (
    ServiceStatus,
    build_stack,
    describe_sqlite_left_behind,
    ensure_stack_secrets,
    make_state_private,
)
from droidretriever.cli._app import app
from storage import StorageError, open_object_store, read_spool_usage

__all__ = ["down", "status", "up"]

console = Console()


def _format_bytes(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def _print_table(rows: list[ServiceStatus], spool_line: str) -> None:
    table = Table(title="DroidRetriever local stack")
    table.add_column("service")
    table.add_column("URL", overflow="fold")
    table.add_column("pid", justify="right")
    table.add_column("health")
    table.add_column("credentials", overflow="fold")
    table.add_column("detail", overflow="fold")
    for row in rows:
        pid = str(row.pid) if row.pid is not None else ("external" if not row.managed else "-")
        health = "[green]healthy[/]" if row.health.healthy else "[red]down[/]"
        table.add_row(row.name, row.url, pid, health, _credentials(row), row.health.detail)
    console.print(table)
    console.print(spool_line, highlight=False)


def _credentials(row: ServiceStatus) -> str:
    """Whether a client without credentials is refused: "required (...)", or OPEN in red."""
    auth = row.auth
    if auth.required is True:
        return f"[green]required[/] ({auth.detail})"
    if auth.required is False:
        return f"[bold red]{auth.detail or 'OPEN'}[/]"
    return f"[dim]{auth.detail or '-'}[/]"


def _spool_line() -> str:
    settings = load_settings()
    usage = read_spool_usage(settings)
    return (
        f"storage spool {settings.spool_dir}: {usage.entries} object(s), "
        f"{_format_bytes(usage.bytes)} waiting for the object store"
    )


def _bring_up_farm(settings: Settings, rows: list[ServiceStatus], phones: int) -> None:
    from deploy.farm import ensure_sim_farm

    redis_row = next((row for row in rows if row.name == "redis"), None)
    if redis_row is not None and not redis_row.health.healthy:
        console.print(f"[yellow]device farm not started:[/] Redis is not healthy "
                      f"({redis_row.health.detail})", highlight=False)
        return
    with console.status(f"starting the device farm ({phones} virtual phones and their workers)..."):
        manifest, started, restarted = ensure_sim_farm(settings, phones)
    if restarted:
        console.print(f"device farm ({manifest.mode}): restarted {', '.join(restarted)} "
                      "(had exited)", highlight=False)
    elif not started:
        console.print(f"device farm already up ({manifest.mode}, phones: {len(manifest.serials)}): "
                      "left as it is (`droidretriever farm down` to change it)", highlight=False)


def _print_farm_line(settings: Settings) -> bool:
    """Print the farm's line; True unless a farm is up with a worker that does not beat."""
    from deploy.farm import summarize_farm

    summary = summarize_farm(settings)
    style = "green" if summary.healthy else ("yellow" if summary.up else "dim")
    console.print(f"[{style}]{summary.describe()}[/]", highlight=False)
    return summary.healthy or not summary.up


def _sweep_crashed_runs(settings: Settings, rows: list[ServiceStatus]) -> None:
    """Mark crashed the runs whose `ask` died, when every service needed for it answers."""
    from flows.crashes import sweep_crashed_runs
    from flows.runtime import open_services, use_prefect_server

    if not all(row.health.healthy for row in rows if row.name in {"redis", "s3", "prefect"}):
        return
    try:
        with use_prefect_server(settings):
            crashed = sweep_crashed_runs(open_services(settings))
    except DroidRetrieverError as exc:
        console.print(f"[yellow]crashed runs not looked for:[/] {escape(str(exc))}",
                      highlight=False)
        return
    for found in crashed:
        console.print(f"[yellow]{escape(found.describe())}[/] (marked crashed)", highlight=False)


@app.command()
def up(
    sim: int | None = typer.Option(
        None, "--sim", min=1, max=64,
        help="Virtual phones for the farm (default: settings sim.phones, DROIDRETRIEVER_SIM__PHONES).",
    ),
    no_farm: bool = typer.Option(False, "--no-farm", help="Start the services only, no device farm."),
) -> None:
    """Start Redis, the S3 store, PostgreSQL and Prefect, then the virtual-phone farm (all idempotent).

    The first time, it generates the secrets every service requires (a Redis
    password, S3 keys, SeaweedFS's keys and certificates, Prefect's API auth and
    its database password)
    under the state folder's ``secrets/`` (see docs/operations.md).
    """
    settings = ensure_stack_secrets(load_settings())
    make_state_private(settings.state_dir)
    stack = build_stack(settings)
    sqlite_note = describe_sqlite_left_behind(settings)  # asked before the cluster exists
    with console.status("starting the local stack (Prefect takes ~10 s)..."):
        rows = stack.up()
    if sqlite_note is not None:
        console.print(f"[yellow]{escape(sqlite_note)}[/]", highlight=False, soft_wrap=True)
    try:
        flushed = open_object_store(settings).flush()
    except StorageError as exc:
        console.print(f"[yellow]spool not flushed:[/] {exc}", highlight=False)
    else:
        if flushed:
            console.print(f"flushed {flushed} spooled object(s) to the object store")
    _check_models(settings)
    if not no_farm:
        _bring_up_farm(settings, rows, sim or settings.sim.phones)
    _print_table(rows, _spool_line())
    _print_farm_line(settings)
    _sweep_crashed_runs(settings, rows)
    _print_dashboard(settings, rows)


def _check_models(settings: Settings) -> None:
    """Probe each configured model role; one the runs could not use stops `up` before the farm."""
    from droidretriever.cli.doctor import print_probes
    from inference.llm import ALL_ROLES, check_roles, probe_roles

    if not any(getattr(settings.llm, role).configured for role in ALL_ROLES):
        console.print("model roles: none configured, the rules decide (docs/models.md)", highlight=False)
        return
    with console.status("checking the model roles..."):
        results = probe_roles(settings)
    print_probes(results)
    if not all(r.usable for r in results):
        # The services stay up; the farm's workers would stop on the same check.
        check_roles(settings)


def _print_dashboard(settings: Settings, rows: list[ServiceStatus]) -> None:
    """The dashboard's URL, as a one-time login link for this machine's browser."""
    from core.errors import ServiceError
    from droidretriever.cli.api import login_link

    api_row = next((row for row in rows if row.name == "api"), None)
    if api_row is None or not api_row.health.healthy:
        return
    try:
        link = login_link(settings)
    except ServiceError as exc:
        console.print(f"dashboard: {settings.api.base_url} ({exc})", highlight=False)
        return
    console.print(f"dashboard: {link}\n  (a one-time login link, valid "
                  f"{settings.api.login_code_ttl_s:.0f} s; `droidretriever api login` makes another)",
                  highlight=False, soft_wrap=True)


@app.command()
def down() -> None:
    """Stop the device farm, then the services `up` started (and nothing else)."""
    from deploy.farm import bring_down

    settings = load_settings()
    with console.status("stopping the device farm..."):
        farm_stopped = bring_down(settings)
    console.print(f"device farm: stopped {len(farm_stopped)} processes" if farm_stopped
                  else "device farm: was not running")
    stack = build_stack(settings)
    with console.status("stopping the local stack..."):
        stopped = stack.down()
    for name, was_running in stopped.items():
        console.print(f"{name}: {'stopped' if was_running else 'was not running'}")


@app.command()
def status() -> None:
    """Each service (URL, pid, health), the storage spool and the device farm's workers."""
    settings = load_settings()
    rows = build_stack(settings).status()
    _print_table(rows, _spool_line())
    farm_ok = _print_farm_line(settings)
    _sweep_crashed_runs(settings, rows)
    if not farm_ok or not all(row.health.healthy for row in rows):
        # SystemExit, not typer.Exit: click swallows Exit's code when not standalone.
        raise SystemExit(3)
