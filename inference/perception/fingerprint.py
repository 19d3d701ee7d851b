"""Screen fingerprint: equal for "the same page again", blind to clocks and badges.

Hashes what identifies a page (element classes, resource ids, coarse boxes,
texts) after dropping the status bar and small number badges and turning
clock times and "5 min ago" into placeholders. Prices and titles keep their
digits: a different results list is a different page.
"""

from __future__ import annotations

import hashlib
import re

from core.models import ElementSource, UIElement

__all__ = ["fingerprint_screen"]

_STATUS_BAR_SHARE = 0.04  # of the screen height; status bars are 24-28 dp
_GRID = 50  # boxes quantised to 1/50 of the screen: a pixel of jitter is ignored
_BADGE = re.compile(r"^(?:\d{1,3}\+?|[•·]|new)$", re.IGNORECASE)
_CLOCK = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\s*(?:[AaPp][Mm])?")
_RELATIVE = re.compile(
    r"\b\d+\s*(?:s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?|d|days?)\b(?:\s+ago)?",
    re.IGNORECASE,
)


def _is_noise(element: UIElement, width: int, height: int) -> bool:
    if element.resource_id.startswith("com.android.systemui:"):
        return True
    if element.bounds.bottom <= _STATUS_BAR_SHARE * height:
        return True
    small = element.bounds.width < 0.12 * width and element.bounds.height < 0.05 * height
    return small and bool(_BADGE.match(element.label.strip()))


def _normalise(text: str) -> str:
    text = _CLOCK.sub("#:#", text)
    return _RELATIVE.sub("#t", text)


def fingerprint_screen(
    elements: tuple[UIElement, ...], *, package: str, width: int, height: int
) -> str:
    """A 16-hex-digit hash of the page's structure and content (hierarchy elements only).

    OCR and detector elements are left out: their boxes jitter between frames.
    """
    rows = []
    for element in elements:
        if element.source is not ElementSource.HIERARCHY or _is_noise(element, width, height):
            continue
        b = element.bounds
        box = (
            b.left * _GRID // width, b.top * _GRID // height,
            b.right * _GRID // width, b.bottom * _GRID // height,
        )
        rows.append(
            f"{element.class_name}|{element.resource_id}|{box}|{_normalise(element.text)}|"
            f"{_normalise(element.content_desc)}|{element.checked}|{element.selected}"
        )
    digest = hashlib.blake2b(digest_size=8)
    digest.update(package.encode())
    for row in sorted(rows):
        digest.update(b"\n" + row.encode())
    return digest.hexdigest()
