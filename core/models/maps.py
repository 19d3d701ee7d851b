"""App maps: what exploring an app on the farm found, screen by screen (UICOMPASS's UI manual).

An :class:`AppMap` is a directed graph per app and version. Its nodes are
:class:`MapScreen` s, screens deduplicated by structure (a list's items, or a
page template such as a product page, count once, with a few samples of what
they showed); its edges are the :class:`MapElement` s of a screen that were
tried, each with the :class:`Effect` it had. A screen behind a login or
payment wall is a *wall*: the explorer never went through it, so what lies
behind it is unknown.

    AppMap(package, version, start, screens={id: MapScreen(elements=(MapElement, ...))})

The models carry no behaviour beyond lookups; building a map is
``tasks.mapping``, reading one (matching a question, planning a path) is
``inference.maps``.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import Field

from core.models.base import Frozen, utcnow
from core.models.geometry import Bounds
from core.models.screens import PageType

__all__ = [
    "AppMap",
    "Effect",
    "MapBudget",
    "MapElement",
    "MapList",
    "MapProgress",
    "MapScreen",
    "MapStats",
    "WallKind",
]


class Effect(StrEnum):
    """What acting on an element did while exploring."""

    OPENS = "opens"  # another screen of the app (``leads_to``)
    SAME = "same"  # the screen stayed (a toast, a selection, nothing)
    DIALOG = "dialog"  # a pop-up over the screen (its texts in ``note``), dismissed again
    LEAVES = "leaves"  # another app or the launcher came to the front
    REFUSED = "refused"  # the risk gate refused it (``note`` says why): never acted on
    SWITCH = "switch"  # a checkbox or switch: changing a setting is the person's, not tried
    UNTRIED = "untried"  # the budget ran out first


class WallKind(StrEnum):
    """Why the explorer stopped at a screen: it is for the person to go through."""

    LOGIN = "login"
    PAYMENT = "payment"
    OTHER_RISK = "risk"  # deletion, consent, personal data, permissions


class MapElement(Frozen):
    """One actionable element of a screen, found again on a later visit by its anchor."""

    label: str = ""  # text or description (for an unlabelled control, its resource-id words)
    resource_id: str = ""
    class_name: str = ""
    bounds: Bounds
    scrolls: int = Field(default=0, ge=0)  # scrolls down from the top before it is on screen
    list_id: str = ""  # set for an item of a list: one of its samples
    search: bool = False  # the app's search field: the explorer typed its probe term here
    effect: Effect = Effect.UNTRIED
    leads_to: str = ""  # the screen it opened (Effect.OPENS)
    note: str = ""  # a dialog's or toast's text, or why the gate refused

    @property
    def anchor(self) -> str:
        """How a person would name it: its label, else its resource id."""
        return self.label or self.resource_id or self.class_name


class MapList(Frozen):
    """A list (or grid of cards) on a screen: its items share one template."""

    id: str
    items: int = Field(ge=0)  # how many the explorer saw, scrolls included
    samples: tuple[str, ...] = ()  # some items' lines, "a | b | c"


class MapScreen(Frozen):
    """A screen of the app, deduplicated by structure, with what it shows and holds."""

    id: str  # the structural signature (``inference.maps.screen_shape``)
    form: str = ""  # the same without the title: the pages of one template share it
    kind: PageType = PageType.OTHER
    title: str = ""
    activity: str = ""
    # Every text line seen on it, scrolled through, in reading order; a list's items are in ``lists``
    # (what the page shows now, not what it is).
    texts: tuple[str, ...] = ()
    lists: tuple[MapList, ...] = ()
    elements: tuple[MapElement, ...] = ()
    screenshot_key: str = ""  # object-store key of its first screenshot
    depth: int = Field(default=0, ge=0)  # transitions from the app's first page
    path: tuple[int, ...] = ()  # element indexes from the start screen, one per screen on the way
    samples: tuple[str, ...] = ()  # titles of other pages of this template (a product page's products)
    template: bool = False  # reached from a list's items: other pages share its structure
    behind_search: bool = False  # reached only through a search the explorer typed
    wall: WallKind | None = None
    wall_reason: str = ""
    expanded: bool = False  # every element was tried (or refused), or the budget said stop
    scroll_pages: int = Field(default=1, ge=1)  # viewports the explorer saw

    def element_to(self, screen_id: str) -> int | None:
        """The index of the first element of this screen that opened ``screen_id``."""
        return next((i for i, e in enumerate(self.elements)
                     if e.effect is Effect.OPENS and e.leads_to == screen_id), None)


class MapBudget(Frozen):
    """How far one app is explored."""

    screens: int = Field(default=60, ge=1, le=2000)
    actions: int = Field(default=600, ge=1, le=20000)
    seconds: float = Field(default=600.0, gt=0)
    list_samples: int = Field(default=2, ge=1, le=10)  # items of a list opened
    scrolls: int = Field(default=3, ge=0, le=20)  # scrolls down a screen to see all of it
    depth: int = Field(default=8, ge=1, le=50)


class MapStats(Frozen):
    """What a build cost, and why it stopped."""

    actions: int = 0
    seconds: float = 0.0
    relaunches: int = 0
    refused: int = 0  # actions the risk gate refused
    stopped: str = ""  # "explored everything", "screen budget", "time budget", ...


class AppMap(Frozen):
    """One app's map: its screens by id, the first one, and how it was made."""

    package: str
    label: str = ""
    version: str = ""
    start: str = ""  # the screen id at launch
    screens: dict[str, MapScreen] = Field(default_factory=dict)
    probe: str = ""  # the only text the explorer typed (into the search field)
    budget: MapBudget = MapBudget()
    stats: MapStats = MapStats()
    complete: bool = False  # False while a build is under way (it can be resumed)
    built_at: datetime = Field(default_factory=utcnow)
    device: str = ""  # the phone it was explored on

    def screen(self, screen_id: str) -> MapScreen | None:
        return self.screens.get(screen_id)

    @property
    def walls(self) -> tuple[MapScreen, ...]:
        return tuple(s for s in self.screens.values() if s.wall is not None)


class MapProgress(Frozen):
    """A build's progress, published as it goes (CLI bar, flow logs, dashboard)."""

    package: str
    screens: int
    frontier: int  # screens found but not yet expanded
    actions: int
    seconds: float
    budget_screens: int
    done: bool = False
    message: str = ""
