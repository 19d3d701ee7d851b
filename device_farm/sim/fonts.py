"""Fonts and text measurement for the renderer and the layout.

Noto Sans CJK covers Latin, Chinese, Japanese and Korean in one face, so a
single font keeps mixed-language lines simple; DejaVu is the fallback when
the CJK package is missing (then CJK text draws as boxes, and we say so).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from PIL import ImageFont

from device_farm.sim.errors import SimError

__all__ = ["font_for", "measure", "wrap_text"]

_REGULAR = (
    Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"),
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
)
_BOLD = (
    Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc"),
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"),
)
# A break is allowed after a space and around every CJK/fullwidth character.
_TOKEN_RE = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uff00-\uffef\u3000-\u303f]|[^\s\u2e80-\u9fff\uac00-\ud7af\uff00-\uffef\u3000-\u303f]+\s*|\s+")


@lru_cache(maxsize=64)
def font_for(size_px: int, bold: bool = False) -> ImageFont.FreeTypeFont:
    """The UI font at ``size_px`` pixels."""
    for path in _BOLD if bold else _REGULAR:
        if path.is_file():
            return ImageFont.truetype(str(path), size_px)
    raise SimError(
        "no UI font found (looked for Noto Sans CJK and DejaVu Sans under /usr/share/fonts)",
        hint="install the Debian packages fonts-noto-cjk and fonts-dejavu-core",
    )


@lru_cache(maxsize=65536)
def measure(text: str, size_px: int, bold: bool = False) -> int:
    """Width of ``text`` in pixels."""
    return int(font_for(size_px, bold).getlength(text) + 0.5)


@lru_cache(maxsize=16384)
def wrap_text(
    text: str, size_px: int, width: int, bold: bool = False, max_lines: int | None = None
) -> tuple[str, ...]:
    """Greedy word wrap (per character for CJK); clamps to ``max_lines`` with an ellipsis."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        current = ""
        for token in _TOKEN_RE.findall(paragraph):
            candidate = current + token
            if current and measure(candidate.rstrip(), size_px, bold) > width:
                lines.append(current.rstrip())
                current = token.lstrip()
            else:
                current = candidate
            while measure(current.rstrip(), size_px, bold) > width and len(current) > 1:
                # one word wider than the line: hard-break it
                cut = len(current) - 1
                while cut > 1 and measure(current[:cut], size_px, bold) > width:
                    cut -= 1
                lines.append(current[:cut])
                current = current[cut:]
        lines.append(current.rstrip())
    if max_lines is not None and len(lines) > max_lines:
        kept = list(lines[:max_lines])
        last = kept[-1]
        while last and measure(last + "…", size_px, bold) > width:
            last = last[:-1]
        kept[-1] = last + "…"
        return tuple(kept)
    return tuple(lines)
