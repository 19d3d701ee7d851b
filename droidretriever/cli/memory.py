"""``droidretriever memory list [APP] | show APP ROUTE | forget APP [ROUTE] [--all]``: route memory.

A remembered route is a path through an app that reached a question's target
page, with the question it served, what that page showed (a later question is
given the route only when that page answers it) and the app map's screens on
the way. Routes live in the object store under ``memory/routes/<package>.json``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from core.config import load_settings
from core.errors import InputError
from core.text import strip_controls
from droidretriever.cli._app import app
from droidretriever.cli.inputs import check_apps

if TYPE_CHECKING:
    from inference.memory import Route, RouteMemory
    from storage import ObjectStore

__all__ = ["memory_app"]

console = Console()

memory_app = typer.Typer(help="Routes the agent remembered, and forgetting them.", no_args_is_help=True)
app.add_typer(memory_app, name="memory")

_PREFIX = "memory/routes/"


def _safe(text: str) -> str:
    return escape(strip_controls(text))


def _open() -> tuple[ObjectStore, RouteMemory]:
    from inference.memory import RouteMemory
    from storage import open_object_store
    from tasks.navigate import ObjectStoreBlobs

    store = open_object_store(load_settings())
    return store, RouteMemory(ObjectStoreBlobs(store))


def _packages(store: ObjectStore) -> list[str]:
    return sorted(info.key.removeprefix(_PREFIX).removesuffix(".json")
                  for info in store.list_objects(_PREFIX) if info.key.endswith(".json"))


def _package_for(store: ObjectStore, name: str) -> str:
    """The package ``name`` means: a package with routes, or a part of one ("meituan")."""
    folded = name.strip().casefold()
    packages = _packages(store)
    match = next((p for p in packages if p.casefold() == folded), None)
    if match is None:
        partial = [p for p in packages if folded and folded in p.casefold()]
        match = partial[0] if len(partial) == 1 else None
    if match is None:
        raise InputError(f"no remembered routes for {name!r}",
                         hint="`droidretriever memory list` shows the apps (by package) that have routes")
    return match


def _route(memory: RouteMemory, package: str, route_id: str) -> Route:
    route = next((r for r in memory.load(package) if r.id == route_id), None)
    if route is None:
        raise InputError(f"{package} has no route {route_id!r}",
                         hint=f"`droidretriever memory list {package}` shows its routes and their ids")
    return route


@memory_app.command("list")
def list_routes(app_name: str = typer.Argument("", metavar="[APP]", help="Only this app (package).")) -> None:
    """Every remembered route: its id, the question it served, how often it worked (an unconfirmed
    one, whose target only a model's word vouched for, is never replayed)."""
    check_apps(app_name)
    store, memory = _open()
    packages = [_package_for(store, app_name)] if app_name else _packages(store)
    table = Table(title="remembered routes")
    for column in ("app", "route", "question it served", "steps", "worked / failed", "last used", "map path"):
        table.add_column(column, overflow="fold")
    for package in packages:
        for route in memory.load(package):
            table.add_row(package, route.id, _safe(route.goal), str(len(route.steps)),
                          f"{route.successes} / {route.failures}" + ("" if route.confirmed else " (unconfirmed)"),
                          route.last_used.astimezone().strftime("%Y-%m-%d %H:%M"),
                          f"{len(route.map_path)} screens ({_safe(route.map_version)})" if route.map_path else "-")
    console.print(table)


@memory_app.command("show")
def show_route(app_name: str = typer.Argument(..., metavar="APP"),
               route_id: str = typer.Argument(..., metavar="ROUTE")) -> None:
    """One route's steps and what its target page showed."""
    check_apps(app_name)
    store, memory = _open()
    package = _package_for(store, app_name)
    route = _route(memory, package, route_id)
    console.print(f"[bold]{route.id}[/] {package}: {_safe(route.goal)} ({route.page_mode.value}); "
                  f"worked {route.successes}, failed {route.failures}"
                  + ("" if route.confirmed else "; unconfirmed: never replayed"), highlight=False)
    for number, step in enumerate(route.steps, 1):
        target = f" on {_safe(step.target.label or step.target.resource_id)!r}" if step.target else ""
        console.print(f"  {number}. {step.action.kind}{target}", highlight=False)
    if route.target_texts:
        console.print("its target page showed: " + _safe(" / ".join(route.target_texts[:12])), highlight=False)


@memory_app.command("forget")
def forget(app_name: str = typer.Argument(..., metavar="APP"),
           route_id: str = typer.Argument("", metavar="[ROUTE]"),
           every: bool = typer.Option(False, "--all", help="Forget every route of the app.")) -> None:
    """Forget one route of APP, or all of them with --all."""
    check_apps(app_name)
    if bool(route_id) == every:
        raise InputError("name one ROUTE to forget, or pass --all (not both)",
                         hint="`droidretriever memory list APP` shows the route ids")
    store, memory = _open()
    package = _package_for(store, app_name)
    if route_id:
        _route(memory, package, route_id)
    gone = memory.forget(package, route_id or None)
    console.print(f"forgot {gone} route{'s' if gone != 1 else ''} of {package}", highlight=False)
