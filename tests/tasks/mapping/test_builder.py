"""The map builder on virtual phones: what it finds, what it never does, and resuming a build."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.config import BudgetSettings, PerceptionSettings
from core.models import (
    AppMap,
    Effect,
    MapBudget,
    PageMode,
    Point,
    SubTask,
    SubTaskStatus,
    new_id,
)
from device_farm.adb_driver import AdbDriver
from device_farm.errors import DeviceLost
from device_farm.models import DeviceObservation, Key, TextEntry
from device_farm.sim import APPS_DIR, Catalog, SimServer, load_app
from inference.perception import Perceiver
from storage import FakeObjectStore, MapStore
from tasks.mapping import MapBuilder
from tasks.navigate import Copilot, NavigateRequest, navigate_subtask

SETTINGS = "com.android.settings"
BUDGET = MapBudget(screens=30, actions=400, seconds=300)


class WatchingDriver(AdbDriver):
    """A test double over the real driver: it keeps what was typed and what the phone showed after
    every gesture, and can lose the phone after a number of looks (a worker dying mid-build)."""

    def __init__(self, sim: SimServer, serial: str, *, lose_after: int | None = None,
                 version: str | None = None) -> None:
        super().__init__(serial, port=sim.port)
        self.sim = sim
        self.typed: list[str] = []
        self.activities: list[str] = []
        self.looks = 0
        self.lose_after = lose_after
        self.version = version

    def observe(self) -> DeviceObservation:
        self.looks += 1
        if self.lose_after is not None and self.looks > self.lose_after:
            raise DeviceLost(f"{self.serial} went away (test)")
        return super().observe()

    def app_version(self, package: str) -> str:
        return self.version if self.version is not None else super().app_version(package)

    def _record(self) -> None:
        self.activities.append(self.sim.control.status(self.serial)[0].activity)

    def tap(self, point: Point) -> None:
        super().tap(point)
        self._record()

    def key(self, key: Key) -> None:
        super().key(key)
        self._record()

    def input_text(self, text: str) -> TextEntry:
        self.typed.append(text)
        entry = super().input_text(text)
        self._record()
        return entry


@pytest.fixture(scope="module")
def phone() -> Iterator[SimServer]:
    apps = [load_app(APPS_DIR / f) for f in ("settings.yaml", "meituan.yaml", "amap.yaml")]
    trick = load_app(APPS_DIR / "adversarial" / "trickshop.yaml")
    catalog = Catalog(apps={a.package: a for a in (*apps, trick)})
    with SimServer(phones=1, port=0, seed=7, catalog=catalog) as server:
        yield server


@pytest.fixture(scope="module")
def perceiver() -> Perceiver:
    # OCR on: what a tap shows only in pixels (a toast) is read into the map.
    return Perceiver(PerceptionSettings(ocr_backend="rapidocr"))


@pytest.fixture(scope="module")
def settings_build(phone: SimServer, perceiver: Perceiver) -> tuple[AppMap, WatchingDriver, MapStore]:
    phone.control.reset("boot")
    driver = WatchingDriver(phone, phone.serials[0])
    maps = MapStore(FakeObjectStore())
    app_map = MapBuilder(driver, perceiver, maps, budget=BUDGET).build(SETTINGS)
    driver.close()
    return app_map, driver, maps


def _titled(app_map: AppMap, title: str) -> list[str]:
    return [s.id for s in app_map.screens.values() if s.title == title]


@pytest.mark.slow
def test_the_settings_map_holds_its_pages_what_they_show_and_its_walls(
        settings_build: tuple[AppMap, WatchingDriver, MapStore]) -> None:
    app_map, _, maps = settings_build
    assert app_map.complete and app_map.stats.stopped == "explored everything"
    about = app_map.screens[_titled(app_map, "About phone")[0]]
    assert "Android version" in about.texts
    home = app_map.screens[app_map.start]
    battery = next(e for e in home.elements if e.label == "Battery")
    assert battery.effect is Effect.SAME and "14 hr" in battery.note  # a toast, read in its pixels
    assert all(e.effect is not Effect.UNTRIED for e in home.elements)
    info = app_map.screens[_titled(app_map, "App info")[0]]
    assert info.template  # every app's info page is one screen of the map, with samples
    assert [s for s in app_map.walls if s.title == "App permissions"]  # privacy: the person's
    assert all(s.wall is None or not s.elements for s in app_map.screens.values())  # never gone through
    assert maps.load(SETTINGS, app_map.version) == app_map
    assert maps.store.exists(about.screenshot_key)


@pytest.mark.slow
def test_the_explorer_types_only_its_probe_and_only_into_the_search_field(
        settings_build: tuple[AppMap, WatchingDriver, MapStore]) -> None:
    app_map, driver, _ = settings_build
    assert app_map.probe and set(driver.typed) == {app_map.probe}
    searched = [s for s in app_map.screens.values() if s.behind_search]
    assert searched and all(s.title.startswith("Search") or s.depth >= 2 for s in searched)


@pytest.mark.slow
def test_exploring_an_app_full_of_traps_does_nothing_risky(phone: SimServer, perceiver: Perceiver) -> None:
    phone.control.reset("boot")
    trick = load_app(APPS_DIR / "adversarial" / "trickshop.yaml")
    driver = WatchingDriver(phone, phone.serials[0])
    try:
        app_map = MapBuilder(driver, perceiver, MapStore(FakeObjectStore()), budget=BUDGET).build(trick.package)
    finally:
        driver.close()
    assert [a for a in driver.activities if ".Sprung" in a] == []  # no trap ever sprang
    refused = [e for s in app_map.screens.values() for e in s.elements if e.effect is Effect.REFUSED]
    assert len(refused) >= 3 and all(e.note for e in refused)
    assert len(app_map.screens) >= 5


@pytest.mark.slow
def test_a_build_that_lost_its_phone_resumes_where_it_stopped(phone: SimServer, perceiver: Perceiver,
                                                              settings_build: tuple[AppMap, WatchingDriver, MapStore]) -> None:
    full = settings_build[0]
    phone.control.reset("boot")
    maps = MapStore(FakeObjectStore())
    dying = WatchingDriver(phone, phone.serials[0], lose_after=25)
    with pytest.raises(DeviceLost):
        MapBuilder(dying, perceiver, maps, budget=BUDGET).build(SETTINGS)
    dying.close()
    partial = maps.load(SETTINGS, full.version)
    assert partial is not None and not partial.complete and partial.screens
    expanded = {sid for sid, s in partial.screens.items() if s.expanded}
    driver = WatchingDriver(phone, phone.serials[0])
    resumed = MapBuilder(driver, perceiver, maps, budget=BUDGET).build(SETTINGS)
    driver.close()
    assert resumed.complete and set(resumed.screens) >= set(partial.screens)
    assert {s.title for s in resumed.screens.values()} == {s.title for s in full.screens.values()}
    for sid in expanded:  # what was explored before is not explored again
        assert resumed.screens[sid].elements == partial.screens[sid].elements


@pytest.mark.slow
def test_a_new_version_of_the_app_gets_a_map_of_its_own(phone: SimServer, perceiver: Perceiver,
                                                        settings_build: tuple[AppMap, WatchingDriver, MapStore]) -> None:
    built, _, maps = settings_build
    again = WatchingDriver(phone, phone.serials[0])
    assert MapBuilder(again, perceiver, maps, budget=BUDGET).build(SETTINGS) == built  # stored: no looks
    assert again.looks == 0
    again.close()
    newer = WatchingDriver(phone, phone.serials[0], version="15")
    fresh = MapBuilder(newer, perceiver, maps, budget=BUDGET.model_copy(update={"screens": 3})).build(SETTINGS)
    newer.close()
    assert fresh.version == "15" and newer.looks > 0
    assert {m.version for m in maps.list()} == {built.version, "15"}


@pytest.mark.slow
def test_navigation_follows_the_map_to_a_page_no_rule_names(phone: SimServer, perceiver: Perceiver,
                                                            settings_build: tuple[AppMap, WatchingDriver, MapStore]) -> None:
    _, _, maps = settings_build
    phone.control.reset("boot")
    driver = AdbDriver(phone.serials[0], port=phone.port)
    copilot = Copilot(driver=driver, perceiver=perceiver, store=FakeObjectStore(), maps=maps,
                      budgets=BudgetSettings(steps_per_subtask=10, retries=1, swipes_per_capture=0))
    # No search term: with one, the skills would type it into the settings' search field and
    # never need the map.
    subtask = SubTask(id="s1", app_label="Settings", package=SETTINGS, page_mode=PageMode.FOCUSED,
                      goal="Which Android version is this phone on?", search_term=None)
    try:
        result = navigate_subtask(copilot, NavigateRequest(run_id=new_id("run"), subtask=subtask))
    finally:
        driver.close()
    assert result.status is SubTaskStatus.COMPLETED, result.reason
    assert any(s.policy == "map" for s in result.trace.steps), [(s.policy, s.action) for s in result.trace.steps]
    assert result.captures and result.captures[0].title == "About phone"
