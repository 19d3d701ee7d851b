"""Fonts, glyph fallback and text measurement for the renderer and the layout.

Noto Sans CJK covers Latin, Chinese, Japanese and Korean in one face, so it
is the primary font; DejaVu is the primary when the CJK package is missing.
A character the primary font lacks (arrows such as ``⇀``) would draw as an
empty box, so text is split into runs, each drawn with the first installed
font that has a glyph for it (DejaVu Sans first, then every other font under
``/usr/share/fonts``). Coverage is checked once per font and character.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from device_farm.sim.errors import SimError

__all__ = ["draw_text", "font_for", "glyph_font", "iter_runs", "measure", "wrap_text"]

_FONTS_DIR = Path("/usr/share/fonts")
_REGULAR = (
    Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"),
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
)
_BOLD = (
    Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc"),
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"),
)
_FONT_SUFFIXES = (".ttf", ".otf", ".ttc")
_PROBE_PX = 24  # glyph coverage is the same at every size; one small probe is enough
# A code point no font maps (plane 16 private use): it draws the font's ".notdef" box.
_NOTDEF_PROBE = "\U0010fffd"
# A break is allowed after a space and around every CJK/fullwidth character.
_TOKEN_RE = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uff00-\uffef\u3000-\u303f]|[^\s\u2e80-\u9fff\uac00-\ud7af\uff00-\uffef\u3000-\u303f]+\s*|\s+")

# A run of text and the font file that draws it.
Run = tuple[str, Path]


@lru_cache(maxsize=2)
def _primary_path(bold: bool) -> Path:
    for path in _BOLD if bold else _REGULAR:
        if path.is_file():
            return path
    raise SimError(
        "no UI font found (looked for Noto Sans CJK and DejaVu Sans under /usr/share/fonts)",
        hint="install the Debian packages fonts-noto-cjk and fonts-dejavu-core",
    )


@lru_cache(maxsize=256)
def _font_at(path: Path, size_px: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(path), size_px)


def font_for(size_px: int, bold: bool = False) -> ImageFont.FreeTypeFont:
    """The primary UI font at ``size_px`` pixels."""
    return _font_at(_primary_path(bold), size_px)


@lru_cache(maxsize=2)
def _fallback_paths(bold: bool) -> tuple[Path, ...]:
    """Fonts tried after the primary one: the other UI faces first, then all installed fonts."""
    preferred = [p for p in (*(_BOLD if bold else _REGULAR), *_REGULAR) if p.is_file()]
    installed = sorted(p for p in _FONTS_DIR.rglob("*") if p.suffix.lower() in _FONT_SUFFIXES)
    ordered: list[Path] = []
    for path in (*preferred, *installed):
        if path != _primary_path(bold) and path not in ordered:
            ordered.append(path)
    return tuple(ordered)


def _probe(font: ImageFont.FreeTypeFont, char: str) -> bytes:
    image = Image.new("L", (_PROBE_PX * 2, _PROBE_PX * 2))
    ImageDraw.Draw(image).text((_PROBE_PX // 4, _PROBE_PX // 4), char, font=font, fill=255)
    return image.tobytes()


@lru_cache(maxsize=64)
def _notdef(path: Path) -> bytes:
    return _probe(_font_at(path, _PROBE_PX), _NOTDEF_PROBE)


@lru_cache(maxsize=8192)
def _covers(path: Path, char: str) -> bool:
    """Whether ``path`` has a glyph for ``char`` (it does not draw its ".notdef" box)."""
    try:
        return _probe(_font_at(path, _PROBE_PX), char) != _notdef(path)
    except OSError:  # an unreadable font file covers nothing
        return False


def _rides_along(char: str) -> bool:
    """Spaces, controls and combining marks stay in the run of the character before them."""
    return char.isspace() or unicodedata.category(char)[0] in ("C", "M") or char == "\u200d"


@lru_cache(maxsize=4096)
def glyph_font(char: str, bold: bool = False) -> Path:
    """The font file that draws ``char``: the primary font when it can, else the first that covers it."""
    primary = _primary_path(bold)
    if char.isascii() or _rides_along(char) or _covers(primary, char):
        return primary
    return next((p for p in _fallback_paths(bold) if _covers(p, char)), primary)


@lru_cache(maxsize=16384)
def iter_runs(text: str, bold: bool = False) -> tuple[Run, ...]:
    """``text`` split into runs that one font draws each (one run for all-primary text)."""
    primary = _primary_path(bold)
    if text.isascii():
        return ((text, primary),) if text else ()
    texts: list[str] = []
    paths: list[Path] = []
    for char in text:
        path = paths[-1] if paths and _rides_along(char) else glyph_font(char, bold)
        if paths and paths[-1] == path:
            texts[-1] += char
        else:
            texts.append(char)
            paths.append(path)
    return tuple(zip(texts, paths, strict=True))


def _iter_placed(text: str, size_px: int, bold: bool) -> Iterator[tuple[str, ImageFont.FreeTypeFont, int, bool]]:
    """Each run with its font, its x offset from the start, and whether it is the primary font."""
    primary = _primary_path(bold)
    x = 0.0
    for run, path in iter_runs(text, bold):
        font = _font_at(path, size_px)
        yield run, font, int(x + 0.5), path == primary
        x += font.getlength(run)


@lru_cache(maxsize=65536)
def measure(text: str, size_px: int, bold: bool = False) -> int:
    """Width of ``text`` in pixels, fallback glyphs included."""
    return int(sum(font.getlength(run) for run, font, _, _ in _iter_placed(text, size_px, bold)) + 0.5)


def draw_text(
    draw: ImageDraw.ImageDraw, xy: tuple[int, int], text: str, size_px: int, bold: bool,
    fill: tuple[int, int, int],
) -> None:
    """Draw ``text`` with its top-left at ``xy`` (as ``ImageDraw.text``), glyph fallback included."""
    x, y = xy
    baseline = y + font_for(size_px, bold).getmetrics()[0]
    for run, font, dx, is_primary in _iter_placed(text, size_px, bold):
        if is_primary:
            draw.text((x + dx, y), run, font=font, fill=fill)
        else:  # another face has other ascents: share the primary font's baseline instead
            draw.text((x + dx, baseline), run, font=font, fill=fill, anchor="ls")


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
