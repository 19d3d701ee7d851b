"""``map show --image``'s picture: a column per depth, the screenshots from the store (boxes with
titles without one), walls framed red, arrows between the columns."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from core.models import AppMap, Bounds, Effect, MapElement, MapScreen, PageType, WallKind
from droidretriever.cli.map_image import GAP_X, NODE_W, THUMB_H, draw_map, map_layout
from storage import FakeObjectStore, MapStore

GREEN = (0, 200, 0)


def _png(colour: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (540, 960), colour).save(out, "PNG")
    return out.getvalue()


def _opens(label: str, target: str) -> MapElement:
    return MapElement(label=label, bounds=Bounds(left=0, top=0, right=100, bottom=100), effect=Effect.OPENS,
                      leads_to=target)


def _map(store: FakeObjectStore | None = None) -> AppMap:
    screens = [
        MapScreen(id="home", kind=PageType.HOME, title="首页 Home", elements=(_opens("Deals", "deals"), _opens("Me", "me"))),
        MapScreen(id="deals", kind=PageType.RESULTS_LIST, title="Deals", depth=1, path=(0,),
                  elements=(_opens("Pizza", "pizza"),)),
        MapScreen(id="me", kind=PageType.SETTINGS, title="Me", depth=1, path=(1,),
                  elements=(_opens("Orders", "login"), _opens("Home", "home"))),
        MapScreen(id="pizza", kind=PageType.DETAILS, title="Pizza", depth=2, path=(0, 0), template=True,
                  samples=("Sushi",)),
        MapScreen(id="login", kind=PageType.LOGIN, title="Sign in", depth=2, path=(1, 0), wall=WallKind.LOGIN),
    ]
    if store is not None:
        maps = MapStore(store)
        screens = [s.model_copy(update={"screenshot_key": maps.save_screenshot("com.example.shop", "1.0", s.id,
                                                                             _png(GREEN))}) for s in screens]
    return AppMap(package="com.example.shop", label="Shop", version="1.0", start="home",
                  screens={s.id: s for s in screens}, complete=True)


def _centre(app_map: AppMap, screen_id: str) -> tuple[int, int]:
    x, y = map_layout(app_map).at[screen_id]
    return x + NODE_W // 2, y + THUMB_H // 2


def test_a_map_is_drawn_a_column_per_depth_with_its_screenshots(tmp_path: Path) -> None:
    store = FakeObjectStore()
    app_map = _map(store)
    path = tmp_path / "maps" / "shop.png"
    draw_map(app_map, path, store)
    with Image.open(path) as image:
        assert image.format == "PNG"
        assert image.size == (928, 806)  # three columns of 160 px and two gaps of 200; two rows
        picture = image.convert("RGB")
    assert len(set(picture.getdata())) > 20  # text, frames, arrows: not a blank page
    for screen_id in app_map.screens:  # every screenshot where its screen is
        assert picture.getpixel(_centre(app_map, screen_id)) == GREEN
    layout = map_layout(app_map)
    assert layout.at["home"][0] < layout.at["deals"][0] == layout.at["me"][0] < layout.at["login"][0]
    # The wall's frame is red; an arrow crosses the gap between the first two columns.
    x, y = layout.at["login"]
    red, green, blue = picture.getpixel((x - 1, y + THUMB_H // 2))  # type: ignore[misc]
    assert red > 200 and green < 80 and blue < 80
    gap = [picture.getpixel((NODE_W + 24 + GAP_X // 2, row)) for row in range(picture.height)]
    assert any(max(p) < 150 for p in gap if isinstance(p, tuple))


def test_without_a_store_screens_are_boxes_with_their_titles(tmp_path: Path) -> None:
    app_map = _map(FakeObjectStore())  # keys set, but no store to read them from
    path = tmp_path / "shop.png"
    draw_map(app_map, path)
    with Image.open(path) as image:
        picture = image.convert("RGB")
        assert image.size == (928, 806)
    assert picture.getpixel(_centre(app_map, "home")) != GREEN
    x, y = map_layout(app_map).at["home"]
    title_row = [picture.getpixel((column, y + 72)) for column in range(x, x + NODE_W)]
    assert any(max(p) < 150 for p in title_row if isinstance(p, tuple))  # the title, written in the box


def test_a_screenshot_missing_from_the_store_leaves_its_box(tmp_path: Path) -> None:
    store = FakeObjectStore()
    app_map = _map(store)
    store.delete(app_map.screens["me"].screenshot_key)
    draw_map(app_map, tmp_path / "shop.png", store)
    with Image.open(tmp_path / "shop.png") as image:
        picture = image.convert("RGB")
    assert picture.getpixel(_centre(app_map, "me")) != GREEN
    assert picture.getpixel(_centre(app_map, "deals")) == GREEN
