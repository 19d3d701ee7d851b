"""Stitch the frames of one scrolling page into one long image (pure: numpy + OpenCV).

    header  | rows identical in every frame (status bar, app bar): kept once, from frame 0
    band    | the scrolling part: frame 0's band, then each later frame's new rows
    footer  | rows identical in every frame (bottom nav, navigation bar): kept once, from the last

Each frame's vertical shift against the previous one is found by template
matching (OpenCV) of a textured strip of the new frame inside the previous
band, first on 4x downscaled grey images, then verified and refined at full
resolution over the whole overlap, so repeated list items cannot fool it. A
frame whose content did not move ends the stitch there (stop-early). The
layout keeps, per frame, the y offset that maps its pixels into the stitched
image; :func:`map_bounds` and :func:`map_elements` use it for element boxes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from core.models import Bounds, UIElement
from tasks.errors import StitchError

__all__ = [
    "StitchError",
    "StitchLayout",
    "StitchResult",
    "content_moved",
    "map_bounds",
    "map_elements",
    "stitch_frames",
]

Image = npt.NDArray[np.uint8]

_SCALE = 4  # coarse search on images this many times shorter
_SCALE_X = 8  # and this many times narrower: rows, not columns, locate a shift
_ROW_TOLERANCE = 2.0  # mean absolute grey difference under which two rows are "the same"
_MAX_MATCH_ERROR = 6.0  # mean absolute difference over the overlap for an accepted shift
_DEDUPE_IOU = 0.7



class StitchLayout(BaseModel):
    """Where each used frame lies in the stitched image."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    width: int
    height: int
    frame_height: int
    header_height: int
    footer_height: int
    offsets: tuple[int, ...]  # per used frame: add to a frame y to get the stitched y
    used_frames: int
    stopped_early: bool = False  # a frame showed no new content; later frames were dropped
    unmatched_frames: tuple[int, ...] = ()  # no overlap found: appended whole, seam unverified


@dataclass(frozen=True)
class StitchResult:
    """The stitched image (H x W x 3, uint8) and its layout."""

    image: Image
    layout: StitchLayout


def _grey(frame: Image) -> Image:
    if frame.ndim == 2:
        return frame
    return cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY).astype(np.uint8)


def content_moved(
    previous: Image, current: Image, *, header: int = 0, footer: int = 0
) -> bool:
    """Whether the scrolling band changed between two frames (False = stop swiping)."""
    bottom = previous.shape[0] - footer
    a = _grey(previous)[header:bottom].astype(np.int16)
    b = _grey(current)[header:bottom].astype(np.int16)
    # Any row changing counts: a list of near-identical items moves by whole items.
    return bool(a.size) and bool(np.abs(a - b).mean(axis=1).max() > _ROW_TOLERANCE)


def stitch_frames(frames: Sequence[Image], *, expected_shift: int | None = None) -> StitchResult:
    """Stitch ``frames`` (top to bottom, same size) into one long image.

    ``expected_shift`` (pixels, e.g. 2/3 of the screen height) breaks ties
    between equally good matches on pages with repeated rows.
    """
    if not frames:
        raise StitchError("no frames to stitch", hint="capture at least one screenshot")
    shape = frames[0].shape
    for index, frame in enumerate(frames):
        if frame.shape != shape:
            raise StitchError(
                f"frame {index} is {frame.shape[1]}x{frame.shape[0]}, frame 0 is {shape[1]}x{shape[0]}",
                hint="the screen rotated or changed size during the capture: capture again",
            )
    greys = [_grey(f) for f in frames]
    used = [0]
    stopped_early = False
    for index in range(1, len(frames)):
        if not content_moved(greys[used[-1]], greys[index]):
            stopped_early = True
            break
        used.append(index)
    header, footer = _fixed_rows([greys[i] for i in used])
    height = shape[0]
    offsets = [0]
    unmatched: list[int] = []
    for previous, current in pairwise(used):
        shift = _find_shift(greys[previous], greys[current], header, footer, expected_shift)
        if shift is None:
            shift = height - header - footer
            unmatched.append(current)
        offsets.append(offsets[-1] + shift)
    parts = [frames[0][: height - footer]]
    for position in range(1, len(used)):
        shift = offsets[position] - offsets[position - 1]
        frame = frames[used[position]]
        parts.append(frame[height - footer - shift : height - footer])
    parts.append(frames[used[-1]][height - footer :])
    image = np.ascontiguousarray(np.concatenate(parts, axis=0))
    layout = StitchLayout(
        width=shape[1],
        height=image.shape[0],
        frame_height=height,
        header_height=header,
        footer_height=footer,
        offsets=tuple(offsets),
        used_frames=len(used),
        stopped_early=stopped_early,
        unmatched_frames=tuple(unmatched),
    )
    return StitchResult(image=image, layout=layout)


def map_bounds(bounds: Bounds, frame_index: int, layout: StitchLayout) -> Bounds | None:
    """``bounds`` from frame ``frame_index`` in stitched coordinates (None: not kept).

    A frame contributes its band; the header only from frame 0 and the footer
    only from the last frame, so their copies in other frames map to None and a
    box half under the app bar is clipped to its visible part.
    """
    if frame_index >= layout.used_frames:
        return None  # a frame after the content stopped moving
    top_limit = 0 if frame_index == 0 else layout.header_height
    last = frame_index == layout.used_frames - 1
    bottom_limit = layout.frame_height if last else layout.frame_height - layout.footer_height
    top, bottom = max(bounds.top, top_limit), min(bounds.bottom, bottom_limit)
    if bottom <= top:
        return None
    offset = layout.offsets[frame_index]
    return Bounds(left=bounds.left, top=top + offset, right=bounds.right, bottom=bottom + offset)


