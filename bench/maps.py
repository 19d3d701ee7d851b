"""App maps: what exploring each app finds, at what cost: ``python -m bench.maps``.

Area "maps" of docs/benchmarks.md. Every app of the virtual phones' catalog,
and every real app of the shared DroidBot recordings (replay phones), is
explored by the product's map builder (``tasks.mapping.MapBuilder``) through
the ADB protocol, one app at a time per phone, the phones side by side. The
builder is not told anything about the apps: its coverage is measured from
outside, by asking the simulator which screen each look showed.

- virtual phones: the app's screens (its YAML's ``screens``) the explorer saw,
  out of all of them; screens behind a sign-in wall or a payment count as
  missed (the explorer never goes through);
- recordings: the recorded graph's screens reached (DroidBot ``state_str``,
  and by kind: same content-free signature), out of all the recording holds;
- cost: seconds, actions and relaunches per app, phone-minutes in all.

``--out DIR`` keeps the maps (``maps/<package>/<version>/...`` as in the
object store) so that ``bench.answers --maps-from DIR`` and
``bench.real_navigation --maps-from DIR`` answer with them without exploring
again.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.results import create_figure, parse_bench_args, save_plot, write_section
from core.config import PerceptionSettings
from core.models import AppMap, MapBudget
from core.recordings import find_data_dir
from device_farm.adb_driver import AdbDriver
from device_farm.models import DeviceObservation
from device_farm.sim import SimServer, load_catalog, load_recordings
from device_farm.sim.replay import ReplayApp
from inference.perception import Perceiver
from storage import FakeObjectStore, MapStore, ObjectStore
from tasks.mapping import MapBuilder

__all__ = ["AppCoverage", "copy_maps", "explore_apps", "load_maps_into", "main", "save_maps"]

DEFAULT_BUDGET = MapBudget(screens=60, actions=600, seconds=600.0)


@dataclass
class AppCoverage:
    """One app's exploration, seen from outside."""

    package: str
    label: str
    kind: str  # "virtual" or "recording"
    total: int  # the app's screens (YAML screens, or recorded states)
    size: tuple[int, int] | None = None  # recordings: the screen size of the replay phone it needs
    app_label: str = ""  # the app's own label (``label`` may add the recording's size)
    reached: set[str] = field(default_factory=set)  # of those, the ones a look showed
    total_kinds: int = 0  # recordings: screens by content-free kind
    reached_kinds: set[str] = field(default_factory=set)
    map_screens: int = 0
    walls: int = 0
    seconds: float = 0.0
    actions: int = 0
    relaunches: int = 0
    refused: int = 0
    stopped: str = ""

    @property
    def share(self) -> float:
        return len(self.reached) / self.total if self.total else 0.0


class WatchedDriver(AdbDriver):
    """An ADB driver that asks the simulator, after every look, which screen it showed (the
    benchmark's outside view; the builder never sees it)."""

    def __init__(self, serial: str, *, port: int, server: SimServer, seen: set[str]) -> None:
        super().__init__(serial, port=port)
        self._server = server
        self.seen = seen

    def observe(self) -> DeviceObservation:
        observation = super().observe()
        status = self._server.control.status(self.serial)[0]
        screen = status.replay_screens.get(observation.package) or (
            status.screen if status.package == observation.package else "")
        if screen:
            self.seen.add(screen)
        return observation


def explore_apps(server: SimServer, jobs: Sequence[tuple[str, AppCoverage]], maps: MapStore,
                 perceiver: Perceiver, budget: MapBudget, *, log: bool = True) -> list[AppMap]:
    """Build the map of every (serial-kind, app) job on the server's phones, one thread per phone."""
    phones = server.control.status()
    todo = list(jobs)
    built: list[AppMap] = []
    lock = threading.Lock()

    def fits(job: tuple[str, AppCoverage], serial: str, recorded: bool, size: tuple[int, int]) -> bool:
        kind, coverage = job
        return ((kind == "recording") == recorded and coverage.package in _installed(server, serial)
                and coverage.size in (None, size))

    def work(serial: str, recorded: bool, size: tuple[int, int]) -> None:
        while True:
            with lock:
                job = next((j for j in todo if fits(j, serial, recorded, size)), None)
                if job is None:
                    return
                todo.remove(job)
            coverage = job[1]
            driver = WatchedDriver(serial, port=server.port, server=server, seen=coverage.reached)
            try:
                started = time.perf_counter()
                app_map = MapBuilder(driver, perceiver, maps, budget=budget).build(
                    coverage.package, label=coverage.app_label or coverage.label)
                coverage.seconds = time.perf_counter() - started
            finally:
                driver.close()
            _fill(coverage, app_map)
            with lock:
                built.append(app_map)
                if log:
                    print(f"  {coverage.label}: {coverage.map_screens} map screens, "
                          f"{len(coverage.reached)}/{coverage.total} of its screens, "
                          f"{coverage.seconds:.0f} s ({coverage.stopped})", flush=True)

    threads = [threading.Thread(target=work, args=(p.serial, bool(p.recorded), (p.width, p.height)), daemon=True)
               for p in phones]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return built


