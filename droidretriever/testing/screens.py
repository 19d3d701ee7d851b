"""Small hand-built screens (real models, no device): for tests, and for the gate's trap sets that
a benchmark measures too."""

from __future__ import annotations

from core.models import Bounds, Screen, UIElement

__all__ = ["element", "screen_of"]


def element(
    element_id: str, text: str = "", *, top: int = 100, height: int = 80, left: int = 0,
    width: int = 1080, **fields: object,
) -> UIElement:
    return UIElement.model_validate(
        {
            "id": element_id,
            "text": text,
            "bounds": Bounds(left=left, top=top, right=left + width, bottom=top + height),
            **fields,
        }
    )


def screen_of(*elements: UIElement, package: str = "com.example.app", fingerprint: str = "") -> Screen:
    return Screen(
        device="test", package=package, width=1080, height=2340, elements=elements,
        fingerprint=fingerprint,
    )
