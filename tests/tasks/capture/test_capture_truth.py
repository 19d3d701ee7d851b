"""A stitched scrolling capture equals the page the simulator renders in one piece, pixel for pixel.

The ground truth is :func:`device_farm.sim.full_page.render_full_page`: the same
screen on a display made taller by what its scroll body hides, so the whole
content shows at once under one status bar and top bar, above one bottom bar
and navigation bar. The capture is the copilot's own path
(:func:`tasks.capture.capture_scrolling` over ADB on a virtual phone): swipes,
screenshots, stitching with the fixed header and footer kept once, PNG stored.

The comparison is of every pixel, status bar included: the simulated clock
restarts at 09:00 on ``reset("boot")`` and the path plus capture take a few
seconds, so the clock shows the same minute in the frames and in the truth.
"""

from __future__ import annotations

from datetime import timedelta

import cv2
import numpy as np

from core.config import BudgetSettings
from device_farm.adb_driver import AdbDriver
from device_farm.sim import SimServer
from device_farm.sim.clock import DEFAULT_START
from device_farm.sim.full_page import render_full_page
from inference.perception import Perceiver
from storage import FakeObjectStore
from suites import load_suite
from tasks.capture import CaptureRequest, CaptureResult, capture_scrolling
from tasks.navigate import play_scripted_path

MEITUAN = "com.sankuai.meituan"
BIG_MAC = next(t for t in load_suite() if t.id == "s2_multi_05_big_mac")


def _capture_store_page(sim: SimServer, perceiver: Perceiver, swipes: int) -> tuple[np.ndarray, np.ndarray,
                                                                                      CaptureResult, int]:
    """Open Meituan's McDonald's store page and capture it.

    Returns the stitched image, the truth, the capture's result and the height
    of the bars under the scroll body (bottom bar and navigation bar).
    """
    sim.control.reset("boot")
    sim.control.set_day(BIG_MAC.day)
    driver = AdbDriver(sim.serials[0], port=sim.port)
    store = FakeObjectStore()
    try:
        play_scripted_path(driver, perceiver, MEITUAN, BIG_MAC.paths["Meituan"])
        result = capture_scrolling(
            driver, store, CaptureRequest(run_id="truth", subtask_id="store", package=MEITUAN),
            BudgetSettings(swipes_per_capture=swipes),
        )
    finally:
        driver.close()
    device = sim.farm.get(sim.serials[0])
    if device is None:
        raise LookupError(f"the simulator has no phone {sim.serials[0]}")
    truth = cv2.cvtColor(np.asarray(render_full_page(device.phone)), cv2.COLOR_RGB2BGR)
    scroll = device.phone.frame().scroll
    if scroll is None:
        raise LookupError("the store page has no scroll body")
    bars = device.phone.display.height - scroll.viewport[3]
    png = np.frombuffer(store.get_bytes(result.capture.image_key), np.uint8)
    stitched = np.asarray(cv2.imdecode(png, cv2.IMREAD_COLOR), dtype=np.uint8)
    return stitched, truth, result, bars


def test_a_capture_to_the_end_of_the_page_equals_the_one_piece_render(
    sim: SimServer, perceiver: Perceiver
) -> None:
    stitched, truth, result, _ = _capture_store_page(sim, perceiver, swipes=6)
    layout = result.layout
    assert layout.used_frames >= 3, "the page should need several frames (two seams at least)"
    # The phone's own date (the simulated clock on the task's day), for the report's relative dates.
    assert result.capture.phone_date == (DEFAULT_START + timedelta(days=BIG_MAC.day)).date()
    assert layout.header_height > 0 and layout.footer_height > 0  # status + top bar, bottom + nav bar
    assert stitched.shape == truth.shape, "the stitched page is not as long as the page"
    seams = [layout.offsets[i] + layout.frame_height - layout.footer_height for i in range(layout.used_frames - 1)]
    bad_rows = np.flatnonzero(np.any(stitched != truth, axis=(1, 2)))
    assert bad_rows.size == 0, f"rows differ: {bad_rows[:10].tolist()}... (seams at {seams})"


def test_a_capture_cut_short_by_its_swipe_budget_is_the_top_of_the_page(
    sim: SimServer, perceiver: Perceiver
) -> None:
    """One swipe where the page needs two: the stitched content is the page's first part, bars kept once."""
    stitched, truth, result, bars = _capture_store_page(sim, perceiver, swipes=1)
    assert result.layout.used_frames == 2 and not result.layout.stopped_early
    assert stitched.shape[0] < truth.shape[0]
    # Rows just above the bottom bar that happen to match in every frame join the
    # stitcher's footer; they are still the last frame's content, so the split is
    # at the real bars.
    body = stitched.shape[0] - bars
    assert np.array_equal(stitched[:body], truth[:body])
    assert np.array_equal(stitched[body:], truth[truth.shape[0] - bars:])
