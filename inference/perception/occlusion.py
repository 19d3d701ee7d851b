"""Elements a person cannot see: covered by a drawer, dialog, sheet or bar drawn over them.

A view hierarchy keeps the views under an open drawer marked visible. Android
draws a parent's children in order, so a view is drawn over every view that
comes before it in drawing order and is not its ancestor. Drawing order is
document order except where the dump reorders for accessibility: a
``DrawerLayout`` lists its drawers first but draws them over its content (the
drawers are raised). That gives the candidates, from the hierarchy alone: an
element at least half under a later-drawn view (a sibling of it or of an
ancestor, or a later window).

The pixels decide, cheaply (a quarter-size decode, only when there are
candidates): where a covering view draws no content of its own (its leaf
views' boxes left out), an opaque view (a drawer, a dialog panel, a bar)
shows one plain colour, while a transparent one (a full-screen holder of a
floating button) shows the page under it, texts and pictures. A cover hides
an element when it is plain as a whole and plain over the element too (an
element drawn on top after all, or seen through, shows its own text and
icons there). An element at least half hidden is covered.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from core.models import Bounds, UIElement
from inference.perception.hierarchy import ParsedHierarchy, ViewNode
from inference.perception.image import RGBImage

__all__ = ["CoverCheck", "drawing_order", "find_covered", "union_share"]

_MIN_COVER_SHARE = 0.5  # of the element's box under covers
_MIN_COVER_AREA = 0.01  # of the screen: smaller views (badges, icons) are not covers
_SCALE = 4  # the pixels are read at a quarter size
_INK_TOLERANCE = 24  # per channel, 0..255
_MAX_INK = 0.02  # share of off-colour pixels a plain cover shows
_SAMPLE = 4096  # pixels of a cover's background sampled to call it plain
_MAX_GLYPH_PIXELS = 4  # off-colour pixels (quarter size) over an element's texts that JPEG noise explains
_MIN_FREE_SHARE = 0.2  # less free area than this: the cover's own content is over the element


@dataclass(frozen=True)
class CoverCheck:
    """What deciding one screen cost and found (for benchmarks and traces)."""

    covered: tuple[str, ...]  # element ids
    candidates: int  # elements the hierarchy put under a later-drawn view
    pixels_read: bool  # whether the screenshot was decoded
    covers: tuple[Bounds, ...] = ()  # the opaque views that hid something


def drawing_order(nodes: tuple[ViewNode, ...]) -> tuple[list[ViewNode], list[int]]:
    """The nodes in the order Android draws them, and where each one's subtree ends.

    Preorder, with a ``DrawerLayout``'s drawers after its content (the largest
    child). ``end[p]`` is the position just past node ``p``'s subtree, so the
    nodes drawn over node ``p`` are those from ``end[p]`` on.
    """
    children: dict[str | None, list[int]] = {}
    for index, node in enumerate(nodes):
        children.setdefault(node.parent_id, []).append(index)
    order: list[int] = []
    todo = list(reversed(children.get(None, [])))
    while todo:
        index = todo.pop()
        order.append(index)
        kids = children.get(nodes[index].id, [])
        if kids and nodes[index].class_name.endswith("DrawerLayout"):
            content = max(kids, key=lambda k: nodes[k].bounds.area)
            kids = [content, *(k for k in kids if k != content)]
        todo.extend(reversed(kids))
    drawn = [nodes[i] for i in order]
    end = list(range(1, len(drawn) + 1))
    for i in range(len(drawn) - 1, -1, -1):
        j = i + 1
        while j < len(drawn) and drawn[j].depth > drawn[i].depth:
            j = end[j]
        end[i] = j
    return drawn, end


def find_covered(
    parsed: ParsedHierarchy, width: int, height: int, load_pixels: Callable[[], RGBImage | None],
) -> CoverCheck:
    """The elements at least half covered by opaque views drawn over them.

    ``load_pixels`` returns the screenshot at a quarter size (or None when it
    cannot be read: then nothing is called covered, the hierarchy's word stands).
    """
    drawn, end = drawing_order(parsed.tree.nodes)  # positions below are in drawing order
    first: dict[str, int] = {}
    for position, node in enumerate(drawn):
        if node.element_id is not None and node.element_id not in first:
            first[node.element_id] = position
    minimum = _MIN_COVER_AREA * width * height
    covers = np.array([p for p, n in enumerate(drawn) if n.bounds.area >= minimum], dtype=np.int64)
    boxes = np.array([_box(drawn[p].bounds) for p in covers], dtype=np.int64).reshape(-1, 4)
    pending: list[tuple[UIElement, list[int]]] = []
    for element in parsed.elements:
        found = first.get(element.id)
        if found is None or element.bounds.area == 0:
            continue
        left, top, right, bottom = _box(element.bounds)
        hit = ((covers >= end[found]) & (boxes[:, 0] < right) & (boxes[:, 2] > left)
               & (boxes[:, 1] < bottom) & (boxes[:, 3] > top))
        over = [int(c) for c in covers[hit]]
        if over and union_share(element.bounds, [drawn[c].bounds for c in over]) >= _MIN_COVER_SHARE:
            pending.append((element, over))
    if not pending:
        return CoverCheck(covered=(), candidates=0, pixels_read=False)
    image = load_pixels()
    if image is None:
        return CoverCheck(covered=(), candidates=len(pending), pixels_read=False)
    leaves = [n.bounds if end[p] == p + 1 and n.bounds.area > 0 else None for p, n in enumerate(drawn)]
    # the drawing position of the last leaf drawn at each quarter-size pixel (-1: none)
    topmost = np.full(image.shape[:2], -1, dtype=np.int32)
    for position, leaf in enumerate(leaves):
        if leaf is not None:
            _paint(topmost, 0, 0, leaf, position)
    panels: dict[int, _Panel | None] = {}
    covered = []
    hidden_by: dict[str, Bounds] = {}
    for element, over in pending:
        position = first[element.id]
        # where the element draws: its leaf views (its texts and icons), else its whole box
        content = [b for b in leaves[position + 1 : end[position]] if b is not None] or [element.bounds]
        hiding = []
        for c in over:
            if c not in panels:
                panels[c] = _Panel.read(image, drawn[c].bounds, topmost, c)
            panel = panels[c]
            if panel is not None and panel.hides(image, element.bounds, content):
                hiding.append(drawn[c].bounds)
        if union_share(element.bounds, hiding) >= _MIN_COVER_SHARE:
            covered.append(element.id)
            hidden_by.update((b.to_uiautomator(), b) for b in hiding)
    return CoverCheck(covered=tuple(covered), candidates=len(pending), pixels_read=True,
                      covers=tuple(hidden_by.values()))


def _box(bounds: Bounds) -> tuple[int, int, int, int]:
    return bounds.left, bounds.top, bounds.right, bounds.bottom


def union_share(box: Bounds, others: list[Bounds]) -> float:
    """Share of ``box`` under the union of ``others`` (sampled on a 16 x 16 grid: cheap, exact enough)."""
    if not others or box.area == 0:
        return 0.0
    xs = box.left + (np.arange(16) + 0.5) * box.width / 16
    ys = box.top + (np.arange(16) + 0.5) * box.height / 16
    px, py = np.meshgrid(xs, ys)
    boxes = np.array([(o.left, o.top, o.right, o.bottom) for o in others], dtype=float)
    inside = ((px.ravel()[None, :] >= boxes[:, 0:1]) & (px.ravel()[None, :] < boxes[:, 2:3])
              & (py.ravel()[None, :] >= boxes[:, 1:2]) & (py.ravel()[None, :] < boxes[:, 3:4]))
    return float(inside.any(axis=0).mean())


@dataclass(frozen=True)
class _Panel:
    """An opaque cover, read once: where it shows its own background, and in which colour."""

    x0: int
    y0: int
    free: NDArray[np.bool_]  # quarter-size pixels of the cover not under its own content
    colour: NDArray[np.float64]

    @classmethod
    def read(cls, image: RGBImage, box: Bounds, top: NDArray[np.int32], position: int) -> _Panel | None:
        """The cover (drawn at ``position``) as a panel when it paints one plain background around
        its content, else None. ``top`` holds the last leaf drawn at each pixel: where that is the
        cover's own content or drawn after it, the cover's background does not show."""
        h, w = image.shape[:2]
        x0, y0 = min(w, box.left // _SCALE), min(h, box.top // _SCALE)
        x1, y1 = min(w, max(x0 + 1, box.right // _SCALE)), min(h, max(y0 + 1, box.bottom // _SCALE))
        if x1 <= x0 or y1 <= y0:
            return None
        free = top[y0:y1, x0:x1] <= position
        pixels = image[y0:y1, x0:x1][free]
        pixels = pixels[:: max(1, len(pixels) // _SAMPLE)].astype(np.int16)  # a sample decides plainness
        if free.mean() < _MIN_FREE_SHARE or len(pixels) == 0:
            # its own content edge to edge (a list of rows): opaque where that content is
            return cls(x0, y0, free, np.full(3, -1.0))
        colour = np.median(pixels, axis=0)
        ink = (np.abs(pixels - colour).max(axis=1) > _INK_TOLERANCE).mean()
        return cls(x0, y0, free, colour) if ink <= _MAX_INK else None

    def hides(self, image: RGBImage, element: Bounds, content: list[Bounds]) -> bool:
        """Whether the element's own texts and icons under this panel show the panel instead."""
        height, width = self.free.shape
        x0, y0 = max(self.x0, element.left // _SCALE), max(self.y0, element.top // _SCALE)
        x1 = min(self.x0 + width, max(x0 + 1, element.right // _SCALE))
        y1 = min(self.y0 + height, max(y0 + 1, element.bottom // _SCALE))
        if x1 <= x0 or y1 <= y0:
            return False
        wanted = np.zeros((y1 - y0, x1 - x0), dtype=bool)
        for box in content:
            _paint(wanted, x0, y0, box, True)
        shown = wanted & self.free[y0 - self.y0 : y1 - self.y0, x0 - self.x0 : x1 - self.x0]
        if shown.sum() < _MIN_FREE_SHARE * max(1, wanted.sum()) or self.colour[0] < 0:
            return True  # the panel's own content is drawn over the element
        pixels = image[y0:y1, x0:x1][shown].astype(np.int16)
        ink = int((np.abs(pixels - self.colour).max(axis=1) > _INK_TOLERANCE).sum())
        # a few glyph pixels already show an element's own text (quarter size, JPEG noise aside)
        return ink <= _MAX_GLYPH_PIXELS + _MAX_INK / 10 * len(pixels)


def _paint(mask: NDArray[Any], x0: int, y0: int, box: Bounds, value: bool | int) -> None:
    """Set ``mask`` (whose top-left pixel is (x0, y0) at quarter size) to ``value`` inside ``box``."""
    h, w = mask.shape
    bx0, by0 = max(0, box.left // _SCALE - x0), max(0, box.top // _SCALE - y0)
    bx1, by1 = min(w, -(-box.right // _SCALE) - x0), min(h, -(-box.bottom // _SCALE) - y0)
    if bx1 > bx0 and by1 > by0:
        mask[by0:by1, bx0:bx1] = value
