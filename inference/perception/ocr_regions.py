"""OCR only where the hierarchy is blind, and OCR lines merged into the element list.

Blind regions: large image nodes without text or description (banners,
posters, text baked into pictures), WebViews and canvases whose subtree
exposes no text, and the whole screen when the hierarchy is empty or secure.
Stitched captures (evidence for citations) are read whole, in tiles, because
the OCR detector shrinks very tall images until small text disappears.
"""

from __future__ import annotations

import hashlib

import numpy as np
from rapidfuzz import fuzz, utils

from core.models import Bounds, ElementSource, UIElement
from inference.perception.hierarchy import ParsedHierarchy, ViewNode
from inference.perception.image import RGBImage, crop_image
from inference.perception.ocr import OcrEngine, OcrLine

__all__ = [
    "find_blind_regions",
    "is_photo",
    "merge_ocr_elements",
    "ocr_lines_to_elements",
    "read_blind_regions",
    "read_capture",
    "read_regions",
]

_IMAGE_CLASSES = ("ImageView", "Image", "ImageButton")
_OPAQUE_CLASSES = ("WebView", "SurfaceView", "TextureView", "GLSurfaceView", "Canvas")
_MIN_IMAGE_SHARE = 0.01  # of the screen: icons are smaller and rarely carry words
_MIN_IMAGE_SIDE = 48
_MAX_REGIONS = 12
_CROP_MAX_SHARE = 0.3  # one region above this share of the screen: read the screen once
_DUPLICATE_OVERLAP = 0.5  # share of the OCR box covered by a hierarchy element
_DUPLICATE_SCORE = 80.0  # rapidfuzz partial ratio, 0..100
_PHOTO_COLOURS = 160  # colours (16 levels per channel) covering 90 % of a photo's pixels, at least


def _short_class(node: ViewNode) -> str:
    return node.class_name.rsplit(".", 1)[-1]


def _is_blind_image(node: ViewNode, screen_area: int) -> bool:
    return (
        _short_class(node) in _IMAGE_CLASSES
        and not node.labelled
        and node.bounds.area >= _MIN_IMAGE_SHARE * screen_area
        and node.bounds.width >= _MIN_IMAGE_SIDE
        and node.bounds.height >= _MIN_IMAGE_SIDE
    )


def find_blind_regions(parsed: ParsedHierarchy, width: int, height: int) -> tuple[Bounds, ...]:
    """Screen regions the hierarchy cannot read, largest first, nested ones dropped."""
    screen = Bounds(left=0, top=0, right=width, bottom=height)
    labelled = [e for e in parsed.elements if e.label]
    if not labelled:  # empty, secure or pure-canvas screen: read it all
        return (screen,)
    screen_area = width * height
    candidates: list[Bounds] = []
    for node in parsed.tree.nodes:
        if node.bounds.area == 0:
            continue
        opaque = any(node.class_name.endswith(c) for c in _OPAQUE_CLASSES) and not any(
            node.bounds.intersection(e.bounds) >= 0.5 * e.bounds.area for e in labelled
        )
        if opaque or _is_blind_image(node, screen_area):
            candidates.append(node.bounds)
    candidates.sort(key=lambda b: (-b.area, b.top, b.left))
    kept: list[Bounds] = []
    for box in candidates:
        if all(box.intersection(k) < 0.8 * box.area for k in kept):
            kept.append(box)
    return tuple(kept[:_MAX_REGIONS])


