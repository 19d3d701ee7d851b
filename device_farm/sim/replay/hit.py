"""Which recorded view a touch reaches, the way Android dispatches it.

A touch goes to the children of a view in reverse drawing order (the last
child drawn is on top); the first child containing the point that takes it
wins, and a view takes a touch it reaches when it is clickable. So a drawer or
dialog drawn over a list takes the tap, not the list item under it.
"""

from __future__ import annotations

from collections.abc import Callable

from core.recordings import DroidbotState, DroidbotView

__all__ = ["find_receiver", "find_scrollable", "topmost_view"]


def _contains(view: DroidbotView, x: int, y: int) -> bool:
    (left, top), (right, bottom) = view.bounds
    return left <= x < right and top <= y < bottom


def _tree(state: DroidbotState) -> tuple[list[DroidbotView], dict[int, list[DroidbotView]]]:
    visible = state.visible_views()
    ids = {v.temp_id for v in visible}
    children: dict[int, list[DroidbotView]] = {}
    roots = []
    for view in visible:
        if view.parent in ids:
            children.setdefault(view.parent, []).append(view)
        else:
            roots.append(view)
    return roots, children


def _dispatch(state: DroidbotState, x: int, y: int, takes: Callable[[DroidbotView], bool]) -> DroidbotView | None:
    """The first view (children on top first, then the parent) at (x, y) that ``takes`` the touch."""
    roots, children = _tree(state)

    def dispatch(view: DroidbotView) -> DroidbotView | None:
        if not _contains(view, x, y):
            return None
        for child in reversed(children.get(view.temp_id, [])):
            taken = dispatch(child)
            if taken is not None:
                return taken
        return view if takes(view) else None

    for root in reversed(roots):
        taken = dispatch(root)
        if taken is not None:
            return taken
    return None


def find_receiver(state: DroidbotState, x: int, y: int, *, long_press: bool = False) -> DroidbotView | None:
    """The view that takes a tap (or long press) at (x, y), or None when none would."""
    if long_press:
        return _dispatch(state, x, y, lambda v: v.long_clickable)
    return _dispatch(state, x, y, lambda v: v.clickable or v.editable or v.checkable)


def topmost_view(state: DroidbotState, x: int, y: int) -> DroidbotView | None:
    """The deepest view on top at (x, y), whether it takes touches or not."""
    roots, children = _tree(state)
    found: DroidbotView | None = None
    for root in reversed(roots):
        view = root if _contains(root, x, y) else None
        while view is not None:
            found = view
            view = next((c for c in reversed(children.get(view.temp_id, [])) if _contains(c, x, y)), None)
        if found is not None:
            return found
    return None


def find_scrollable(state: DroidbotState, x: int, y: int) -> DroidbotView | None:
    """The innermost scrollable view on top at (x, y), or None."""
    return _dispatch(state, x, y, lambda v: v.scrollable)
