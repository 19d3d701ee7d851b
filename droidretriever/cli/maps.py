"""``droidretriever map build [APP...] | list | show APP``: the farm's app maps (docs/maps.md).

``map build`` runs the ``build-maps`` flow here, against the local stack and
farm (started when they are not), with a progress bar per app fed by the
phones' progress events; a build that stops is resumed by running it again.
``map list`` and ``map show`` read the maps in the object store.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from core.config import Settings, load_settings
from core.errors import InputError
from core.models import AppMap, Effect, RunEventKind, new_id
from core.text import strip_controls
from droidretriever.cli._app import app
from droidretriever.cli.ask import _ensure_farm, _ensure_stack, _local_prefect
from droidretriever.cli.inputs import check_apps

__all__ = ["map_app"]

console = Console()

map_app = typer.Typer(help="App maps: every app explored once on the farm, so answers come from "
                           "what the map holds.", no_args_is_help=True)
app.add_typer(map_app, name="map")


def _safe(text: str) -> str:
    return escape(strip_controls(text))


@map_app.command("build")
def build(
    apps: list[str] = typer.Argument(None, help="Apps to map (labels or packages); default: every app."),
    rebuild: bool = typer.Option(False, "--rebuild", help="Explore again from scratch."),
) -> None:
    """Explore APPs on the farm's phones and store their maps (resumes a build that stopped)."""
    names = list(check_apps(",".join(apps or ())))
    settings = _ensure_stack(load_settings())
    _ensure_farm(settings)
    run_id = new_id("maps")
    from flows.maps import build_maps

    with _local_prefect(settings), Progress(
        TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[note]}"),
        TimeElapsedColumn(), console=console,
    ) as progress:
        done = threading.Event()
        follower = threading.Thread(target=_follow, args=(settings, run_id, progress, done), daemon=True)
        follower.start()
        try:
            results = build_maps(apps=names or None, rebuild=rebuild, run_id=run_id)
        finally:
            done.set()
            follower.join(timeout=3)
    table = Table(title="maps built")
    for column in ("app", "version", "screens", "walls", "actions", "seconds", "phone", "stopped"):
        table.add_column(column)
    for result in results:
        table.add_row(_safe(result.label), _safe(result.version), str(result.screens), str(result.walls),
                      str(result.actions), f"{result.seconds:.0f}", result.device, _safe(result.stopped))
    console.print(table)


def _follow(settings: Settings, run_id: str, progress: Progress, done: threading.Event) -> None:
    """One bar per app, moved by the phones' ``map <label>: N screens, M to explore`` events."""
    from core.redis_client import open_redis
    from storage import RunEventReader

    reader = RunEventReader(open_redis(settings.redis))
    bars: dict[str, TaskID] = {}
    seq = 0
    budget = settings.maps.screens
    while not done.is_set():
        for event in reader.read_after(run_id, seq, count=200):
            seq = event.seq
            if event.kind is not RunEventKind.LOG or not event.message.startswith("map "):
                continue
            label, _, rest = event.message[4:].partition(": ")
            screens = int(rest.split(" ", 1)[0]) if rest[:1].isdigit() else 0
            bar = bars.get(label)
            if bar is None:
                bar = bars[label] = progress.add_task(_safe(label), total=budget, note="")
            finished = "done" in rest
            progress.update(bar, completed=budget if finished else min(screens, budget),
                            note=_safe(rest[:70]))
        time.sleep(0.5)


def _store_maps() -> list[AppMap]:
    from storage import MapStore, open_object_store

    return MapStore(open_object_store(load_settings())).list()


@map_app.command("list")
def list_maps() -> None:
    """Every stored map: app, version, screens, walls, when and how its build ended."""
    table = Table(title="app maps")
    for column in ("app", "package", "version", "screens", "walls", "built", "state"):
        table.add_column(column, overflow="fold")
    for app_map in _store_maps():
        state = app_map.stats.stopped if app_map.complete else "under way (run `map build` to resume)"
        table.add_row(_safe(app_map.label), app_map.package, _safe(app_map.version), str(len(app_map.screens)),
                      str(len(app_map.walls)), app_map.built_at.astimezone().strftime("%Y-%m-%d %H:%M"),
                      _safe(state))
    console.print(table)


@map_app.command("show")
def show(
    app_name: str = typer.Argument(..., metavar="APP", help="The app (label or package)."),
    image: Path | None = typer.Option(None, "--image", help="Also draw the map as a PNG here."),
) -> None:
    """APP's map: its screens by depth, what each entry opens, the walls."""
    wanted = check_apps(app_name)[0].casefold() if check_apps(app_name) else ""
    maps = [m for m in _store_maps() if wanted in (m.label.casefold(), m.package.casefold())]
    if not maps:
        raise InputError(f"no map of {app_name!r} is stored",
                         hint="`droidretriever map list` shows the maps; `droidretriever map build APP` makes one")
    app_map = max(maps, key=lambda m: m.built_at)
    console.print(f"[bold]{_safe(app_map.label)}[/] {app_map.package} {_safe(app_map.version)}: "
                  f"{len(app_map.screens)} screens, {len(app_map.walls)} walls, "
                  f"{app_map.stats.actions} actions in {app_map.stats.seconds:.0f} s ({_safe(app_map.stats.stopped)}); "
                  f"probe term {_safe(app_map.probe) or '-'}", highlight=False)
    for screen in sorted(app_map.screens.values(), key=lambda s: (s.depth, s.title)):
        mark = f" [red]wall: {screen.wall}[/]" if screen.wall else ""
        extra = f" (+{len(screen.samples)} like it)" if screen.samples else ""
        console.print(f"{'  ' * screen.depth}[bold]{_safe(screen.title) or screen.id}[/] "
                      f"[dim]{screen.kind.value}{', behind search' if screen.behind_search else ''}[/]{extra}{mark}",
                      highlight=False)
        for element in screen.elements:
            if element.effect is Effect.OPENS and element.leads_to in app_map.screens:
                target = app_map.screens[element.leads_to]
                console.print(f"{'  ' * screen.depth}  {_safe(element.anchor[:40])} -> "
                              f"{_safe(target.title) or target.id}", highlight=False)
            elif element.effect is Effect.REFUSED:
                console.print(f"{'  ' * screen.depth}  [dim]{_safe(element.anchor[:40])}: never pressed "
                              f"({_safe(element.note[:60])})[/]", highlight=False)
    if image is not None:
        from droidretriever.cli.map_image import draw_map
        from storage import open_object_store

        draw_map(app_map, image, open_object_store(load_settings()))
        console.print(f"drew {image}")
