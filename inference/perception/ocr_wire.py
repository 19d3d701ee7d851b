"""What crosses loopback between a worker and the host's shared OCR service.

    POST /read     body: the image's raw RGB bytes (height x width x 3, row-major, uint8),
                   headers X-Image-Width / X-Image-Height; answers :class:`OcrReply` (JSON)
    GET  /health   answers :class:`OcrServiceHealth` (JSON)

Both need ``Authorization: Bearer <token>``. Raw pixels, not PNG: on loopback a
7.6 MB copy costs a few milliseconds, where encoding and decoding a PNG costs a
core tens of them, on a host whose CPU is the first thing a farm runs out of.
"""

from __future__ import annotations

import numpy as np

from core.models import Frozen
from inference.perception.image import RGBImage
from inference.perception.ocr import OcrLine

__all__ = [
    "HEALTH_PATH",
    "HEIGHT_HEADER",
    "READ_PATH",
    "WIDTH_HEADER",
    "OcrReply",
    "OcrServiceHealth",
    "decode_pixels",
    "encode_pixels",
]

READ_PATH = "/read"
HEALTH_PATH = "/health"
WIDTH_HEADER = "x-image-width"
HEIGHT_HEADER = "x-image-height"


class OcrReply(Frozen):
    """The lines the service read in one image."""

    lines: tuple[OcrLine, ...]


class OcrServiceHealth(Frozen):
    """What the service holds: its engine, how many reads it runs at once, reads so far."""

    engine: str
    concurrency: int
    reads: int


def encode_pixels(image: RGBImage) -> tuple[bytes, dict[str, str]]:
    """The body and size headers of a read of ``image``."""
    height, width = image.shape[:2]
    pixels = np.ascontiguousarray(image, dtype=np.uint8)
    return pixels.tobytes(), {WIDTH_HEADER: str(width), HEIGHT_HEADER: str(height)}


def decode_pixels(body: bytes, width: int, height: int) -> RGBImage:
    """The image ``body`` holds; ValueError when its length is not ``width * height * 3``."""
    if width <= 0 or height <= 0 or len(body) != width * height * 3:
        raise ValueError(f"{len(body)} bytes are not a {width}x{height} RGB image "
                         f"({width * height * 3} bytes)")
    return np.frombuffer(body, dtype=np.uint8).reshape(height, width, 3)
