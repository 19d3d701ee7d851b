"""DroidBot state JSON -> ``uiautomator dump`` XML, and recorded screens as observations.

DroidBot (and AutoDroid and many research traces) store a screen as a flat
``views[]`` list with parent/children indices. Converting it to the XML a
phone would dump lets the recordings in ``shared/data`` drive the very parser,
OCR and description code that real phones do: in tests, in benchmarks and in
replay phones.
"""

from __future__ import annotations

from pathlib import Path

from lxml import etree
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from droidretriever.models import Bounds
from inference.errors import HierarchyError
from inference.perception.observation import Observation

__all__ = [
    "DroidbotState",
    "DroidbotView",
    "convert_droidbot_state",
    "list_droidbot_states",
    "load_droidbot_state",
    "observe_droidbot_state",
]


class DroidbotView(BaseModel):
    """One entry of a DroidBot state's ``views[]`` (the fields perception uses)."""

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)

    temp_id: int
    parent: int = -1
    children: tuple[int, ...] = ()
    class_name: str = Field(default="", alias="class")
    resource_id: str | None = None
    text: str | None = None
    content_description: str | None = None
    bounds: tuple[tuple[int, int], tuple[int, int]]
    package: str | None = None
    clickable: bool = False
    long_clickable: bool = False
    scrollable: bool = False
    editable: bool = False
    checkable: bool = False
    checked: bool = False
    selected: bool = False
    focused: bool = False
    focusable: bool = False
    enabled: bool = True
    visible: bool = True
    is_password: bool = False

    @property
    def box(self) -> Bounds:
        """The view's bounds as a :class:`Bounds` (inverted boxes become empty)."""
        (left, top), (right, bottom) = self.bounds
        return Bounds(left=left, top=top, right=max(left, right), bottom=max(top, bottom))


class DroidbotState(BaseModel):
    """A DroidBot ``state_<ts>.json``."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    tag: str
    state_str: str
    state_str_content_free: str = ""
    foreground_activity: str = ""
    width: int = Field(gt=0)
    height: int = Field(gt=0)
    views: tuple[DroidbotView, ...]

    @property
    def package(self) -> str:
        return self.foreground_activity.split("/", 1)[0]

    @property
    def activity(self) -> str:
        return self.foreground_activity.split("/", 1)[1] if "/" in self.foreground_activity else ""

    def visible_views(self) -> tuple[DroidbotView, ...]:
        """Views uiautomator would dump: visible, under visible ancestors."""
        by_id = {v.temp_id: v for v in self.views}
        shown: set[int] = set()
        for view in self.views:  # DroidBot lists parents before children
            parent = by_id.get(view.parent)
            if view.visible and (parent is None or parent.temp_id in shown):
                shown.add(view.temp_id)
        return tuple(v for v in self.views if v.temp_id in shown)


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _add_node(
    parent: etree._Element, view: DroidbotView, index: int, by_id: dict[int, DroidbotView]
) -> None:
    node = etree.SubElement(parent, "node")
    # Attribute order as `uiautomator dump` writes it.
    node.set("index", str(index))
    node.set("text", view.text or "")
    node.set("resource-id", view.resource_id or "")
    node.set("class", view.class_name)
    node.set("package", view.package or "")
    node.set("content-desc", view.content_description or "")
    node.set("checkable", _bool(view.checkable))
    node.set("checked", _bool(view.checked))
    node.set("clickable", _bool(view.clickable))
    node.set("enabled", _bool(view.enabled))
    node.set("focusable", _bool(view.focusable))
    node.set("focused", _bool(view.focused))
    node.set("scrollable", _bool(view.scrollable))
    node.set("long-clickable", _bool(view.long_clickable))
    node.set("password", _bool(view.is_password))
    node.set("selected", _bool(view.selected))
    node.set("bounds", view.box.to_uiautomator())
    children = [by_id[c] for c in view.children if c in by_id]
    for child_index, child in enumerate(children):
        _add_node(node, child, child_index, by_id)


def convert_droidbot_state(state: DroidbotState) -> str:
    """The ``uiautomator dump`` XML a phone would have printed for this state.

    Invisible views and their subtrees are left out, as uiautomator does.
    """
    visible = state.visible_views()
    by_id = {v.temp_id: v for v in visible}
    roots = [v for v in visible if v.parent not in by_id]
    hierarchy = etree.Element("hierarchy", rotation="0")
    for index, view in enumerate(roots):
        _add_node(hierarchy, view, index, by_id)
    body: str = etree.tostring(hierarchy, encoding="unicode")
    return "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>" + body


def load_droidbot_state(path: Path) -> DroidbotState:
    """Read one ``state_<ts>.json``; raises :class:`HierarchyError` when it is not one."""
    try:
        return DroidbotState.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as exc:
        raise HierarchyError(
            f"cannot read DroidBot state {path}: {exc}",
            hint="point at a states/state_<ts>.json file written by DroidBot",
        ) from exc


def observe_droidbot_state(path: Path, *, serial: str = "droidbot", step: int = 0) -> Observation:
    """A recorded state as the :class:`Observation` a phone would have produced.

    The screenshot is the recording's ``screen_<ts>.jpg`` beside the JSON
    (JPEG bytes; perception decodes any image format Pillow reads).
    """
    state = load_droidbot_state(path)
    image_path = path.with_name(path.name.replace("state_", "screen_", 1)).with_suffix(".jpg")
    try:
        image = image_path.read_bytes()
    except OSError as exc:
        raise HierarchyError(
            f"DroidBot state {path} has no screenshot {image_path.name}",
            hint="keep each state_<ts>.json beside its screen_<ts>.jpg",
        ) from exc
    return Observation(
        serial=serial,
        step=step,
        package=state.package,
        activity=state.activity,
        width=state.width,
        height=state.height,
        screenshot_png=image,
        hierarchy_xml=convert_droidbot_state(state),
    )


def list_droidbot_states(data_dir: Path) -> list[Path]:
    """Every ``states/state_*.json`` under ``data_dir``, sorted (deterministic order)."""
    return sorted(data_dir.glob("*/states/state_*.json")) + sorted(
        data_dir.glob("states/state_*.json")
    )
