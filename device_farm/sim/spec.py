"""The declarative app format: frozen pydantic models for one app's YAML file.

An app is data, never code: screens are widget trees, transitions are
``go:`` targets, lists draw from named data collections, search is fuzzy
matching over chosen fields. ``device_farm/sim/README.md`` documents every
field below with a worked example; this module is the schema it describes.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator, model_validator

__all__ = [
    "SYSTEM_TARGETS",
    "Action",
    "AppSpec",
    "DialogButton",
    "DialogKind",
    "DialogSpec",
    "Notification",
    "Popup",
    "Record",
    "ScreenSpec",
    "SearchSpec",
    "TabItem",
    "TextStyle",
    "Variation",
    "Widget",
    "WidgetType",
]

# ``go:`` targets that are not screen ids of the app.
SYSTEM_TARGETS = frozenset({"back", "home"})

_PACKAGE_RE = re.compile(r"^[a-zA-Z][\w]*(\.[a-zA-Z][\w]*)+$")
_ID_RE = re.compile(r"^[A-Za-z_][\w]*$")
_COLOR_RE = re.compile(r"^(#[0-9a-fA-F]{6}|\{[\w.]+\})$")
_DAY_RE = re.compile(r"^today([+-]\d+)?$")

# A data record: one item of a collection (a dish, a mail, a permission).
# Values are YAML scalars, lists, or nested records (a product's specs).
Record = dict[str, JsonValue]


class _Spec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class WidgetType(StrEnum):
    TEXT = "text"
    BUTTON = "button"
    IMAGE = "image"
    INPUT = "input"
    SWITCH = "switch"
    CHECKBOX = "checkbox"
    DIVIDER = "divider"
    SPACER = "spacer"
    ROW = "row"
    COLUMN = "column"
    CARD = "card"
    LIST = "list"
    TABS = "tabs"


class TextStyle(StrEnum):
    CAPTION = "caption"  # 12sp grey
    BODY = "body"  # 15sp
    TITLE = "title"  # 17sp bold
    HEADLINE = "headline"  # 22sp bold
    PRICE = "price"  # 18sp bold, accent colour


class Action(StrEnum):
    """What a tap does besides (or instead of) ``go``."""

    LOGIN = "login"  # mark the app logged in on this phone, then go on
    LOGOUT = "logout"
    SUBMIT = "submit"  # submit the screen's search input (same as ENTER)
    TOGGLE = "toggle"  # flip a switch / checkbox
    SELECT = "select"  # a filter chip: select it, unselecting the other chips of its row; again: unselect
    TOAST = "toast"  # show ``toast`` text
    DISMISS = "dismiss"  # close the open dialog
    GRANT = "grant"  # permission dialog: grant ``permission``
    DENY = "deny"


class SearchSpec(_Spec):
    """Filter a list's records by the screen's query, fuzzily (rapidfuzz WRatio)."""

    fields: tuple[str, ...] = Field(min_length=1)
    cutoff: int = Field(default=60, ge=0, le=100)


class TabItem(_Spec):
    text: str
    go: str
    id: str | None = None


class Widget(_Spec):
    """One node of a screen. Containers have ``children``; a ``list`` repeats ``item``."""

    type: WidgetType
    id: str | None = None  # resource-id becomes "<package>:id/<id>"
    cls: str | None = Field(default=None, alias="class")  # override the Android class name
    text: str = ""  # template: "{name} ¥{price:.2f}"
    desc: str = ""  # content-desc (template)
    hint: str = ""  # input placeholder, drawn grey, dumped as text when empty
    caption: str = ""  # image: text painted into the pixels only (no XML text: OCR needs it)
    style: TextStyle = TextStyle.BODY
    color: str | None = None  # image / button background; "#RRGGBB" or a "{field}"
    align: Literal["start", "center", "end"] = "start"
    width: int | None = Field(default=None, gt=0, le=2000)  # dp; None = share the row
    height: int | None = Field(default=None, gt=0, le=4000)  # dp; None = fit content
    lines: int | None = Field(default=None, gt=0, le=100)  # clamp wrapped text, adding "…"
    go: str | None = None  # screen id, "back", "home"
    action: Action | None = None
    toast: str = ""
    dialog: str | None = None  # open this dialog on tap
    login: bool = False  # tapping requires login: shows the app's login screen first
    checked: str = "false"  # switch / checkbox: a condition, e.g. "status == Allowed"
    password: bool = False
    submit: str | None = None  # input: screen opened on ENTER, with the query
    show_if: str | None = None  # "logged_in", "not logged_in", "field", "field == value"
    children: tuple[Widget, ...] = ()
    # list only
    source: str | None = None  # collection, "record.<field>", "system.apps" or "system.permissions"
    search: SearchSpec | None = None
    filter: str | None = None  # condition each record must meet, e.g. "status != Not allowed"
    sort: str | None = None  # field name; "-field" for descending
    limit: int | None = Field(default=None, gt=0, le=1000)
    date: str | None = None  # "today", "today+2", "today-1": keep records whose date_field is that day
    date_field: str = "date"
    item: Widget | None = None
    empty: str = "No results"
    # tabs only
    tabs: tuple[TabItem, ...] = ()

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str | None) -> str | None:
        if value is not None and not _ID_RE.match(value):
            raise ValueError(f"id {value!r} must be letters, digits and '_'")
        return value

    @field_validator("color")
    @classmethod
    def _check_color(cls, value: str | None) -> str | None:
        if value is not None and not _COLOR_RE.match(value):
            raise ValueError(f"color {value!r} must be #RRGGBB or a {{field}} template")
        return value

    @field_validator("date")
    @classmethod
    def _check_date(cls, value: str | None) -> str | None:
        if value is not None and not _DAY_RE.match(value.strip()):
            raise ValueError(f"date {value!r} must be today, today+N or today-N (days from the simulated day)")
        return value

    @model_validator(mode="after")
    def _check_shape(self) -> Self:
        container = {WidgetType.ROW, WidgetType.COLUMN, WidgetType.CARD}
        if self.children and self.type not in container:
            raise ValueError(f"a {self.type.value} cannot have children (only row/column/card)")
        if self.type is WidgetType.LIST and (self.source is None or self.item is None):
            raise ValueError("a list needs 'source' (a collection) and 'item' (a widget)")
        if self.type is not WidgetType.LIST and (self.item is not None or self.search or self.date):
            raise ValueError("'item', 'search' and 'date' belong to a list widget")
        if self.type is WidgetType.TABS and not self.tabs:
            raise ValueError("a tabs widget needs 'tabs'")
        if self.action is Action.TOAST and not self.toast:
            raise ValueError("action 'toast' needs a 'toast' text")
        if self.action is Action.SELECT and self.type is not WidgetType.BUTTON:
            raise ValueError("action 'select' belongs to a button (a filter chip)")
        return self


class ScreenSpec(_Spec):
    """A page of the app: a fixed top bar, a scrolling body and an optional fixed bottom."""

    activity: str = ".MainActivity"  # ".X" is relative to the package
    title: str | None = None  # top app bar text (template); None hides the bar
    back_button: bool = True  # "Navigate up" arrow in the top bar
    login_required: bool = False
    body: tuple[Widget, ...] = ()
    bottom: tuple[Widget, ...] = ()
    on_enter: tuple[Popup, ...] = ()  # dialogs that may open when the screen opens


class Popup(_Spec):
    """A dialog that opens on its own, with a seeded probability per phone."""

    dialog: str
    chance: float = Field(default=1.0, ge=0.0, le=1.0)
    once: bool = True  # at most once per phone until reset


class DialogKind(StrEnum):
    ALERT = "alert"  # in-app dialog
    PERMISSION = "permission"  # system permission prompt (package com.android.permissioncontroller)
    AD = "ad"  # full-width promotion with a close button


class DialogButton(_Spec):
    text: str
    action: Action = Action.DISMISS
    go: str | None = None
    permission: str | None = None  # for grant / deny
    toast: str = ""  # shown after the button's action


class DialogSpec(_Spec):
    kind: DialogKind = DialogKind.ALERT
    title: str = ""
    message: str = ""
    image: str | None = None  # colour of an image block (ads)
    caption: str = ""  # text painted inside the image only
    buttons: tuple[DialogButton, ...] = Field(min_length=1)


class Variation(_Spec):
    """Seeded daily change of one field of a collection (prices, showtimes).

    ``field`` may be a dotted path into nested records and lists
    (``routes.minutes`` varies ``minutes`` in every item of ``routes``).
    """

    source: str
    field: str
    spread: float = Field(default=0.0, ge=0.0, le=1.0)  # numeric: +-spread fraction, per day
    step: float = Field(default=0.01, gt=0)  # round the varied number to this
    pick: int | None = Field(default=None, gt=0)  # list of times: keep this many, per day
    in_text: Literal["first", "last", "all"] | None = None  # vary numbers written inside text ("5500mAh")

    @field_validator("field")
    @classmethod
    def _check_field(cls, value: str) -> str:
        if not all(_ID_RE.match(part) for part in value.split(".")):
            raise ValueError(f"field {value!r} must be a name or a dotted path like routes.minutes")
        return value


class Notification(_Spec):
    title: str
    text: str
    day: int = 0  # posted on this simulated day (0 = the clock's start day)
    time: str = "09:00"
    go: str | None = None  # screen opened by tapping it


class AppSpec(_Spec):
    """One app: identity, screens, dialogs and content data."""

    package: str
    label: str
    version: str = "1.0.0"
    icon_color: str = "#607D8B"
    theme_color: str = "#1976D2"  # top bar background
    on_theme_color: str = "#FFFFFF"
    home: str = "home"
    login_screen: str | None = None
    logged_in: bool = True  # initial state on every phone
    launcher: bool = True  # shown on the launcher
    screens: dict[str, ScreenSpec]
    dialogs: dict[str, DialogSpec] = {}
    popups: tuple[Popup, ...] = ()  # on launch
    data: dict[str, list[Record]] = {}
    variation: tuple[Variation, ...] = ()
    notifications: tuple[Notification, ...] = ()
    permissions: list[Record] = []  # {name, status}: shown by Settings and "system.permissions"
    storage: str = "128 MB"  # shown by Settings' app info

    @field_validator("package")
    @classmethod
    def _check_package(cls, value: str) -> str:
        if not _PACKAGE_RE.match(value):
            raise ValueError(f"{value!r} is not a Java package name like com.example.app")
        return value

    @field_validator("icon_color", "theme_color", "on_theme_color")
    @classmethod
    def _check_hex(cls, value: str) -> str:
        if not re.match(r"^#[0-9a-fA-F]{6}$", value):
            raise ValueError(f"colour {value!r} must be #RRGGBB")
        return value

    @model_validator(mode="after")
    def _check_references(self) -> Self:
        problems: list[str] = []
        if self.home not in self.screens:
            problems.append(f"home screen {self.home!r} is not in screens")
        if self.login_screen is not None and self.login_screen not in self.screens:
            problems.append(f"login_screen {self.login_screen!r} is not in screens")
        for name, screen in self.screens.items():
            if screen.login_required and self.login_screen is None:
                problems.append(f"screen {name!r} is login_required but the app has no login_screen")
            for widget in _iter_widgets((*screen.body, *screen.bottom)):
                problems.extend(self._widget_problems(name, widget))
            problems.extend(
                f"screen {name!r}: on_enter dialog {p.dialog!r} is not in dialogs"
                for p in screen.on_enter
                if p.dialog not in self.dialogs
            )
        for dname, dialog in self.dialogs.items():
            problems.extend(
                f"dialog {dname!r}: button goes to unknown screen {b.go!r}"
                for b in dialog.buttons
                if b.go is not None and b.go not in self.screens and b.go not in SYSTEM_TARGETS
            )
        problems.extend(
            f"popup dialog {p.dialog!r} is not in dialogs"
            for p in self.popups
            if p.dialog not in self.dialogs
        )
        problems.extend(
            f"variation source {v.source!r} is not in data" for v in self.variation if v.source not in self.data
        )
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def _widget_problems(self, screen: str, widget: Widget) -> list[str]:
        where = f"screen {screen!r}, widget {widget.id or widget.type.value}"
        found: list[str] = []
        targets = [widget.go, widget.submit, *(t.go for t in widget.tabs)]
        found.extend(
            f"{where}: goes to unknown screen {t!r}"
            for t in targets
            if t is not None and t not in self.screens and t not in SYSTEM_TARGETS
        )
        if widget.dialog is not None and widget.dialog not in self.dialogs:
            found.append(f"{where}: unknown dialog {widget.dialog!r}")
        source = widget.source
        known = source is None or source.startswith(("record.", "system.")) or source in self.data
        if not known:
            found.append(f"{where}: list source {source!r} is not in data")
        return found


def _iter_widgets(widgets: tuple[Widget, ...]) -> list[Widget]:
    """Every widget of a tree, list item templates included, depth first."""
    out: list[Widget] = []
    stack = list(reversed(widgets))
    while stack:
        widget = stack.pop()
        out.append(widget)
        stack.extend(reversed(widget.children))
        if widget.item is not None:
            stack.append(widget.item)
    return out


Widget.model_rebuild()
ScreenSpec.model_rebuild()
