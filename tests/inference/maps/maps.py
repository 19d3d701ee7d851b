"""Small hand-made app maps for the map tests (real models, no phone)."""

from __future__ import annotations

from core.models import AppMap, Bounds, Effect, MapElement, MapScreen, PageType, WallKind

__all__ = ["entry", "settings_map"]


def entry(label: str, leads_to: str = "", *, effect: Effect = Effect.OPENS, top: int = 300,
          search: bool = False, list_id: str = "", note: str = "") -> MapElement:
    return MapElement(label=label, class_name="android.widget.Button", bounds=Bounds(left=0, top=top, right=1080,
                      bottom=top + 100), effect=effect, leads_to=leads_to, search=search, list_id=list_id,
                      note=note)


def settings_map() -> AppMap:
    """A phone's settings: a first page with a search, a battery toast, an apps list (a template),
    an About page and a Chinese bills page; the bills' payment page is a wall."""
    screens = [
        MapScreen(id="home", form="f-home", title="Settings", kind=PageType.SEARCH_INPUT,
                  texts=("Settings",), elements=(
                      entry("Search settings", "search", search=True, top=200),
                      entry("Battery", effect=Effect.SAME, note="76% - about 14 hr left", top=300),
                      entry("Apps", "apps", top=400),
                      entry("About phone", "about", top=500),
                      entry("账单", "bills", top=600),
                  )),
        MapScreen(id="search", form="f-search", title="Search", kind=PageType.RESULTS_LIST, depth=1,
                  behind_search=True, texts=("Search",)),
        MapScreen(id="apps", form="f-apps", title="Apps", kind=PageType.RESULTS_LIST, depth=1, path=(2,),
                  texts=("All apps",), elements=(
                      entry("Maps | 1.1 GB", "info", list_id="row", top=300),
                      entry("Music | 2.7 GB", "info", list_id="row", top=400),
                  )),
        MapScreen(id="info", form="f-info", title="App info", kind=PageType.SETTINGS, depth=2, path=(2, 0),
                  template=True, samples=("Music",), texts=("App info", "Storage", "Permissions")),
        MapScreen(id="about", form="f-about", title="About phone", kind=PageType.OTHER, depth=1, path=(3,),
                  texts=("About phone", "Device name", "Pixel 7", "Android version", "14")),
        MapScreen(id="bills", form="f-bills", title="账单", kind=PageType.RESULTS_LIST, depth=1, path=(4,),
                  texts=("账单", "本月支出"), elements=(entry("去支付", "pay", top=900),)),
        MapScreen(id="pay", form="f-pay", title="支付", kind=PageType.OTHER, depth=2, path=(4, 0),
                  wall=WallKind.PAYMENT, wall_reason="a payment screen", texts=("支付密码",)),
    ]
    return AppMap(package="com.example.settings", label="Settings", version="1", start="home",
                  screens={s.id: s for s in screens}, complete=True)
