"""Small JPEG thumbnails of screens (the exploration map, the farm's phone cards)."""

from __future__ import annotations

import io

from PIL import Image

__all__ = ["thumbnail_jpeg"]


def thumbnail_jpeg(png: bytes, width: int, quality: int = 80) -> bytes:
    """``png`` scaled to ``width`` pixels wide (aspect kept), as JPEG."""
    with Image.open(io.BytesIO(png)) as image:
        height = max(1, round(image.height * width / image.width))
        small = image.convert("RGB").resize((width, height), Image.Resampling.BILINEAR)
    out = io.BytesIO()
    small.save(out, "JPEG", quality=quality)
    return out.getvalue()
