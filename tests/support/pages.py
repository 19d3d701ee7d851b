"""Captured pages built from lines of text, for the synthesis tests that read a page's layout."""

from __future__ import annotations

from core.models import Bounds, Capture, UIElement


def titled_page(title: str, *texts: tuple[str, int, int], run: str = "q") -> Capture:
    """A captured page: a back button and ``title`` in its bar, then ``(text, top, height)`` lines."""
    bar = [UIElement(id="back", content_desc="Navigate up", clickable=True,
                     bounds=Bounds(left=0, top=66, right=154, bottom=220)),
           UIElement(id="title", text=title, bounds=Bounds(left=180, top=101, right=600, bottom=185))]
    lines = [UIElement(id=f"t{n}", text=text, bounds=Bounds(left=44, top=top, right=1036, bottom=top + height))
             for n, (text, top, height) in enumerate(texts)]
    return Capture(id=f"cap-{run}-1", run_id=f"run-{run}", subtask_id="com.example.qa-1", package="com.example.qa",
                   image_key=f"runs/run-{run}/captures/cap-{run}-1.png", width=1080, height=2340,
                   elements=(*bar, *lines), title=title)
