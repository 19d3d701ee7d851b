"""Screen geometry in pixels: points and uiautomator-style rectangles."""

from __future__ import annotations

import re
from typing import Self

from pydantic import model_validator

from core.models.base import Frozen

__all__ = ["Bounds", "Point"]


_BOUNDS_RE = re.compile(r"^\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]$")


class Point(Frozen):
    x: int
    y: int


class Bounds(Frozen):
    """A screen rectangle in pixels, right and bottom exclusive (as uiautomator)."""

    left: int
    top: int
    right: int
    bottom: int

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.right < self.left or self.bottom < self.top:
            raise ValueError(f"bounds are inverted: {self.to_uiautomator()}")
        return self

    @classmethod
    def parse(cls, text: str) -> Bounds:
        """Parse uiautomator's ``[x1,y1][x2,y2]`` form."""
        match = _BOUNDS_RE.match(text.strip())
        if match is None:
            raise ValueError(f"not a uiautomator bounds string: {text!r}")
        left, top, right, bottom = (int(g) for g in match.groups())
        return cls(left=left, top=top, right=right, bottom=bottom)

    def to_uiautomator(self) -> str:
        return f"[{self.left},{self.top}][{self.right},{self.bottom}]"

    @property
    def width(self) -> int:
        return self.right - self.left

    @property
    def height(self) -> int:
        return self.bottom - self.top

    @property
    def area(self) -> int:
        return self.width * self.height

    @property
    def center(self) -> Point:
        return Point(x=(self.left + self.right) // 2, y=(self.top + self.bottom) // 2)

    def contains(self, point: Point) -> bool:
        return self.left <= point.x < self.right and self.top <= point.y < self.bottom

    def intersection(self, other: Bounds) -> int:
        """Area shared with ``other`` (0 when disjoint)."""
        w = min(self.right, other.right) - max(self.left, other.left)
        h = min(self.bottom, other.bottom) - max(self.top, other.top)
        return max(0, w) * max(0, h)

    def encloses(self, other: Bounds) -> bool:
        """Whether ``other``, a box with an area, lies wholly inside this one."""
        return other.area > 0 and self.intersection(other) == other.area

    def iou(self, other: Bounds) -> float:
        inter = self.intersection(other)
        union = self.area + other.area - inter
        return inter / union if union else 0.0

    def clip(self, other: Bounds) -> Bounds:
        """The part of this box inside ``other`` (empty, at the nearest corner, when disjoint)."""
        left, top = max(self.left, other.left), max(self.top, other.top)
        right, bottom = min(self.right, other.right), min(self.bottom, other.bottom)
        return Bounds(left=left, top=top, right=max(left, right), bottom=max(top, bottom))

    def shifted(self, dx: int = 0, dy: int = 0) -> Bounds:
        return Bounds(
            left=self.left + dx, top=self.top + dy, right=self.right + dx, bottom=self.bottom + dy
        )
