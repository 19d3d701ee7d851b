"""Scrolling capture: the target page as one stitched image with its elements, kept as evidence.

In the page's main scrollable container the phone is swiped up to
``budgets.swipes_per_capture`` times by ``budgets.swipe_fraction`` of the
screen, stopping early when the content stops moving. Frames are stitched by
``tasks.capture.stitch`` (fixed header and footer kept once); each frame's hierarchy
elements are mapped into stitched coordinates; regions the hierarchy cannot
read (pictures with text, web views) are OCRed on the stitched image with
perception's engine. The PNG and the ``Capture`` JSON are stored at
``runs/<run_id>/captures/<capture_id>.png|.json``; the id is derived from
sub-task, attempt and index, so a retried sub-task overwrites its captures.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import date

import cv2
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from core.config import BudgetSettings
from core.models import Bounds, Capture, CaptureSource, Point, UIElement
from device_farm.driver import Driver
from device_farm.errors import DeviceError
from device_farm.models import DeviceObservation
from inference.perception import (
    OcrEngine,
    find_blind_regions,
    merge_ocr_elements,
    ocr_lines_to_elements,
    parse_hierarchy,
    read_regions,
)
from storage import ObjectStore, RunKeys, StorageError
from tasks.capture.stitch import (
    Image,
    StitchLayout,
    content_moved,
    map_bounds,
    map_elements,
    stitch_frames,
)
from tasks.errors import CaptureError

__all__ = ["CaptureRequest", "CaptureResult", "CaptureTimings", "capture_id_for", "capture_scrolling"]

_MIN_CONTAINER_SHARE = 0.3  # of the screen height: smaller scrollables are carousels, not the page
_EDGE_MARGIN = 0.08  # keep swipes this share inside the container (edges are system gestures)
_SWIPE_MS = 500  # slow enough that the phone scrolls by the finger distance, no fling


class CaptureRequest(BaseModel):
    """Which capture this is: its run, sub-task, try and position."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    subtask_id: str
    package: str
    attempt: int = Field(default=1, ge=1)
    index: int = Field(default=1, ge=1)  # n-th capture of this sub-task in this try
    source: CaptureSource = CaptureSource.AUTO
    title: str = ""
    screen_package: str = ""  # the app in front, when a person saved another app's screen


class CaptureTimings(BaseModel):
    """Milliseconds per stage; ``device_ms`` is the phone's share (observe and swipe)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    device_ms: float = 0.0
    decode_ms: float = 0.0
    stitch_ms: float = 0.0
    map_ms: float = 0.0
    ocr_ms: float = 0.0
    store_ms: float = 0.0
    total_ms: float = 0.0

    @property
    def host_ms(self) -> float:
        """Everything but the phone: what the capture costs this machine."""
        return self.total_ms - self.device_ms


class CaptureResult(BaseModel):
    """The stored capture, how it was stitched, and what it took."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    capture: Capture
    layout: StitchLayout
    swipes: int
    timings: CaptureTimings


def capture_id_for(subtask_id: str, attempt: int, index: int, source: CaptureSource) -> str:
    """``<subtask>-a<attempt>-c<index>`` (``u`` for a person's capture): the same on a retry."""
    kind = "u" if source is CaptureSource.USER else "c"
    return f"{subtask_id}-a{attempt}-{kind}{index}"


def capture_scrolling(
    driver: Driver,
    store: ObjectStore,
    request: CaptureRequest,
    budgets: BudgetSettings,
    *,
    ocr: OcrEngine | None = None,
    first: DeviceObservation | None = None,
) -> CaptureResult:
    """Swipe through the page, stitch, map elements, OCR blind regions, store; see the module doc.

    ``first`` is the observation the loop already made of this page (saves a round trip).
    """
    started = time.perf_counter()
    device_ms = 0.0
    if first is None:
        tick = time.perf_counter()
        first = driver.observe()
        device_ms += _ms(tick)
    observations = [first]
    tick = time.perf_counter()
    frames = [_decode(first)]
    decode_ms = _ms(tick)
    parsed_first = parse_hierarchy(first.hierarchy_xml, width=first.width, height=first.height)
    swipe = _plan_swipe(parsed_first.elements, first.width, first.height, budgets.swipe_fraction)
    swipes = 0
    for start, end in [swipe] * budgets.swipes_per_capture if swipe is not None else []:
        tick = time.perf_counter()
        driver.swipe(start, end, duration_ms=_SWIPE_MS)
        observation = driver.observe()
        device_ms += _ms(tick)
        swipes += 1
        tick = time.perf_counter()
        frame = _decode(observation)
        decode_ms += _ms(tick)
        if frame.shape != frames[-1].shape or not content_moved(frames[-1], frame):
            break  # the end of the page: the content no longer moves
        frames.append(frame)
        observations.append(observation)
    expected = (swipe[0].y - swipe[1].y) if swipe is not None else None
    tick = time.perf_counter()
    stitched = stitch_frames(frames, expected_shift=expected)
    stitch_ms = _ms(tick)
    tick = time.perf_counter()
    parsed = [parsed_first] + [
        parse_hierarchy(o.hierarchy_xml, width=o.width, height=o.height) for o in observations[1:]
    ]
    layout = stitched.layout
    elements = map_elements([p.elements for p in parsed], layout)
    map_ms = _ms(tick)
    tick = time.perf_counter()
    if ocr is not None:
        regions = _stitched_regions(
            [find_blind_regions(p, o.width, o.height) for p, o in zip(parsed, observations, strict=True)],
            layout,
        )
        if regions:
            rgb = cv2.cvtColor(stitched.image, cv2.COLOR_BGR2RGB).astype(np.uint8)
            lines = read_regions(rgb, regions, ocr)
            elements = merge_ocr_elements(elements, ocr_lines_to_elements(lines))
    ocr_ms = _ms(tick)
    tick = time.perf_counter()
    capture = _store(store, request, stitched.image, elements, layout, _read_phone_date(driver))
    store_ms = _ms(tick)
    timings = CaptureTimings(
        device_ms=device_ms, decode_ms=decode_ms, stitch_ms=stitch_ms, map_ms=map_ms,
        ocr_ms=ocr_ms, store_ms=store_ms, total_ms=_ms(started),
    )
    return CaptureResult(capture=capture, layout=layout, swipes=swipes, timings=timings)


