"""Screenshot bytes <-> RGB arrays, and the content hash OCR results are cached by."""

from __future__ import annotations

import hashlib
import io

import cv2
import numpy as np
from numpy.typing import NDArray
from PIL import Image, UnidentifiedImageError

from core.models import Bounds
from inference.errors import ScreenshotError

__all__ = ["RGBImage", "crop_image", "decode_screenshot", "decode_thumbnail", "encode_png", "hash_image"]

RGBImage = NDArray[np.uint8]  # height x width x 3


def decode_screenshot(data: bytes, *, where: str = "device ?, step ?") -> RGBImage:
    """Decode PNG/JPEG bytes into an RGB array; raises :class:`ScreenshotError`."""
    if not data:
        raise ScreenshotError(
            f"{where}: the screenshot is empty",
            hint="the screen may be secure (FLAG_SECURE) or the device asleep; wake it and retry",
        )
    try:
        with Image.open(io.BytesIO(data)) as img:
            return np.asarray(img.convert("RGB"), dtype=np.uint8)
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise ScreenshotError(
            f"{where}: the screenshot is not a readable image ({exc})",
            hint="take the screenshot again with `screencap -p`",
        ) from exc


def decode_thumbnail(data: bytes, *, scale: int = 4) -> RGBImage | None:
    """The screenshot at 1/``scale`` size, cheaply (JPEG decodes at that size); None if unreadable."""
    flag = {2: cv2.IMREAD_REDUCED_COLOR_2, 4: cv2.IMREAD_REDUCED_COLOR_4, 8: cv2.IMREAD_REDUCED_COLOR_8}[scale]
    if not data:
        return None
    decoded = cv2.imdecode(np.frombuffer(data, np.uint8), flag)
    if decoded is None:
        return None
    return np.ascontiguousarray(decoded[:, :, ::-1])


def encode_png(image: RGBImage) -> bytes:
    """PNG bytes of an RGB array."""
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="PNG")
    return buffer.getvalue()


def crop_image(image: RGBImage, box: Bounds) -> RGBImage:
    """The pixels inside ``box`` (clamped to the image)."""
    height, width = image.shape[:2]
    top, bottom = max(0, box.top), min(height, box.bottom)
    left, right = max(0, box.left), min(width, box.right)
    return image[top:bottom, left:right]


def hash_image(image: RGBImage) -> str:
    """A content hash: equal pixels (and shape) give equal hashes."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(repr(image.shape).encode())
    digest.update(np.ascontiguousarray(image).tobytes())
    return digest.hexdigest()
