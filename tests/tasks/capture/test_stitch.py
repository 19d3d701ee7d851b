"""Scrolling-capture stitching on synthetic long pages: pixel-exact against the truth."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from core.models import Bounds, UIElement
from tasks.capture import StitchError, content_moved, map_bounds, map_elements, stitch_frames

WIDTH, HEIGHT, HEADER, FOOTER = 540, 1170, 110, 90
BAND = HEIGHT - HEADER - FOOTER


def render_page(rows: int, *, repeated: bool = False, seed: int = 3) -> np.ndarray:
    """A tall page of text rows (distinct or identical) on white, as the simulator would."""
    rng = np.random.default_rng(seed)
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 22)
    heights = [90] * rows if repeated else [int(h) for h in rng.integers(50, 120, rows)]
    page = Image.new("RGB", (WIDTH, sum(heights)), "white")
    draw = ImageDraw.Draw(page)
    y = 0
    for index, height in enumerate(heights):
        text = "Big Mac meal  ¥24.5" if repeated else f"Result {index}: item {rng.integers(1000)} ¥{rng.integers(5, 99)}"
        draw.text((20, y + 10), text, fill=(30, 30, 30), font=font)
        draw.line((0, y + height - 1, WIDTH, y + height - 1), fill=(220, 220, 220))
        y += height
    return np.asarray(page, dtype=np.uint8).copy()


def bars() -> tuple[np.ndarray, np.ndarray]:
    header = np.zeros((HEADER, WIDTH, 3), np.uint8)
    header[:] = (40, 120, 200)
    header[30:60, 20:200] = 255  # a title block
    footer = np.zeros((FOOTER, WIDTH, 3), np.uint8)
    footer[:] = (60, 60, 60)
    footer[20:70, 40:120] = 200  # a nav icon
    return header, footer


def cut_frames(page: np.ndarray, offsets: list[int]) -> tuple[list[np.ndarray], np.ndarray]:
    header, footer = bars()
    frames = [np.concatenate([header, page[o : o + BAND], footer]) for o in offsets]
    truth = np.concatenate([header, page[: offsets[-1] + BAND], footer])
    return frames, truth


def test_five_frames_stitch_pixel_exact() -> None:
    page = render_page(80)
    shift = int(HEIGHT * 0.67)
    offsets = [k * shift for k in range(5)]
    assert offsets[-1] + BAND <= page.shape[0]
    frames, truth = cut_frames(page, offsets)
    result = stitch_frames(frames)
    assert result.image.shape == truth.shape
    assert np.array_equal(result.image, truth)
    layout = result.layout
    # Blank rows next to a bar that are blank in every frame may join it: harmless,
    # since they are identical everywhere the image is still exact.
    assert HEADER <= layout.header_height < HEADER + 20 and FOOTER <= layout.footer_height < FOOTER + 20
    assert layout.offsets == tuple(offsets) and layout.used_frames == 5 and not layout.stopped_early


def test_uneven_swipes_and_a_short_last_one() -> None:
    page = render_page(60)
    offsets = [0, 600, 1100, 1700, 1760]
    frames, truth = cut_frames(page, offsets)
    result = stitch_frames(frames)
    assert np.array_equal(result.image, truth) and result.layout.offsets == tuple(offsets)


def test_stops_early_when_the_content_stops_moving() -> None:
    page = render_page(30)
    end = page.shape[0] - BAND
    frames, truth = cut_frames(page, [0, 700, end, end, end])
    result = stitch_frames(frames)
    assert result.layout.stopped_early and result.layout.used_frames == 3
    assert np.array_equal(result.image, truth[: HEADER + end + BAND + FOOTER])
    assert not content_moved(frames[2], frames[3]) and content_moved(frames[0], frames[1])


def test_repeated_items_use_the_expected_shift() -> None:
    page = render_page(60, repeated=True)
    page[::97, :20] = 0  # small marks off the item period, as real lists differ a little
    shift = 720
    frames, truth = cut_frames(page, [0, shift, 2 * shift])
    result = stitch_frames(frames, expected_shift=shift)
    assert np.array_equal(result.image, truth)


def test_boxes_map_into_stitched_coordinates() -> None:
    page = render_page(80)
    frames, _ = cut_frames(page, [0, 700, 1400])
    layout = stitch_frames(frames).layout
    # A row at page y=900 is at frame-1 y = 900 - 700 + HEADER and at stitched y = 900 + HEADER.
    box = Bounds(left=20, top=900 - 700 + HEADER, right=300, bottom=960 - 700 + HEADER)
    assert map_bounds(box, 1, layout) == Bounds(left=20, top=900 + HEADER, right=300, bottom=960 + HEADER)
    title = Bounds(left=20, top=30, right=200, bottom=60)
    assert map_bounds(title, 0, layout) == title  # the header, kept once from frame 0
    assert map_bounds(title, 2, layout) is None
    nav = Bounds(left=40, top=HEIGHT - 70, right=120, bottom=HEIGHT - 20)
    assert map_bounds(nav, 0, layout) is None
    assert map_bounds(nav, 2, layout) == nav.shifted(dy=1400)  # the footer, from the last frame
    bar = layout.header_height
    half_under_bar = Bounds(left=0, top=bar - 30, right=100, bottom=bar + 30)
    assert map_bounds(half_under_bar, 1, layout) == Bounds(left=0, top=bar + 700, right=100, bottom=bar + 730)


def test_elements_seen_in_two_frames_are_kept_once() -> None:
    page = render_page(80)
    frames, _ = cut_frames(page, [0, 700])
    layout = stitch_frames(frames).layout
    seen_top = UIElement(id="a", text="Result 9", bounds=Bounds(left=20, top=HEADER + 800, right=300, bottom=HEADER + 850))
    seen_again = seen_top.model_copy(update={"bounds": seen_top.bounds.shifted(dy=-700)})
    only_second = UIElement(id="b", text="Result 20", bounds=Bounds(left=20, top=HEADER + 900, right=300, bottom=HEADER + 950))
    kept = map_elements([[seen_top], [seen_again, only_second]], layout)
    assert [(e.id, e.bounds.top) for e in kept] == [("f0.a", HEADER + 800), ("f1.b", HEADER + 1600)]


def test_invalid_input_is_a_typed_error() -> None:
    with pytest.raises(StitchError, match="no frames"):
        stitch_frames([])
    with pytest.raises(StitchError, match="frame 1 is 10x12, frame 0 is 10x10") as caught:
        stitch_frames([np.zeros((10, 10, 3), np.uint8), np.zeros((12, 10, 3), np.uint8)])
    assert "rotated" in caught.value.hint
    single = np.full((HEIGHT, WIDTH, 3), 7, np.uint8)
    assert np.array_equal(stitch_frames([single]).image, single)
