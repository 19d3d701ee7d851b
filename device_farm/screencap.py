"""Raw ``screencap`` frames to PNG, on the host.

Phones encode PNG slowly (about 2 s a frame on emulators), so the driver asks
for the raw framebuffer and encodes here. The raw format is Android's
``screencap`` without ``-p``: little-endian ``width, height, format`` and,
since Android 9, a ``colorspace`` word; then ``width*height*4`` RGBA bytes.
"""

from __future__ import annotations

import struct

import cv2
import numpy as np

__all__ = ["RawFrame", "decode_raw_screencap", "encode_jpeg", "encode_png"]

_PIXEL_FORMAT_RGBA_8888 = 1
_PIXEL_FORMAT_RGBX_8888 = 2
_BYTES_PER_PIXEL = 4


class RawFrame:
    """A decoded framebuffer: RGBA pixels as an ``(height, width, 4)`` uint8 array."""

    __slots__ = ("height", "pixels", "width")

    def __init__(self, width: int, height: int, pixels: np.ndarray) -> None:
        self.width = width
        self.height = height
        self.pixels = pixels


def decode_raw_screencap(data: bytes) -> RawFrame:
    """Parse ``screencap`` raw output; raises ValueError when it is not a frame."""
    if len(data) < 12:
        raise ValueError(f"screencap returned {len(data)} bytes, too short for a frame header")
    width, height, pixel_format = struct.unpack_from("<III", data, 0)
    if width == 0 or height == 0 or width > 10_000 or height > 10_000:
        raise ValueError(f"screencap header says {width}x{height}: not a raw frame")
    if pixel_format not in (_PIXEL_FORMAT_RGBA_8888, _PIXEL_FORMAT_RGBX_8888):
        raise ValueError(f"screencap pixel format {pixel_format} is not RGBA_8888/RGBX_8888")
    body = width * height * _BYTES_PER_PIXEL
    # The header is 12 bytes before Android 9 and 16 (with colorspace) after.
    header = len(data) - body
    if header not in (12, 16):
        raise ValueError(
            f"screencap returned {len(data)} bytes for a {width}x{height} frame "
            f"(expected {body + 12} or {body + 16})"
        )
    pixels = np.frombuffer(data, dtype=np.uint8, count=body, offset=header)
    return RawFrame(width, height, pixels.reshape(height, width, _BYTES_PER_PIXEL))


def encode_png(frame: RawFrame, compression: int = 1) -> bytes:
    """PNG bytes (RGB, alpha dropped), tuned for speed on UI screens.

    libpng's adaptive filter choice costs more than the compression itself;
    the fixed "up" filter keeps flat UI areas nearly free and is about 4x faster.
    """
    bgr = cv2.cvtColor(frame.pixels, cv2.COLOR_RGBA2BGR)
    ok, buffer = cv2.imencode(".png", bgr, [
        cv2.IMWRITE_PNG_COMPRESSION, compression,
        cv2.IMWRITE_PNG_FILTER, cv2.IMWRITE_PNG_FILTER_UP,
    ])
    if not ok:
        raise ValueError(f"PNG encoding of a {frame.width}x{frame.height} frame failed")
    return buffer.tobytes()


def encode_jpeg(frame: RawFrame, max_width: int = 540, quality: int = 70) -> bytes:
    """JPEG bytes, scaled down to ``max_width`` (aspect kept): a live view's frame.

    Scaled first, then converted, so the colour conversion touches a quarter of the
    pixels: a few milliseconds for a 1080x2340 screen, far below a screenshot's cost.
    """
    pixels = frame.pixels
    if frame.width > max_width:
        height = max(1, round(frame.height * max_width / frame.width))
        pixels = cv2.resize(pixels, (max_width, height), interpolation=cv2.INTER_AREA)
    ok, buffer = cv2.imencode(".jpg", cv2.cvtColor(pixels, cv2.COLOR_RGBA2BGR),
                              [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError(f"JPEG encoding of a {frame.width}x{frame.height} frame failed")
    return buffer.tobytes()
