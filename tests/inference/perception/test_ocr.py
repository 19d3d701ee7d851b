"""OCR on real pixels: recall of widget texts, blind regions only, cache, merge, captures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont
from rapidfuzz import fuzz, utils

from core.config import PerceptionSettings
from core.models import Bounds
from inference.errors import BackendUnavailableError
from inference.perception import (
    CachedOcrEngine,
    OcrLine,
    PaddleOcrEngine,
    Perceiver,
    RapidOcrEngine,
    create_ocr_engine,
    find_blind_regions,
    load_droidbot_state,
    merge_ocr_elements,
    observe_droidbot_state,
    ocr_lines_to_elements,
    parse_hierarchy,
    read_capture,
)
from inference.perception.image import decode_screenshot

_FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


@pytest.fixture(scope="module")
def engine() -> CachedOcrEngine:
    return CachedOcrEngine(RapidOcrEngine(), max_entries=8)


class CountingOcr:
    """Test double: a fixed answer per call, counting calls (behaves like an engine)."""

    name = "counting"

    def __init__(self, lines: tuple[OcrLine, ...]) -> None:
        self.lines = lines
        self.calls = 0

    def read(self, image: np.ndarray) -> tuple[OcrLine, ...]:
        self.calls += 1
        return self.lines


def test_rapidocr_reads_most_visible_widget_texts(engine: CachedOcrEngine, state_paths: list[Path]) -> None:
    picked = [p for p in state_paths if "droidbot-real" in str(p)][40::160][:3]
    found = total = 0
    for path in picked:
        state = load_droidbot_state(path)
        obs = observe_droidbot_state(path)
        image = decode_screenshot(obs.screenshot_png)
        lines = engine.read(image)
        for view in state.visible_views():
            text = (view.text or "").strip()
            box = view.box
            if not text or box.height < 20 or box.bottom > state.height or box.right > state.width:
                continue
            total += 1
            inside = " ".join(ln.text for ln in lines if box.contains(ln.box.center))
            score = fuzz.ratio(text, inside, processor=utils.default_process)
            partial = fuzz.partial_ratio(text, inside, processor=utils.default_process)
            found += max(score, partial if len(inside) >= 0.6 * len(text) else 0) >= 80
    assert total >= 10
    assert found / total >= 0.75, f"OCR recall {found}/{total}"


def test_cache_returns_the_same_lines_without_rereading() -> None:
    inner = CountingOcr((OcrLine(text="Hi", box=Bounds(left=0, top=0, right=5, bottom=5), confidence=0.9),))
    cached = CachedOcrEngine(inner, max_entries=2)
    images = [np.full((20, 20, 3), v, dtype=np.uint8) for v in (0, 1, 2)]
    assert cached.read(images[0]) == cached.read(images[0].copy())
    assert inner.calls == 1 and cached.hits == 1
    cached.read(images[1])
    cached.read(images[2])  # evicts images[0]
    assert len(cached) == 2
    cached.read(images[0])
    assert inner.calls == 4


def test_paddle_backend_names_the_gpu_extra() -> None:
    with pytest.raises(BackendUnavailableError) as info:
        PaddleOcrEngine()
    assert "gpu" in info.value.hint
    with pytest.raises(BackendUnavailableError):
        create_ocr_engine(PerceptionSettings(ocr_backend="paddle"))
    assert create_ocr_engine(PerceptionSettings(ocr_backend="none")) is None


def test_ocr_runs_only_on_blind_regions(state_paths: list[Path]) -> None:
    # A screen with text everywhere in the hierarchy and no big images: no OCR call.
    canned = CountingOcr(())
    perceiver = Perceiver(ocr=canned)
    quiet = 0
    for path in state_paths[::40]:
        obs = observe_droidbot_state(path)
        parsed = parse_hierarchy(obs.hierarchy_xml, width=obs.width, height=obs.height)
        regions = find_blind_regions(parsed, obs.width, obs.height)
        before = canned.calls
        read = perceiver.perceive(obs).blind_regions
        # what was read is among the blind regions (photos and covered ones are left out)
        assert set(read) <= set(regions)
        assert canned.calls - before == min(1, len(read))
        quiet += not regions
    assert quiet > 0
    empty = "<hierarchy rotation='0'></hierarchy>"
    parsed = parse_hierarchy(empty, width=100, height=200)
    assert find_blind_regions(parsed, 100, 200) == (Bounds(left=0, top=0, right=100, bottom=200),)


def test_ocr_lines_merge_without_duplicating_hierarchy_text() -> None:
    xml = (
        "<hierarchy><node class='android.widget.Button' text='Sign in' clickable='true' "
        "bounds='[100,100][500,200]'/><node class='android.widget.ImageView' "
        "bounds='[0,300][1080,900]'/></hierarchy>"
    )
    parsed = parse_hierarchy(xml, width=1080, height=2160)
    lines = (
        OcrLine(text="Sign in", box=Bounds(left=200, top=120, right=400, bottom=180), confidence=0.99),
        OcrLine(text="50% OFF today", box=Bounds(left=100, top=400, right=700, bottom=480), confidence=0.95),
    )
    merged = merge_ocr_elements(parsed.elements, ocr_lines_to_elements(lines, parsed))
    texts = [e.text for e in merged]
    assert texts.count("Sign in") == 1 and "50% OFF today" in texts
    again = merge_ocr_elements(parsed.elements, ocr_lines_to_elements(lines, parsed))
    assert [e.id for e in again] == [e.id for e in merged]


def test_read_capture_finds_lines_in_a_tall_stitched_image(engine: CachedOcrEngine) -> None:
    image = Image.new("RGB", (1080, 4200), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(str(_FONT), 44)
    words = ["Big Mac 25 yuan", "Delivery in 30 minutes", "Rated 4.8 by 2000 people"]
    tops = [300, 1580, 3900]  # the middle one straddles a tile cut
    for word, top in zip(words, tops, strict=True):
        draw.text((80, top), word, fill="black", font=font)
    lines = read_capture(np.asarray(image), engine, tile_height=1600, overlap=160)
    read = [ln.text for ln in lines]
    for word, top in zip(words, tops, strict=True):
        match = [ln for ln in lines if fuzz.ratio(ln.text, word) >= 80]
        assert len(match) == 1, f"{word!r} read as {read}"
        assert abs(match[0].box.top - top) < 40


def test_freed_memory_goes_back_to_the_system_after_a_read() -> None:
    """What RapidOcrEngine does after each read: pages a large freed allocation held return."""
    from inference.perception.ocr import release_freed_memory

    def resident_kb() -> int:
        line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("VmRSS"))
        return int(line.split()[1])

    # Many mid-sized blocks (below glibc's mmap threshold), then all but the last freed: the
    # heap keeps the freed pages until malloc_trim hands them back.
    blocks = [bytearray(64 * 1024) for _ in range(3000)]  # ~190 MB on the heap
    keep = blocks[-1]
    del blocks
    before = resident_kb()
    release_freed_memory()
    after = resident_kb()
    assert keep and before - after > 100_000, (before, after)
