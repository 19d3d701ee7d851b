"""``droidretriever up | down | status``: the embedded local stack."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from deploy.local import ServiceStatus, build_stack
from droidretriever.cli._app import app
from droidretriever.config import load_settings
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
    table.add_column("detail", overflow="fold")
    for row in rows:
        pid = str(row.pid) if row.pid is not None else ("external" if not row.managed else "-")
        health = "[green]healthy[/]" if row.health.healthy else "[red]down[/]"
        table.add_row(row.name, row.url, pid, health, row.health.detail)
    console.print(table)
    console.print(spool_line, highlight=False)


def _spool_line() -> str:
    settings = load_settings()
    usage = read_spool_usage(settings)
    return (
        f"storage spool {settings.spool_dir}: {usage.entries} object(s), "
        f"{_format_bytes(usage.bytes)} waiting for the object store"
    )


@app.command()
def up() -> None:
    """Start Redis, the S3 store and the Prefect server (idempotent), then flush the spool."""
    settings = load_settings()
    stack = build_stack(settings)
    with console.status("starting the local stack (Prefect takes ~10 s)..."):
        rows = stack.up()
    try:
        flushed = open_object_store(settings).flush()
    except StorageError as exc:
        console.print(f"[yellow]spool not flushed:[/] {exc}", highlight=False)
    else:
        if flushed:
            console.print(f"flushed {flushed} spooled object(s) to the object store")
    _print_table(rows, _spool_line())


@app.command()
def down() -> None:
    """Stop the services `up` started (and nothing else)."""
    stack = build_stack(load_settings())
    with console.status("stopping the local stack..."):
        stopped = stack.down()
    for name, was_running in stopped.items():
        console.print(f"{name}: {'stopped' if was_running else 'was not running'}")


@app.command()
def status() -> None:
    """Show each service, its URL, pid and health, and the storage spool size."""
    rows = build_stack(load_settings()).status()
    _print_table(rows, _spool_line())
    if not all(row.health.healthy for row in rows):
        # SystemExit, not typer.Exit: click swallows Exit's code when not standalone.
        raise SystemExit(3)
