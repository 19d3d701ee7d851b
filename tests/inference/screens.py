"""Small hand-built screens for the copilot tests (real models, no device)."""

from __future__ import annotations

from core.models import Screen, UIElement
from droidretriever.testing.screens import element, screen_of
from inference.perception import BlockPartition, Perception, ViewTree

__all__ = ["button", "element", "perceived", "results_screen", "screen_of"]


def button(element_id: str, label: str, top: int) -> UIElement:
    """A clickable Button labelled ``label`` at ``top``."""
    return element(element_id, label, top=top, clickable=True, class_name="android.widget.Button")


def results_screen(term: str = "Big Mac", count: int = 5) -> Screen:
    """A search results list: a search box holding ``term`` and repeated result items."""
    items = []
    for i in range(count):
        top = 300 + i * 300
        items.append(
            element(f"item{i}", top=top, height=280, class_name="android.widget.LinearLayout",
                    resource_id="com.example.app:id/result", clickable=True)
        )
        items.append(element(f"title{i}", f"{term} meal {i}", top=top + 20, height=60, left=40, width=800))
        items.append(element(f"price{i}", f"¥{20 + i}.5", top=top + 100, height=50, left=40, width=300))
    box = element("search", term, top=150, height=100, class_name="android.widget.EditText",
                  resource_id="com.example.app:id/search_box", editable=True)
    return screen_of(box, *items)


def perceived(screen: Screen) -> Perception:
    """``screen`` as perception hands it to the policies (no view tree, no layout blocks)."""
    return Perception(screen=screen, tree=ViewTree(nodes=(), ancestors={}), blocks=BlockPartition(level=0, blocks=()))