def _plan_swipe(
    elements: Sequence[UIElement], width: int, height: int, fraction: float
) -> tuple[Point, Point] | None:
    """A swipe inside the largest vertical scrollable (None: the page does not scroll)."""
    scrollables = [
        e for e in elements
        if e.scrollable and e.bounds.height >= _MIN_CONTAINER_SHARE * height
        and e.bounds.width >= 0.5 * width
    ]
    if not scrollables:
        return None
    box = max(scrollables, key=lambda e: e.bounds.area).bounds
    margin = int(box.height * _EDGE_MARGIN)
    distance = min(int(height * fraction), box.height - 2 * margin)
    x = box.center.x
    bottom = box.bottom - margin
    return Point(x=x, y=bottom), Point(x=x, y=bottom - distance)


def _stitched_regions(
    per_frame: Sequence[tuple[Bounds, ...]], layout: StitchLayout
) -> tuple[Bounds, ...]:
    """Blind regions of every frame in stitched coordinates, overlapping copies merged."""
    kept: list[Bounds] = []
    for index, regions in enumerate(per_frame):
        for region in regions:
            mapped = map_bounds(region, index, layout)
            if mapped is None or mapped.area == 0:
                continue
            if any(other.iou(mapped) > 0.5 for other in kept):
                continue
            kept.append(mapped)
    return tuple(kept)


def _read_phone_date(driver: Driver) -> date | None:
    """The phone's date for the report's relative dates; a phone that will not say leaves it out."""
    try:
        return driver.phone_date()
    except DeviceError:
        return None


def _store(
    store: ObjectStore, request: CaptureRequest, image: Image, elements: tuple[UIElement, ...],
    layout: StitchLayout, phone_date: date | None,
) -> Capture:
    capture_id = capture_id_for(request.subtask_id, request.attempt, request.index, request.source)
    keys = RunKeys(request.run_id)
    capture = Capture(
        id=capture_id, run_id=request.run_id, subtask_id=request.subtask_id,
        package=request.package, image_key=keys.capture_image(capture_id),
        width=layout.width, height=layout.height, elements=elements, source=request.source,
        title=request.title, phone_date=phone_date,
        screen_package="" if request.screen_package == request.package else request.screen_package,
    )
    try:
        store.put_bytes(capture.image_key, _encode(image, capture_id), "image/png")
        store.put_bytes(keys.capture_elements(capture_id), capture.model_dump_json().encode(),
                        "application/json")
    except StorageError as exc:
        raise CaptureError(f"capture {capture_id} of run {request.run_id} was not stored: {exc}") from exc
    return capture


def _decode(observation: DeviceObservation) -> Image:
    """BGR pixels of a screenshot (OpenCV decodes PNG several times faster than Pillow)."""
    data = np.frombuffer(observation.screenshot_png, dtype=np.uint8)
    frame = cv2.imdecode(data, cv2.IMREAD_COLOR)
    if frame is None:
        raise CaptureError(
            f"device {observation.serial}: a capture frame is not a readable image",
            hint="the phone may show a secure window; capture again or take a screenshot by hand",
        )
    return np.asarray(frame, dtype=np.uint8)


def _encode(image: Image, capture_id: str) -> bytes:
    # Fast compression: captures are written once per page and read rarely.
    ok, data = cv2.imencode(".png", image, [cv2.IMWRITE_PNG_COMPRESSION, 1])
    if not ok:
        raise CaptureError(f"capture {capture_id}: the stitched image could not be encoded as PNG")
    return bytes(data.tobytes())


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0
