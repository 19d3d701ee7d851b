"""One observation in, one perceived screen out: what runs, in which order.

1. parse the hierarchy (always; ~1 ms);
2. drop the elements covered by a drawer, dialog or bar drawn over them (z-order from the
   hierarchy, checked on a quarter-size decode of the pixels only when there are candidates);
3. find blind regions and OCR only those (skipped when none, or OCR is off), leaving out regions
   under a cover and photos (many colours on the thumbnail) unless the screen has no other text;
4. run the detector on the screenshot (only when enabled);
5. partition layout blocks and fingerprint the page.

The screenshot is decoded only when OCR or the detector needs pixels.
"""

from __future__ import annotations

import time

from pydantic import BaseModel, ConfigDict

from core.config import PerceptionSettings
from core.models import Bounds, Screen
from inference.perception.blocks import BlockPartition, partition_blocks
from inference.perception.detector import Detector, create_detector, detections_to_elements
from inference.perception.fingerprint import fingerprint_screen
from inference.perception.hierarchy import ParsedHierarchy, ViewTree, parse_hierarchy
from inference.perception.image import RGBImage, decode_screenshot, decode_thumbnail
from inference.perception.observation import Observation
from inference.perception.occlusion import CoverCheck, find_covered, union_share
from inference.perception.ocr import OcrEngine
from inference.perception.ocr_backends import create_ocr_engine
from inference.perception.ocr_regions import (
    find_blind_regions,
    is_photo,
    merge_ocr_elements,
    ocr_lines_to_elements,
    read_blind_regions,
)

__all__ = ["Perceiver", "Perception", "PerceptionTimings"]


class PerceptionTimings(BaseModel):
    """Milliseconds spent per stage of one perception."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    parse_ms: float = 0.0
    occlusion_ms: float = 0.0
    ocr_ms: float = 0.0
    detector_ms: float = 0.0
    layout_ms: float = 0.0

    @property
    def total_ms(self) -> float:
        return self.parse_ms + self.occlusion_ms + self.ocr_ms + self.detector_ms + self.layout_ms


class Perception(BaseModel):
    """The perceived screen plus what ranking and descriptions need."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    screen: Screen
    tree: ViewTree
    blocks: BlockPartition
    blind_regions: tuple[Bounds, ...] = ()
    covered: tuple[str, ...] = ()  # element ids left out: covered by a view drawn over them
    ocr_elements: int = 0  # OCR lines kept after de-duplication against the hierarchy
    detector_elements: int = 0
    timings: PerceptionTimings = PerceptionTimings()


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


class _Thumbnail:
    """The quarter-size screenshot, decoded on first use and once."""

    def __init__(self, screenshot: bytes) -> None:
        self._screenshot = screenshot
        self._image: RGBImage | None = None
        self._read = False

    def read(self) -> RGBImage | None:
        if not self._read:
            self._image, self._read = decode_thumbnail(self._screenshot), True
        return self._image


class Perceiver:
    """Turns :class:`Observation`s into :class:`Perception`s with the configured backends."""

    def __init__(
        self,
        settings: PerceptionSettings | None = None,
        *,
        ocr: OcrEngine | None = None,
        detector: Detector | None = None,
    ) -> None:
        self.settings = settings or PerceptionSettings()
        self.ocr = ocr if ocr is not None else create_ocr_engine(self.settings)
        self.detector = detector if detector is not None else create_detector(self.settings)

    def read_text_in(self, screenshot_png: bytes, box: Bounds) -> str:
        """The text drawn inside ``box`` of a screenshot (OCR); "" when OCR is off or finds none.

        The risk gate reads an element that has no label this way (an image that says "PAY").
        """
        if self.ocr is None or box.area <= 0 or not screenshot_png:
            return ""
        image = decode_screenshot(screenshot_png, where="the element the agent would press")
        return " ".join(line.text for line in read_blind_regions(image, (box,), self.ocr))
    def _regions_to_read(self, parsed: ParsedHierarchy, observation: Observation, check: CoverCheck,
                         thumbnail: _Thumbnail) -> tuple[Bounds, ...]:
        """Blind regions worth OCR: not under a cover, and not photos (unless the screen has no text)."""
        width, height = observation.width, observation.height
        regions = find_blind_regions(parsed, width, height)
        regions = tuple(r for r in regions if union_share(r, list(check.covers)) < 0.5)
        whole_screen = len(regions) == 1 and regions[0].area >= width * height
        if self.settings.skip_photo_ocr and regions and not whole_screen:
            image = thumbnail.read()
            if image is not None:
                regions = tuple(r for r in regions if not is_photo(image, r))
        return regions

    def perceive(self, observation: Observation, *, use_ocr: bool = True) -> Perception:
        """Perceive one screen; ``use_ocr=False`` skips OCR for this call only."""
        where = observation.where
        start = time.perf_counter()
        parsed = parse_hierarchy(
            observation.hierarchy_xml, width=observation.width, height=observation.height,
            where=where,
        )
        parse_ms = _ms(start)
        start = time.perf_counter()
        check = CoverCheck(covered=(), candidates=0, pixels_read=False)
        thumbnail = _Thumbnail(observation.screenshot_png)
        if self.settings.occlusion:
            check = find_covered(parsed, observation.width, observation.height, thumbnail.read)
        if check.covered:
            hidden = set(check.covered)
            parsed = parsed.model_copy(update={"elements": tuple(e for e in parsed.elements if e.id not in hidden)})
        occlusion_ms = _ms(start)
        elements = parsed.elements
        image: RGBImage | None = None
        regions: tuple[Bounds, ...] = ()
        ocr_count = detector_count = 0
        ocr_ms = detector_ms = 0.0
        if use_ocr and self.ocr is not None:
            start = time.perf_counter()
            regions = self._regions_to_read(parsed, observation, check, thumbnail)
            if regions:
                image = decode_screenshot(observation.screenshot_png, where=where)
                found = ocr_lines_to_elements(read_blind_regions(image, regions, self.ocr), parsed)
                merged = merge_ocr_elements(elements, found)
                ocr_count = len(merged) - len(elements)
                elements = merged
            ocr_ms = _ms(start)
        if self.detector is not None:
            start = time.perf_counter()
            if image is None:
                image = decode_screenshot(observation.screenshot_png, where=where)
            extra = detections_to_elements(self.detector.detect(image), elements)
            detector_count = len(extra)
            elements = elements + extra
            detector_ms = _ms(start)
        start = time.perf_counter()
        blocks = partition_blocks(elements, parsed.tree)
        screen = Screen(
            device=observation.serial,
            package=observation.package,
            activity=observation.activity,
            width=observation.width,
            height=observation.height,
            elements=elements,
            fingerprint=fingerprint_screen(
                elements, package=observation.package, width=observation.width,
                height=observation.height,
            ),
        )
        layout_ms = _ms(start)
        return Perception(
            screen=screen, tree=parsed.tree, blocks=blocks, blind_regions=regions, covered=check.covered,
            ocr_elements=ocr_count, detector_elements=detector_count,
            timings=PerceptionTimings(
                parse_ms=parse_ms, occlusion_ms=occlusion_ms, ocr_ms=ocr_ms, detector_ms=detector_ms, layout_ms=layout_ms
            ),
        )
