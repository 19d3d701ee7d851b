"""Screenshots for vision models: downscaled to ``max_pixels`` before sending, tokens estimated.

vLLM applies the processor's ``max_pixels`` it was started with
(``--mm-processor-kwargs``) and ignores a per-request value, so the client
downscales every image itself to the role's ``max_pixels``: the bytes on the
wire shrink and the token count is known in advance. Qwen2.5-VL resizes an
image to multiples of 28 pixels within ``[min_pixels, max_pixels]`` and spends
one token per 28x28 patch (14-pixel patches merged 2x2):
:func:`estimate_image_tokens` is that rule (Qwen's ``smart_resize``).
"""

from __future__ import annotations

import io
import math

from PIL import Image
from pydantic import BaseModel, ConfigDict

from inference.perception.image import decode_screenshot

__all__ = ["MIN_PIXELS", "PATCH", "FittedImage", "estimate_image_tokens", "fit_dimensions", "fit_image"]

PATCH = 28  # pixels per visual token side (Qwen2-VL / Qwen2.5-VL: 14-pixel patches, 2x2 merged)
MIN_PIXELS = 4 * PATCH * PATCH  # the processor's default min_pixels (3,136)


class FittedImage(BaseModel):
    """An image as it is sent: PNG bytes, its size, and the visual tokens it will cost."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    png: bytes
    width: int
    height: int
    tokens: int


def fit_dimensions(width: int, height: int, max_pixels: int, min_pixels: int = MIN_PIXELS) -> tuple[int, int]:
    """The size Qwen2.5-VL resizes a ``width`` x ``height`` image to (its smart_resize rule)."""
    h_bar = max(PATCH, round(height / PATCH) * PATCH)
    w_bar = max(PATCH, round(width / PATCH) * PATCH)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = max(PATCH, math.floor(height / beta / PATCH) * PATCH)
        w_bar = max(PATCH, math.floor(width / beta / PATCH) * PATCH)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / PATCH) * PATCH
        w_bar = math.ceil(width * beta / PATCH) * PATCH
    return w_bar, h_bar


def estimate_image_tokens(width: int, height: int, max_pixels: int, min_pixels: int = MIN_PIXELS) -> int:
    """Visual tokens Qwen2.5-VL spends on a ``width`` x ``height`` image: one per 28x28 patch."""
    if width <= 0 or height <= 0:
        return 0
    w_bar, h_bar = fit_dimensions(width, height, max_pixels, min_pixels)
    return (w_bar // PATCH) * (h_bar // PATCH)


def fit_image(data: bytes, max_pixels: int) -> FittedImage:
    """``data`` as PNG of at most ``max_pixels`` pixels (aspect kept), with its token estimate."""
    image = Image.fromarray(decode_screenshot(data, where="a screenshot for a vision model"))
    width, height = image.size
    if width * height > max_pixels:
        # Straight to the size the server's processor would resize it to: nothing is
        # resized twice, and the estimate below is exactly what the server spends.
        width, height = fit_dimensions(width, height, max_pixels)
        image = image.resize((width, height), Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return FittedImage(png=buffer.getvalue(), width=width, height=height,
                       tokens=estimate_image_tokens(width, height, max_pixels))
