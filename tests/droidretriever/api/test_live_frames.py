"""The live view's capture loop on a virtual phone (the ADB simulator): every watcher sees frames in
order, the first frame after an input shows it, and no frame taken before an input is sent after a
frame that shows it (a stale frame is dropped, never sent late)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from core.models import Point
from device_farm.adb_driver import AdbDriver
from device_farm.sim import SimServer
from droidretriever.api.live import Frame, FrameSource, Watcher


@pytest.fixture
def phone() -> Iterator[tuple[str, int]]:
    with SimServer(phones=1, port=0, seed=7) as sim:
        yield sim.serials[0], sim.port


async def _watch(source: FrameSource, driver: AdbDriver, inputs: int) -> list[Frame]:
    """Frames received while ``inputs`` swipes are applied, each counted as an input."""
    watcher = Watcher(asyncio.get_running_loop())
    source.add(watcher)
    frames = [await asyncio.wait_for(watcher.queue.get(), 30)]
    for index in range(inputs):
        down = index % 2 == 0
        await asyncio.to_thread(driver.swipe, Point(x=540, y=1700 if down else 900),
                                Point(x=540, y=900 if down else 1700), 50)
        count = source.note_input()
        while frames[-1].inputs < count:  # until a frame shows this input
            frames.append(await asyncio.wait_for(watcher.queue.get(), 30))
    source.remove(watcher)
    return frames


def test_frames_come_in_order_and_no_stale_frame_follows_an_input(phone: tuple[str, int]) -> None:
    serial, port = phone
    driver = AdbDriver(serial, port=port)
    driver.open_app("com.android.settings")
    source = FrameSource(serial, lambda: AdbDriver(serial, port=port), interval_s=1 / 15)
    try:
        frames = asyncio.run(_watch(source, driver, inputs=8))
    finally:
        source.close()
        driver.close()
    assert [f.seq for f in frames] == sorted({f.seq for f in frames})  # in order, none twice
    assert [f.inputs for f in frames] == sorted(f.inputs for f in frames)  # never older after newer
    assert frames[-1].inputs == 8 and all(f.jpeg[:2] == b"\xff\xd8" for f in frames)  # JPEGs
