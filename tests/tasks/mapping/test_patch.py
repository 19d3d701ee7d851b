"""A run's screens that its app map lacks are added to the map, where the run found them."""

from __future__ import annotations

from core.models import AppMap, Effect, MapScreen, Screen, Tap
from inference.maps import locate_screen, screen_shape
from storage import FakeObjectStore, MapStore
from tasks.mapping.patch import MapPatches
from tests.inference.maps.maps import entry
from tests.inference.screens import button, element, screen_of

PACKAGE = "com.example.shop"


def _home() -> Screen:
    return screen_of(element("t", "Shop", top=80), button("orders", "Orders", 300), button("help", "Help", 420),
                     package=PACKAGE)


def _orders() -> Screen:
    return screen_of(element("t", "Orders", top=80), button("open", "Open orders", 300),
                     button("done", "Finished orders", 420), package=PACKAGE)


def _map() -> AppMap:
    home = _home()
    shape = screen_shape(home)
    start = MapScreen(id=shape.id, form=shape.form, title="Shop", elements=(
        entry("Help", "help-page", top=420),))
    helpful = MapScreen(id="help-page", form="f-help", title="Help", depth=1, path=(0,))
    return AppMap(package=PACKAGE, label="Shop", version="2", start=shape.id,
                  screens={start.id: start, helpful.id: helpful}, complete=True)


def test_a_screen_the_map_lacks_is_added_where_the_run_found_it() -> None:
    maps = MapStore(FakeObjectStore())
    app_map = _map()
    maps.save(app_map)
    patches = MapPatches(app_map, maps)
    patches.see(_home(), Tap(target="orders"), _orders(), b"png")
    patches.see(_home(), Tap(target="orders"), _orders(), b"png")  # seen twice, added once
    patched = patches.save()
    assert patched is not None and maps.load(PACKAGE, "2") == patched
    found = locate_screen(patched, _orders())
    assert found is not None and found.title == "Orders" and not found.expanded and found.depth == 1
    assert {e.label for e in found.elements} == {"Open orders", "Finished orders"}
    start = patched.screens[patched.start]
    tapped = next(e for e in start.elements if e.label == "Orders")
    assert tapped.effect is Effect.OPENS and tapped.leads_to == found.id
    assert found.path == (start.elements.index(tapped),)
    assert maps.store.get_bytes(found.screenshot_key) == b"png"


def test_screens_the_map_has_and_moves_that_are_not_taps_change_nothing() -> None:
    maps = MapStore(FakeObjectStore())
    patches = MapPatches(_map(), maps)
    patches.see(_home(), Tap(target="help"), _home(), b"png")  # the map knows the first page
    patches.see(_orders(), Tap(target="open"), _orders(), b"png")  # from a screen off the map
    assert patches.save() is None and maps.list() == []
