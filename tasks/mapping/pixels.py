"""Where two screenshots differ: a toast or snackbar drawn only in pixels shows up there."""

from __future__ import annotations

import io

from PIL import Image, ImageChops

from core.models import Bounds

__all__ = ["changed_box"]

_THRESHOLD = 24  # grey levels: anti-aliasing and cursor blinks stay below it
_MARGIN = 8  # pixels around the change, so OCR sees whole letters


def changed_box(before_png: bytes, after_png: bytes, *, ignore: Bounds | None = None) -> Bounds | None:
    """The box around every pixel that changed between two screenshots of one size; None when
    nothing changed, the sizes differ or either image cannot be read. ``ignore``: a box left out
    (the tapped element, drawn pressed or selected)."""
    try:
        with Image.open(io.BytesIO(before_png)) as a, Image.open(io.BytesIO(after_png)) as b:
            if a.size != b.size:
                return None
            diff = ImageChops.difference(a.convert("L"), b.convert("L")).point(
                lambda v: 255 if v > _THRESHOLD else 0)
            if ignore is not None:
                diff.paste(0, (ignore.left, ignore.top, ignore.right, ignore.bottom))
            box = diff.getbbox()
            width, height = b.size
    except (OSError, ValueError):
        return None
    if box is None:
        return None
    left, top, right, bottom = box
    return Bounds(left=max(0, left - _MARGIN), top=max(0, top - _MARGIN),
                  right=min(width, right + _MARGIN), bottom=min(height, bottom + _MARGIN))
