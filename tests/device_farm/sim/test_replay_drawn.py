"""Replay phones of recordings saved without screenshots (DroidTask): screens drawn from the views.

The dump stays exactly as recorded; the pixels show each view where the dump
says it is, so OCR and the stitcher have something to read. Driven through the
ADB protocol with adbutils, as a phone would be.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

import adbutils
import pytest
from lxml import etree
from PIL import Image

from core.config import load_settings
from core.recordings import find_data_dir
from device_farm.sim import ReplayApp, SimServer, load_recordings

CLOCK = "com.simplemobiletools.clock"
BACKGROUND = (248, 248, 250)
DATA = find_data_dir(load_settings())
pytestmark = pytest.mark.skipif(DATA is None or not (DATA / "droidtask").is_dir(),
                                reason="the DroidTask recordings (shared/data/droidtask) are not on this machine")


@pytest.fixture(scope="module")
def clock() -> ReplayApp:
    assert DATA is not None
    return next(a for a in load_recordings([DATA / "droidtask" / "clock"]) if a.package == CLOCK)


@pytest.fixture(scope="module")
def replay_sim(clock: ReplayApp) -> Iterator[SimServer]:
    with SimServer(phones=1, port=0, seed=7, replays=[clock]) as server:
        yield server


@pytest.fixture()
def device(replay_sim: SimServer) -> adbutils.AdbDevice:
    """The replay phone, back at boot, with the clock open on its first recorded screen."""
    replay_sim.control.reset("boot")
    serial = next(p.serial for p in replay_sim.control.status() if p.recorded)
    phone = adbutils.AdbClient("127.0.0.1", replay_sim.port).device(serial)
    phone.shell(f"monkey -p {CLOCK} -c android.intent.category.LAUNCHER 1")
    return phone


def _texts(xml: str) -> list[str]:
    return [t for t in etree.fromstring(xml.encode()).xpath("//node/@text") if t]


def _box(xml: str, **attrs: str) -> tuple[int, int, int, int]:
    query = "".join(f"[@{k.replace('_', '-')}={v!r}]" for k, v in attrs.items())
    (node,) = etree.fromstring(xml.encode()).xpath(f"//node{query}")
    left, top, right, bottom = (int(v) for v in str(node.get("bounds")).replace("][", ",").strip("[]").split(","))
    return left, top, right, bottom


def test_a_screen_without_a_screenshot_is_drawn_from_its_views(device: adbutils.AdbDevice, clock: ReplayApp) -> None:
    launch = clock.screens[clock.launch]
    assert not launch.path.with_name(launch.path.name.replace("state_", "screen_")).with_suffix(".jpg").exists()
    xml = device.dump_hierarchy()
    recorded = [v.text for v in launch.state.visible_views() if v.text]
    assert _texts(xml) == recorded  # the dump is the recording's, text for text
    png = device.shell("screencap -p", encoding=None)
    with Image.open(io.BytesIO(png)) as shot:
        image = shot.convert("RGB")
    assert image.size == (launch.width, launch.height)
    left, top, right, bottom = _box(xml, text="05:00")
    inside = image.crop((left, top, right, bottom))
    pixels = [inside.getpixel((x, y)) for x in range(inside.width) for y in range(inside.height)]
    assert any(pixel != BACKGROUND for pixel in pixels), "the text's box is blank"
    ink = [p for p in pixels if isinstance(p, tuple) and sum(p) < 200]  # dark text on the light background
    assert len(ink) > 50


def test_a_tap_on_the_recorded_element_moves_to_the_recorded_next_state(
    device: adbutils.AdbDevice, replay_sim: SimServer, clock: ReplayApp,
) -> None:
    left, top, right, bottom = _box(device.dump_hierarchy(), content_desc="Settings")
    device.click((left + right) // 2, (top + bottom) // 2)
    trail = replay_sim.control.status(device.serial)[0].replay_trail
    settings = clock.screens[trail[-1].screen]
    assert trail[-1].outcome.value == "recorded"
    assert settings.activity.endswith("SettingsActivity")
    assert _texts(device.dump_hierarchy()) == [v.text for v in settings.state.visible_views() if v.text]
    # The page's lower half was only ever seen scrolled to (AutoDroid read it, no event was
    # recorded): a swipe up reaches it, as the recording's next event started there.
    device.swipe(540, 1800, 540, 900, 0.5)
    scrolled = clock.screens[replay_sim.control.status(device.serial)[0].replay_trail[-1].screen]
    assert scrolled.key != settings.key and scrolled.activity == settings.activity
    assert "Snooze time" in _texts(device.dump_hierarchy())


def test_a_check_box_in_a_clickable_row_takes_the_tap_and_shows_its_state(
    device: adbutils.AdbDevice, replay_sim: SimServer, clock: ReplayApp,
) -> None:
    left, top, right, bottom = _box(device.dump_hierarchy(), content_desc="Settings")
    device.click((left + right) // 2, (top + bottom) // 2)
    label = "Prevent phone from sleeping while the app is in foreground"
    xml = device.dump_hierarchy()
    before = etree.fromstring(xml.encode()).xpath(f"//node[@text={label!r}]/@checked")
    box = _box(xml, text=label)
    device.click((box[0] + box[2]) // 2, (box[1] + box[3]) // 2)
    after = etree.fromstring(device.dump_hierarchy().encode()).xpath(f"//node[@text={label!r}]/@checked")
    assert (before, after) == (["true"], ["false"])  # the recorded toggle, in the recorded dump
    assert replay_sim.control.status(device.serial)[0].replay_trail[-1].outcome.value == "recorded"