def map_elements(
    frames_elements: Sequence[Sequence[UIElement]], layout: StitchLayout
) -> tuple[UIElement, ...]:
    """Every frame's elements in stitched coordinates, each seen twice kept once.

    Ids become ``f<frame>.<id>`` so they stay unique across frames.
    """
    kept: list[UIElement] = []
    for frame_index, elements in enumerate(frames_elements):
        for element in elements:
            mapped = map_bounds(element.bounds, frame_index, layout)
            if mapped is None:
                continue
            if any(
                other.label == element.label and other.bounds.iou(mapped) >= _DEDUPE_IOU
                for other in kept
            ):
                continue  # the same element, seen again in the overlap of two frames
            kept.append(
                element.model_copy(
                    update={
                        "id": f"f{frame_index}.{element.id}",
                        "bounds": mapped,
                        "parent_id": f"f{frame_index}.{element.parent_id}"
                        if element.parent_id
                        else None,
                    }
                )
            )
    return tuple(kept)


def _fixed_rows(greys: Sequence[Image]) -> tuple[int, int]:
    """Rows at the top and bottom that are the same in every frame: header, footer."""
    height = greys[0].shape[0]
    if len(greys) < 2:
        return 0, 0
    first = greys[0].astype(np.int16)
    same = np.ones(height, dtype=bool)
    for grey in greys[1:]:
        same &= np.abs(grey.astype(np.int16) - first).mean(axis=1) <= _ROW_TOLERANCE
    changing = np.flatnonzero(~same)
    if changing.size == 0:
        return 0, 0
    return int(changing[0]), int(height - 1 - changing[-1])


def _find_shift(
    previous: Image, current: Image, header: int, footer: int, expected: int | None
) -> int | None:
    """How many rows the band moved up from ``previous`` to ``current`` (None: no overlap)."""
    a = previous[header : previous.shape[0] - footer]
    b = current[header : current.shape[0] - footer]
    band = a.shape[0]
    size = (a.shape[1] // _SCALE_X, band // _SCALE)
    small_a: Image = np.asarray(cv2.resize(a, size, interpolation=cv2.INTER_AREA), dtype=np.uint8)
    small_b: Image = np.asarray(cv2.resize(b, size, interpolation=cv2.INTER_AREA), dtype=np.uint8)
    rows = small_b.shape[0]
    strip = max(6, rows // 24)
    # The overlap can be small (a 2/3-screen swipe leaves about 1/6 of the band), so
    # the templates come from the top of the new frame: its first rows, and the most
    # textured strip in each of the top two eighths.
    starts = {0}
    for low, high in ((0, rows // 8), (rows // 8, rows // 4)):
        region = small_b[low : min(rows, high + strip)]
        if region.shape[0] >= strip:
            starts.add(low + _textured_strip(region, strip))
    coarse: set[int] = set()
    for start in starts:
        if start + strip > rows:
            continue
        scores = cv2.matchTemplate(small_a, small_b[start : start + strip], cv2.TM_SQDIFF).ravel()
        coarse.update(position - start for position in _distinct_minima(scores, strip // 2))
    hint = round(expected / _SCALE) if expected is not None else None
    ranked = sorted(
        (_overlap_error(small_a, small_b, c), abs(c * _SCALE - (expected or 0)), c)
        for c in coarse
        if 0 < c < rows
    )
    shortlist = [c for _, _, c in ranked[:3]]
    if hint is not None and 0 < hint < rows:
        shortlist.append(hint)  # periodic lists match every item equally well
    best: tuple[float, int, int] | None = None  # (error, distance to expected, shift)
    for candidate in shortlist:
        # A blurry coarse match can be a few rows off: settle it on the coarse
        # overlap first (cheap), then refine at full resolution.
        nearby = range(max(1, candidate - _SCALE), min(rows - 1, candidate + _SCALE) + 1)
        settled = min(nearby, key=lambda c: _overlap_error(small_a, small_b, c))
        centre = settled * _SCALE
        for shift in range(max(1, centre - _SCALE), min(band - 1, centre + _SCALE) + 1):
            error = _overlap_error(a, b, shift)
            distance = abs(shift - expected) if expected is not None else 0
            if best is None or (error, distance) < best[:2]:
                best = (error, distance, shift)
        if best is not None and best[0] == 0.0 and expected is None:
            break  # an exact seam (rendered frames) cannot be beaten
    if best is None or best[0] > _MAX_MATCH_ERROR:
        return None
    return best[2]


def _distinct_minima(scores: npt.NDArray[Any], spacing: int, count: int = 4) -> list[int]:
    """The ``count`` best positions at least ``spacing`` apart (neighbours of one match are one)."""
    chosen: list[int] = []
    for position in np.argsort(scores):
        if all(abs(int(position) - c) >= spacing for c in chosen):
            chosen.append(int(position))
            if len(chosen) == count:
                break
    return chosen


def _textured_strip(region: Image, strip: int) -> int:
    """The top row of the most textured ``strip``-row window (blank strips match anywhere)."""
    row_std = region.astype(np.float32).std(axis=1)
    window = np.convolve(row_std, np.ones(strip, dtype=np.float32), mode="valid")
    return int(np.argmax(window)) if window.size else 0


def _overlap_error(a: Image, b: Image, shift: int) -> float:
    """Mean absolute difference between ``a`` moved up by ``shift`` and ``b`` (sampled rows)."""
    overlap = a.shape[0] - shift
    if overlap <= 0:
        return float("inf")
    # Sampled rows and columns: the error is an average, a 160 x W/2 grid decides it.
    step = max(1, overlap // 160)
    upper = a[shift:][::step, ::2].astype(np.int16)
    lower = b[:overlap][::step, ::2].astype(np.int16)
    return float(np.abs(upper - lower).mean())