def is_photo(thumbnail: RGBImage, region: Bounds, *, scale: int = 4) -> bool:
    """Whether ``region`` of a 1/``scale`` screenshot is a photo: many colours, no flat areas.

    Banners, posters and text drawn into pictures sit on a few flat colours;
    a photo needs many (at 16 levels per channel, at least 160 colours to cover
    90 % of its pixels). Decided on the thumbnail in well under a millisecond.
    """
    crop = thumbnail[region.top // scale : region.bottom // scale, region.left // scale : region.right // scale]
    if crop.size == 0:
        return False
    levels = (crop // 16).reshape(-1, 3).astype(np.int32)
    counts = np.sort(np.bincount(levels[:, 0] * 256 + levels[:, 1] * 16 + levels[:, 2], minlength=4096))[::-1]
    needed = int(np.searchsorted(np.cumsum(counts), 0.9 * counts.sum())) + 1
    return needed >= _PHOTO_COLOURS


def read_regions(
    image: RGBImage, regions: tuple[Bounds, ...], engine: OcrEngine
) -> tuple[OcrLine, ...]:
    """OCR each region of ``image``; lines come back in screen coordinates."""
    lines: list[OcrLine] = []
    for region in regions:
        for line in engine.read(crop_image(image, region)):
            lines.append(line.model_copy(update={"box": line.box.shifted(region.left, region.top)}))
    return tuple(lines)


def read_blind_regions(
    image: RGBImage, regions: tuple[Bounds, ...], engine: OcrEngine
) -> tuple[OcrLine, ...]:
    """OCR the blind regions at the lowest cost: one crop, or one full read filtered.

    RapidOCR's detector upscales a small crop to at least 736 px on its short
    side, so every crop costs about half a full screen: with two or more
    regions (or one big one) a single full-screen read, kept only inside the
    regions, is cheaper and is what the cache sees again on the next visit.
    """
    if not regions:
        return ()
    height, width = image.shape[:2]
    total = sum(r.area for r in regions)
    if len(regions) == 1 and total < _CROP_MAX_SHARE * width * height:
        return read_regions(image, regions, engine)
    screen = Bounds(left=0, top=0, right=width, bottom=height)
    return tuple(
        line for line in read_regions(image, (screen,), engine)
        if any(r.contains(line.box.center) for r in regions)
    )


def read_capture(
    image: RGBImage, engine: OcrEngine, *, tile_height: int = 1600, overlap: int = 160
) -> tuple[OcrLine, ...]:
    """OCR a whole (possibly very tall, stitched) image in overlapping tiles.

    A line seen in two tiles (in the overlap) is kept once, from the tile
    where it sits farther from the cut.
    """
    height, width = image.shape[:2]
    lines: list[OcrLine] = []
    top = 0
    while True:
        bottom = min(height, top + tile_height)
        tile = Bounds(left=0, top=top, right=width, bottom=bottom)
        for line in read_regions(image, (tile,), engine):
            duplicate = next(
                (i for i, seen in enumerate(lines)
                 if seen.box.iou(line.box) > 0.5 and seen.text == line.text),
                None,
            )
            if duplicate is None:
                lines.append(line)
        if bottom >= height:
            break
        top = bottom - overlap
    return tuple(sorted(lines, key=lambda ln: (ln.box.top, ln.box.left)))


def ocr_lines_to_elements(
    lines: tuple[OcrLine, ...], parsed: ParsedHierarchy | None = None
) -> tuple[UIElement, ...]:
    """OCR lines as ``UIElement``s (``source=ocr``) with ids stable for equal lines.

    An OCR element's parent is the smallest hierarchy element containing it,
    so a tap on a word in a banner lands on the banner's clickable node.
    """
    containers = sorted(parsed.elements, key=lambda e: e.bounds.area) if parsed else []
    elements = []
    for line in lines:
        # Quantised box: a one-pixel jitter between frames keeps the id.
        b = line.box
        key = f"{line.text}|{b.left // 8},{b.top // 8},{b.right // 8},{b.bottom // 8}"
        parent = next(
            (e.id for e in containers if e.bounds.intersection(b) >= 0.8 * max(1, b.area)), None
        )
        elements.append(
            UIElement(
                id="o" + hashlib.blake2b(key.encode(), digest_size=5).hexdigest(),
                class_name="ocr.TextLine",
                text=line.text,
                bounds=b,
                source=ElementSource.OCR,
                parent_id=parent,
                confidence=line.confidence,
            )
        )
    return tuple(elements)


def _duplicates(ocr: UIElement, element: UIElement) -> bool:
    if not element.label or ocr.bounds.area == 0:
        return False
    if element.bounds.intersection(ocr.bounds) < _DUPLICATE_OVERLAP * ocr.bounds.area:
        return False
    return (
        fuzz.partial_ratio(ocr.text, element.label, processor=utils.default_process)
        >= _DUPLICATE_SCORE
    )


def merge_ocr_elements(
    hierarchy: tuple[UIElement, ...], ocr: tuple[UIElement, ...]
) -> tuple[UIElement, ...]:
    """Hierarchy elements plus the OCR elements that add something new.

    An OCR line is a duplicate when a hierarchy element covers most of its box
    and its label fuzzily contains the line (IoU alone fails: a button's box
    is much larger than its text). Duplicate OCR lines within ``ocr`` are
    dropped too.
    """
    kept: list[UIElement] = []
    seen_ids = {e.id for e in hierarchy}
    for candidate in ocr:
        if candidate.id in seen_ids:
            continue
        if any(_duplicates(candidate, e) for e in hierarchy):
            continue
        kept.append(candidate)
        seen_ids.add(candidate.id)
    return hierarchy + tuple(kept)
