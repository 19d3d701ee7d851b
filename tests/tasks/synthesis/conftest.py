"""Fixtures: a folder-backed evidence store and two drawn menu captures (Meituan, Ele.me)."""

from __future__ import annotations

from pathlib import Path

import pytest

from droidretriever.testing import DrawnCapture, draw_capture, menu_card
from tasks.synthesis.evidence import FolderStore

__all__ = ["DrawnCapture", "draw_capture", "menu_card"]


@pytest.fixture
def store(tmp_path: Path) -> FolderStore:
    return FolderStore(tmp_path / "objects")


@pytest.fixture
def meituan(store: FolderStore) -> DrawnCapture:
    drawn = draw_capture("cap-meituan-1", "com.sankuai.meituan", [
        menu_card(200, "McChicken Meal", "¥19.9", "月售 800+"),
        menu_card(620, "Big Mac Meal", "¥25.5", "月售 2000+", "30分钟 4.8分", "满30减5"),
        menu_card(1180, "Fries (large)", "¥12", "月售 5000+"),
    ], title="McDonald's (Meituan)")
    store.put_bytes(drawn.capture.image_key, drawn.png, "image/png")
    return drawn


@pytest.fixture
def eleme(store: FolderStore) -> DrawnCapture:
    drawn = draw_capture("cap-eleme-1", "me.ele", [
        menu_card(300, "Big Mac Meal ¥26.0 Sold 2k+", "Delivery 35 min", "Rating 4.6"),
        menu_card(800, "Apple Pie", "¥8.5", "Sold 900+"),
    ], title="McDonald's (Ele.me)")
    store.put_bytes(drawn.capture.image_key, drawn.png, "image/png")
    return drawn