def _installed(server: SimServer, serial: str) -> set[str]:
    return set(server.control.status(serial)[0].packages)


def _fill(coverage: AppCoverage, app_map: AppMap) -> None:
    coverage.map_screens = len(app_map.screens)
    coverage.walls = len(app_map.walls)
    coverage.actions = app_map.stats.actions
    coverage.relaunches = app_map.stats.relaunches
    coverage.refused = app_map.stats.refused
    coverage.stopped = app_map.stats.stopped
    coverage.seconds = coverage.seconds or app_map.stats.seconds


def save_maps(store: ObjectStore, folder: Path) -> int:
    """Write every map object (JSON and screenshots) of ``store`` under ``folder``; how many."""
    count = 0
    for info in store.list_objects("maps/"):
        path = folder / info.key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(store.get_bytes(info.key))
        count += 1
    return count


def load_maps_into(store: ObjectStore, folder: Path) -> int:
    """Put the maps ``save_maps`` wrote under ``folder`` into ``store``; how many objects."""
    count = 0
    for path in sorted((folder / "maps").rglob("*")):
        if path.is_file():
            store.put_bytes(path.relative_to(folder).as_posix(), path.read_bytes())
            count += 1
    return count


def copy_maps(source: ObjectStore, target: ObjectStore) -> int:
    """Copy every map object from one store to another; how many."""
    infos = source.list_objects("maps/")
    for info in infos:
        target.put_bytes(info.key, source.get_bytes(info.key))
    return len(infos)


def virtual_jobs(packages: Iterable[str] | None = None) -> list[tuple[str, AppCoverage]]:
    """One job per app of the virtual phones' catalog (all launcher apps, or ``packages``)."""
    wanted = {p.casefold() for p in packages} if packages else None
    jobs = []
    for spec in load_catalog().launchable:
        if wanted is not None and spec.package.casefold() not in wanted and spec.label.casefold() not in wanted:
            continue
        jobs.append(("virtual", AppCoverage(package=spec.package, label=spec.label, kind="virtual",
                                            total=len(spec.screens))))
    return jobs


def recording_jobs(apps: Sequence[ReplayApp], names: Iterable[str] | None = None) -> list[tuple[str, AppCoverage]]:
    """One job per recorded app (all, or those named)."""
    wanted = {n.casefold() for n in names} if names else None
    jobs = []
    for app in apps:
        if wanted is not None and app.package.casefold() not in wanted and app.label.casefold() not in wanted:
            continue
        kinds = {screen.kind for screen in app.screens.values()}
        jobs.append(("recording", AppCoverage(package=app.package, label=f"{app.label} ({app.width}px)",
                                              kind="recording", total=len(app.screens), app_label=app.label,
                                              total_kinds=len(kinds), size=(app.width, app.height))))
    return jobs


def _kinds_reached(coverage: AppCoverage, apps: Sequence[ReplayApp]) -> None:
    app = next((a for a in apps if a.package == coverage.package and (a.width, a.height) == coverage.size), None)
    if app is None:
        return
    coverage.reached_kinds = {app.screens[key].kind for key in coverage.reached if key in app.screens}


def _table(rows: Sequence[AppCoverage], *, recorded: bool) -> list[str]:
    if recorded:
        head = ["| app | recorded screens reached | by kind | map screens | walls | s | actions | relaunches | stopped |",
                "|---|---|---|---|---|---|---|---|---|"]
    else:
        head = ["| app | its screens seen | map screens | walls | s | actions | relaunches | refused | stopped |",
                "|---|---|---|---|---|---|---|---|---|"]
    lines = list(head)
    for r in sorted(rows, key=lambda r: r.label.casefold()):
        if recorded:
            lines.append(f"| {r.label} | {len(r.reached)}/{r.total} ({r.share:.0%}) | "
                         f"{len(r.reached_kinds)}/{r.total_kinds} | {r.map_screens} | {r.walls} | "
                         f"{r.seconds:.0f} | {r.actions} | {r.relaunches} | {r.stopped} |")
        else:
            lines.append(f"| {r.label} | {len(r.reached)}/{r.total} ({r.share:.0%}) | {r.map_screens} | "
                         f"{r.walls} | {r.seconds:.0f} | {r.actions} | {r.relaunches} | {r.refused} | {r.stopped} |")
    return lines


