"""Scrolling capture: swipe through the target page, stitch the frames, keep it as evidence.

- :mod:`tasks.capture.scrolling`  swipe, observe, map elements, OCR blind regions, store;
- :mod:`tasks.capture.stitch`     frames -> one long image (pure numpy + OpenCV).
"""

from __future__ import annotations

from tasks.capture.scrolling import (
    CaptureRequest,
    CaptureResult,
    CaptureTimings,
    capture_id_for,
    capture_scrolling,
)
from tasks.capture.stitch import (
    StitchError,
    StitchLayout,
    StitchResult,
    content_moved,
    map_bounds,
    map_elements,
    stitch_frames,
)

__all__ = [
    "CaptureRequest",
    "CaptureResult",
    "CaptureTimings",
    "StitchError",
    "StitchLayout",
    "StitchResult",
    "capture_id_for",
    "capture_scrolling",
    "content_moved",
    "map_bounds",
    "map_elements",
    "stitch_frames",
]
