"""Read DroidBot's recorded states (``../shared/data``, or ``DROIDRETRIEVER_DATA_DIR``) as ``Screen`` models."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from core.config import load_settings
from core.models import Bounds, Screen, UIElement
from core.recordings import find_data_dir

__all__ = ["DATA_DIR", "iter_states", "load_state"]

# A path that does not exist when the data is not on this machine: tests skip on ``is_dir()``.
DATA_DIR = find_data_dir(load_settings()) or Path("shared-data-not-found")


def load_state(path: Path) -> Screen:
    """One ``states/state_<ts>.json`` as a Screen (visible views with a size only)."""
    state = json.loads(path.read_text())
    package, _, activity = (state.get("foreground_activity") or "/").partition("/")
    elements = []
    for view in state["views"]:
        (left, top), (right, bottom) = view["bounds"]
        if not view.get("visible", True) or right <= left or bottom <= top:
            continue
        elements.append(
            UIElement(
                id=f"v{view['temp_id']}",
                class_name=view.get("class") or "",
                text=view.get("text") or "",
                resource_id=view.get("resource_id") or "",
                content_desc=view.get("content_description") or "",
                bounds=Bounds(left=left, top=top, right=right, bottom=bottom),
                clickable=bool(view.get("clickable")),
                scrollable=bool(view.get("scrollable")),
                editable=bool(view.get("editable")),
                password=bool(view.get("is_password")),
                checkable=bool(view.get("checkable")),
                checked=bool(view.get("checked")),
                focused=bool(view.get("focused")),
                parent_id=f"v{view['parent']}" if view.get("parent") is not None else None,
            )
        )
    return Screen(
        device="droidbot",
        package=package,
        activity=activity,
        width=state["width"],
        height=state["height"],
        elements=tuple(elements),
        fingerprint=state.get("state_str_content_free", ""),
    )


def iter_states(folder: str = "droidbot-real") -> Iterator[tuple[Path, Screen]]:
    """Every recorded state of ``folder``, in time order."""
    for path in sorted((DATA_DIR / folder / "states").glob("state_*.json")):
        yield path, load_state(path)