def _summary(rows: Sequence[AppCoverage]) -> str:
    if not rows:
        return "none"
    reached = sum(len(r.reached) for r in rows)
    total = sum(r.total for r in rows)
    seconds = [r.seconds for r in rows]
    return (f"{reached}/{total} screens ({reached / total:.0%}) over {len(rows)} apps; "
            f"median {statistics.median(seconds):.0f} s per app (max {max(seconds):.0f} s), "
            f"{sum(seconds) / 60:.1f} phone-minutes in all")


def _plot(rows: Sequence[AppCoverage]) -> str:
    figure = create_figure(8.0, 0.2 * len(rows) + 1.5)
    axis = figure.add_subplot()
    ordered = sorted(rows, key=lambda r: (r.kind, r.share))
    colours = ["#1f77b4" if r.kind == "virtual" else "#ff7f0e" for r in ordered]
    axis.barh([r.label for r in ordered], [100 * r.share for r in ordered], color=colours)
    axis.set_xlabel("share of the app's screens the explorer saw (%)")
    axis.set_xlim(0, 100)
    axis.tick_params(axis="y", labelsize=6)
    axis.set_title("App maps: coverage per app (blue: virtual phones; orange: real recordings)")
    return save_plot("maps", "coverage", figure, "Coverage per app: the share of its screens the explorer saw")


def main(argv: list[str] | None = None) -> None:
    """Explore every app, print and publish coverage and cost."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--apps", default="", help="comma-separated labels or packages (default: all)")
    parser.add_argument("--phones", type=int, default=2, help="virtual phones exploring side by side")
    parser.add_argument("--no-recordings", action="store_true", help="leave the real recordings out")
    parser.add_argument("--screens", type=int, default=DEFAULT_BUDGET.screens)
    parser.add_argument("--seconds", type=float, default=DEFAULT_BUDGET.seconds)
    parser.add_argument("--out", type=Path, help="also keep the maps in this folder")
    args = parse_bench_args(parser, argv)
    names = [a.strip() for a in args.apps.split(",") if a.strip()] or None
    budget = DEFAULT_BUDGET.model_copy(update={"screens": args.screens, "seconds": args.seconds})
    recordings: Sequence[ReplayApp] = ()
    data = find_data_dir()
    if not args.no_recordings and data is not None:
        recordings = load_recordings([data / "droidbot-real"])
    jobs = virtual_jobs(names) + recording_jobs(recordings, names)
    store = FakeObjectStore()
    perceiver = Perceiver(PerceptionSettings())
    started = time.perf_counter()
    with SimServer(phones=args.phones, port=0, seed=7, catalog=load_catalog(), replays=recordings) as server:
        explore_apps(server, jobs, MapStore(store), perceiver, budget)
    wall = time.perf_counter() - started
    rows = [coverage for _, coverage in jobs]
    for row in rows:
        if row.kind == "recording":
            _kinds_reached(row, recordings)
    virtual = [r for r in rows if r.kind == "virtual"]
    recorded = [r for r in rows if r.kind == "recording"]
    if args.out is not None:
        print(f"kept {save_maps(store, args.out)} map objects under {args.out}")
    lines = [
        f"Budget per app: {budget.screens} screens, {budget.actions} actions, {budget.seconds:.0f} s; "
        f"{args.phones} virtual phones side by side (zero latency), plus a replay phone per screen size "
        f"of the recordings; wall time {wall / 60:.1f} min.",
        "",
        f"Virtual phones: {_summary(virtual)}.",
        "",
        *_table(virtual, recorded=False),
        "",
        f"Real recordings (`shared/data/droidbot-real`): {_summary(recorded)}.",
        "",
        *_table(recorded, recorded=True),
        "",
        "A screen counts as seen when a look of the explorer showed it (the simulator says which). "
        "Screens behind a sign-in or payment wall are never gone through; a recorded screen whose "
        "way in the recording holds no event for (a tap DroidBot made that the replay cannot match) "
        "cannot be reached by anyone.",
    ]
    print("\n".join(lines))
    lines += ["", _plot(rows)]
    write_section("maps", "App maps: exploration coverage and cost", "python -m bench.maps", "\n".join(lines))


if __name__ == "__main__":
    main()
