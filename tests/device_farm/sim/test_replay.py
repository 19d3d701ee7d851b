"""Replay phones: real DroidBot recordings served as installed apps, driven through the ADB protocol.

Recorded events move to the recorded next screen; actions with no recorded
outcome leave the screen as it was and are counted as off the recorded graph.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import etree
from PIL import Image

from core.config import load_settings
from core.models import Point
from core.recordings import find_data_dir, load_droidbot_task
from device_farm.adb_driver import AdbDriver
from device_farm.models import Key
from device_farm.sim import Outcome, ReplayApp, SimServer, load_recordings
from device_farm.sim.replay import find_recording_folders
from device_farm.sim.replay.tasks import play_task
from tests.support.example_apps import example_catalog

REUTERS = "com.thomsonreuters.reuters"
DATA = find_data_dir(load_settings())
pytestmark = pytest.mark.skipif(DATA is None, reason="the real recordings (shared/data) are not on this machine")


@pytest.fixture(scope="module")
def recorded() -> tuple[ReplayApp, ...]:
    assert DATA is not None
    return load_recordings([DATA / "droidbot-real"])


@pytest.fixture(scope="module")
def replay_sim(recorded: tuple[ReplayApp, ...]) -> Iterator[SimServer]:
    with SimServer(phones=1, port=0, seed=7, catalog=example_catalog(), replays=recorded) as server:
        yield server


@pytest.fixture()
def driver(replay_sim: SimServer) -> Iterator[AdbDriver]:
    """The 1440x2560 replay phone (it holds the Reuters recording), back at boot."""
    replay_sim.control.reset("boot")
    serial = next(p.serial for p in replay_sim.control.status() if p.model == "Replay 1440x2560")
    phone = AdbDriver(serial, port=replay_sim.port)
    try:
        yield phone
    finally:
        phone.close()


def _node(xml: str, **attrs: str) -> etree._Element:
    root = etree.fromstring(xml.encode())
    query = "".join(f"[@{k.replace('_', '-')}={v!r}]" for k, v in attrs.items())
    found = root.xpath(f"//node{query}")
    assert found, f"no node {attrs} on the screen"
    return found[0]


def _centre(node: etree._Element) -> Point:
    left, top, right, bottom = (int(v) for v in str(node.get("bounds")).replace("][", ",").strip("[]").split(","))
    return Point(x=(left + right) // 2, y=(top + bottom) // 2)


def _trail(sim: SimServer, serial: str) -> list[Outcome]:
    return [step.outcome for step in sim.control.status(serial)[0].replay_trail]


def test_replay_phones_sit_beside_the_simulated_ones(replay_sim: SimServer, recorded: tuple[ReplayApp, ...]) -> None:
    phones = replay_sim.control.status()
    sizes = {(a.width, a.height) for a in recorded}
    assert len(phones) == 1 + len(sizes)
    replay = next(p for p in phones if p.model == "Replay 1440x2560")
    assert (replay.width, replay.height) == (1440, 2560)
    assert REUTERS in replay.recorded and REUTERS in replay.packages
    assert "com.android.settings" in replay.packages  # the simulated catalog is installed too
    assert REUTERS not in phones[0].packages  # a 1080x2340 phone cannot show 1440x2560 recordings


def test_recorded_app_launches_on_its_recorded_screen(driver: AdbDriver, recorded: tuple[ReplayApp, ...]) -> None:
    labels = {app.package: app.label for app in driver.list_apps()}
    assert labels[REUTERS] == "Reuters"  # the label the recording's launcher showed
    driver.open_app(REUTERS)
    seen = driver.observe()
    app = next(a for a in recorded if a.package == REUTERS and a.width == 1440)
    launch = app.screens[app.launch]
    assert (seen.package, seen.activity.rsplit(".", 1)[-1]) == (REUTERS, launch.activity.rsplit(".", 1)[-1])
    with Image.open(io.BytesIO(seen.screenshot_png)) as shown, Image.open(io.BytesIO(launch.screenshot)) as real:
        assert shown.size == real.size == (1440, 2560)
        assert shown.convert("RGB").tobytes() == real.convert("RGB").tobytes()
    assert seen.hierarchy_xml.count("<node") == len(launch.state.visible_views())


def test_taps_on_recorded_views_follow_the_recorded_events(driver: AdbDriver, replay_sim: SimServer) -> None:
    driver.open_app(REUTERS)
    home = driver.observe().hierarchy_xml
    driver.tap(_centre(_node(home, content_desc="Open Menu")))
    drawer = driver.observe().hierarchy_xml
    assert drawer != home
    driver.tap(_centre(_node(drawer, text="Settings")))
    settings = driver.observe()
    assert settings.activity.endswith("SettingsActivity")
    _node(settings.hierarchy_xml, text="Terms of Use")
    assert _trail(replay_sim, driver.serial)[-2:] == [Outcome.RECORDED, Outcome.RECORDED]


def test_actions_off_the_recorded_graph_leave_the_screen_and_are_counted(
    driver: AdbDriver, replay_sim: SimServer,
) -> None:
    driver.open_app(REUTERS)
    before = driver.observe()
    # The top left corner of the status bar: nothing was ever recorded there.
    driver.tap(Point(x=20, y=20))
    driver.swipe(Point(x=720, y=600), Point(x=1300, y=600), 300)  # a sideways swipe never recorded here
    after = driver.observe()
    assert after.hierarchy_xml == before.hierarchy_xml
    assert after.screenshot_png == before.screenshot_png
    trail = _trail(replay_sim, driver.serial)
    assert trail[-2:] == [Outcome.OFF_GRAPH, Outcome.OFF_GRAPH]
    assert trail.count(Outcome.OFF_GRAPH) == 2


def test_text_lands_in_the_field_and_enter_goes_where_the_recording_went(
    driver: AdbDriver, replay_sim: SimServer,
) -> None:
    driver.open_app(REUTERS)
    driver.tap(_centre(_node(driver.observe().hierarchy_xml, content_desc="Open Menu")))
    search = _node(driver.observe().hierarchy_xml, resource_id=f"{REUTERS}:id/menu_actionbar_homepage_search_button")
    driver.tap(_centre(search))
    entry = driver.input_text("central bank")  # not the recorded word: any text is accepted
    assert entry.landed and entry.field_text == "central bank"
    typed = driver.observe().hierarchy_xml
    driver.key(Key.ENTER)
    results = driver.observe().hierarchy_xml
    assert results != typed
    assert _trail(replay_sim, driver.serial)[-1] is Outcome.SUBMITTED


def test_back_returns_to_the_screen_before_and_leaves_the_app_from_the_first(
    driver: AdbDriver, replay_sim: SimServer,
) -> None:
    driver.open_app(REUTERS)
    home = driver.observe().hierarchy_xml
    driver.tap(_centre(_node(home, content_desc="Open Menu")))
    driver.tap(_centre(_node(driver.observe().hierarchy_xml, text="Settings")))
    driver.key(Key.BACK)
    assert driver.observe().activity.endswith("HomepageActivity")
    driver.key(Key.BACK)
    driver.key(Key.BACK)
    assert driver.observe().package == "com.android.launcher3"
    outcomes = _trail(replay_sim, driver.serial)[-3:]
    assert outcomes[-1] is Outcome.LEFT
    assert all(o in (Outcome.RECORDED, Outcome.BACK, Outcome.LEFT) for o in outcomes)


def test_a_persons_recorded_tasks_reach_their_goal_screens(recorded: tuple[ReplayApp, ...]) -> None:
    """The task sequences, played on the graph: the goal screen named by each task is reached."""
    assert DATA is not None
    expected = {  # task file -> the activity its last screen shows
        "reuters_Terms of use": "SettingsActivity",
        "smartnews_change TextSize": "SettingActivity",
        "buzzfeed_Search": "BuffetSearchActivity",
        "smartnews_Help": "SupportActivity",
    }
    for name, activity in expected.items():
        events = load_droidbot_task(DATA / "droidbot-real" / "tasks" / f"{name}.json")
        package = next(e.view.package for e in events if e.view is not None)
        plays = [play_task(app, events) for app in recorded if app.package == package]
        done = [p for p in plays if p.complete]
        assert done, f"{name}: left the recorded graph at event {plays[0].left_graph_at}"
        app = next(a for a in recorded if a.package == package and done[0].target in a.screens)
        assert app.screens[done[0].target].activity.endswith(activity)
        assert all(o is not Outcome.OFF_GRAPH for o in done[0].outcomes)


def test_recording_folders_are_found_by_their_states_folder(tmp_path: Path) -> None:
    assert DATA is not None
    assert find_recording_folders(DATA / "droidbot-real") == (DATA / "droidbot-real",)
    assert DATA / "droidbot-real" in find_recording_folders(DATA)

