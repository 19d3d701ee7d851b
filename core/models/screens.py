"""One observed screen after perception, its elements, and the kind of page it is."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from core.models.base import Frozen
from core.models.geometry import Bounds

__all__ = ["ElementSource", "PageType", "Screen", "UIElement"]


class ElementSource(StrEnum):
    HIERARCHY = "hierarchy"
    OCR = "ocr"
    DETECTOR = "detector"


class UIElement(Frozen):
    """One thing on a screen a person could read or touch."""

    id: str  # stable across re-renders of the same screen
    class_name: str = ""
    text: str = ""
    resource_id: str = ""
    content_desc: str = ""
    bounds: Bounds
    clickable: bool = False
    long_clickable: bool = False
    scrollable: bool = False
    editable: bool = False
    password: bool = False
    checkable: bool = False
    checked: bool = False
    selected: bool = False
    focused: bool = False
    enabled: bool = True
    source: ElementSource = ElementSource.HIERARCHY
    parent_id: str | None = None
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)

    @property
    def label(self) -> str:
        """What a person would call it: its text, else its description."""
        return self.text or self.content_desc


class Screen(Frozen):
    """One observed screen, after perception."""

    device: str
    package: str
    activity: str = ""
    width: int = Field(gt=0)
    height: int = Field(gt=0)
    elements: tuple[UIElement, ...] = ()
    screenshot_key: str | None = None
    fingerprint: str = ""  # robust to clock/badge changes; equal = "same page again"

    def element(self, element_id: str) -> UIElement | None:
        return next((e for e in self.elements if e.id == element_id), None)


class PageType(StrEnum):
    HOME = "home"
    SEARCH_INPUT = "search_input"
    RESULTS_LIST = "results_list"
    DETAILS = "details"
    SETTINGS = "settings"
    DIALOG = "dialog"
    LOGIN = "login"
    OTHER = "other"
