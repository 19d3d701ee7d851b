"""uiautomator XML -> important ``UIElement``s with stable ids, plus the kept view tree.

Ids come from each node's path (class, resource-id and its ordinal among
same-class, same-id siblings at every level), hashed. An unrelated node of
another kind appearing elsewhere does not shift them, and identical dumps give
identical ids, which descriptions, route memory and loop detection rely on.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field

from lxml import etree

from core.models import Bounds, ElementSource, Frozen, UIElement
from inference.errors import HierarchyError
from inference.vocabulary import load_vocabulary

__all__ = ["ParsedHierarchy", "ViewNode", "ViewTree", "parse_hierarchy"]

_BOUNDS_RE = re.compile(r"^\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]$")
# A clickable container larger than this share of the screen is a page, not a
# button: it must not swallow the texts of everything under it.
_MAX_MERGE_AREA = 0.5
_MERGE_SEPARATOR = " | "



class ViewNode(Frozen):
    """One node of the dump, important or not (layout blocks need the containers)."""

    id: str
    parent_id: str | None
    depth: int
    class_name: str
    resource_id: str = ""
    package: str = ""
    bounds: Bounds
    element_id: str | None = None  # the element this node became or was merged into
    labelled: bool = False  # carries text or a content-desc of its own
    label: str = ""  # that text (else content-desc): a merged text keeps its own box here


class ViewTree(Frozen):
    """The kept tree: every node in document order and each element's ancestor path."""

    nodes: tuple[ViewNode, ...]
    # element id -> node ids from the root down to the element's parent node
    ancestors: dict[str, tuple[str, ...]]

    def node(self, node_id: str) -> ViewNode | None:
        """The node with this id, or None."""
        return next((n for n in self.nodes if n.id == node_id), None)


class ParsedHierarchy(Frozen):
    """The parser's output: elements (document order) and the tree they came from."""

    elements: tuple[UIElement, ...]
    tree: ViewTree


@dataclass
class _Draft:
    """An element under construction: merged child texts arrive after the parent."""

    attrs: dict[str, str]
    node_id: str
    element_id: str
    bounds: Bounds
    parent_element: str | None
    absorbs: bool
    merged: list[str] = field(default_factory=list)


def _hash_id(prefix: str, key: str) -> str:
    return prefix + hashlib.blake2b(key.encode(), digest_size=5).hexdigest()


def _flag(attrs: dict[str, str], name: str) -> bool:
    return attrs.get(name) == "true"


def _parse_bounds(text: str, width: int, height: int, where: str) -> Bounds:
    match = _BOUNDS_RE.match(text.strip())
    if match is None:
        raise HierarchyError(
            f"{where}: the hierarchy has a node with unreadable bounds {text!r}",
            hint="the dump is corrupt or not from uiautomator; dump the screen again",
        )
    left, top, right, bottom = (int(g) for g in match.groups())
    # Clamp to the screen: off-screen parts cannot be tapped or read.
    left, right = max(0, min(left, width)), max(0, min(right, width))
    top, bottom = max(0, min(top, height)), max(0, min(bottom, height))
    return Bounds(left=left, top=top, right=max(left, right), bottom=max(top, bottom))


def _load_root(xml: str, where: str) -> etree._Element:
    # `uiautomator dump /dev/tty` appends "UI hierchary dumped to: ..." after the XML.
    start, end = xml.find("<"), xml.rfind(">")
    if start < 0 or end < start:
        raise HierarchyError(
            f"{where}: the hierarchy dump is empty or not XML",
            hint="the screen may be secure or still loading; wait a moment and observe again",
        )
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
    try:
        root = etree.fromstring(xml[start : end + 1].encode("utf-8"), parser)
    except etree.XMLSyntaxError as exc:
        raise HierarchyError(
            f"{where}: the hierarchy dump is malformed XML ({exc})",
            hint="dump the screen again; if it keeps failing, restart uiautomator on the device",
        ) from exc
    if root.tag not in ("hierarchy", "node"):
        raise HierarchyError(
            f"{where}: the hierarchy dump's root is <{root.tag}>, not <hierarchy>",
            hint="pass the output of `uiautomator dump` unchanged",
        )
    return root


def _is_editable(attrs: dict[str, str]) -> bool:
    return "EditText" in attrs.get("class", "") or _flag(attrs, "editable")


def _is_actionable(attrs: dict[str, str]) -> bool:
    return (
        _flag(attrs, "clickable")
        or _flag(attrs, "long-clickable")
        or _flag(attrs, "scrollable")
        or _flag(attrs, "checkable")
        or _is_editable(attrs)
    )


# Words that name a secret field; a value typed into one is never among them.
_PASSWORD_HINT_WORDS = load_vocabulary("fields").words("secret_hint")
_MASK_CHARS = frozenset("•●*·∙")


def _is_password_hint(text: str) -> bool:
    """True for an empty secret field's hint ("Payment password"), never for a value."""
    if not text or any(ch in _MASK_CHARS for ch in text) or len(text) > 40:
        return False
    lowered = text.lower()
    return any(word in lowered for word in _PASSWORD_HINT_WORDS) and not any(
        ch.isdigit() for ch in text
    )


def _finish(draft: _Draft) -> UIElement:
    attrs = draft.attrs
    password = _flag(attrs, "password")
    raw = attrs.get("text", "").strip()
    # A password field never carries its value, whoever reads the element later. An
    # empty field reports its hint as text ("Verification code"); that hint is kept so
    # the field can be named and grounded, but only when it is recognisably a hint.
    own = raw if not password or _is_password_hint(raw) else ""
    text = _MERGE_SEPARATOR.join([p for p in (own, *draft.merged) if p])
    return UIElement(
        id=draft.element_id,
        class_name=attrs.get("class", ""),
        text=text,
        resource_id=attrs.get("resource-id", ""),
        content_desc=attrs.get("content-desc", "").strip(),
        bounds=draft.bounds,
        clickable=_flag(attrs, "clickable"),
        long_clickable=_flag(attrs, "long-clickable"),
        scrollable=_flag(attrs, "scrollable"),
        editable=_is_editable(attrs),
        password=password,
        checkable=_flag(attrs, "checkable"),
        checked=_flag(attrs, "checked"),
        selected=_flag(attrs, "selected"),
        focused=_flag(attrs, "focused"),
        enabled=attrs.get("enabled", "true") != "false",
        source=ElementSource.HIERARCHY,
        parent_id=draft.parent_element,
    )


# Over 80 lines, on purpose: one walk of the tree with an explicit stack (no recursion depth to
# meet on a deeply nested dump), whose state (drafts, text merges, ancestors) every node reads and
# writes; split into functions, each node would pass seven values in and out of each. It is the
# hot path of perception (bench.perception).
def parse_hierarchy(
    xml: str,
    *,
    width: int,
    height: int,
    where: str = "device ?, step ?",
    merge_text: bool = True,
) -> ParsedHierarchy:
    """Parse a ``uiautomator dump`` into important elements and the kept tree.

    Important nodes are clickable, long-clickable, editable, scrollable,
    checkable, or carry text or a content-desc, and are on screen. With
    ``merge_text`` a text-only node inside a clickable (not page-sized) node is
    folded into it, so "tap the row" finds the row by its texts; captures that
    need one box per line pass ``merge_text=False``. ``where`` names the device
    and step in errors. Raises :class:`HierarchyError` on a malformed dump.
    """
    root = _load_root(xml, where)
    screen_area = width * height
    nodes: list[ViewNode] = []
    drafts: dict[str, _Draft] = {}
    ancestors: dict[str, tuple[str, ...]] = {}
    # (xml element, parent path key, parent node id, ancestor node ids,
    #  nearest element id, nearest absorbing element id, depth)
    stack: list[tuple[etree._Element, str, str | None, tuple[str, ...], str | None, str | None, int]]
    stack = []

    def push_children(
        parent: etree._Element, key: str, node_id: str | None, path: tuple[str, ...],
        element: str | None, absorber: str | None, depth: int,
    ) -> None:
        counts: Counter[tuple[str, str]] = Counter()
        children = []
        for child in parent:
            if child.tag != "node":
                continue
            kind = (child.get("class", ""), child.get("resource-id", ""))
            seg = f"{kind[0].rsplit('.', 1)[-1]}#{kind[1]}#{counts[kind]}"
            counts[kind] += 1
            children.append((child, f"{key}/{seg}", node_id, path, element, absorber, depth))
        stack.extend(reversed(children))  # keep document order when popping

    push_children(root, "", None, (), None, None, 0)
    while stack:
        el, key, parent_node, path, parent_element, absorber, depth = stack.pop()
        attrs = {k: v for k, v in el.attrib.items() if isinstance(k, str) and isinstance(v, str)}
        node_id = _hash_id("n", key)
        bounds = _parse_bounds(attrs.get("bounds", "[0,0][0,0]"), width, height, where)
        label = attrs.get("text", "").strip() or attrs.get("content-desc", "").strip()
        actionable = _is_actionable(attrs)
        element_id: str | None = None
        on_screen = bounds.area > 0
        if on_screen and not actionable and label and absorber is not None and merge_text:
            owner = drafts[absorber]
            if not _flag(attrs, "password") and owner.bounds.intersection(bounds) > 0:
                owner.merged.append(label)
                element_id = absorber
        if element_id is None and on_screen and (actionable or label):
            element_id = _hash_id("e", key)
            absorbs = (
                (_flag(attrs, "clickable") or _flag(attrs, "long-clickable"))
                and not _flag(attrs, "scrollable")
                and not _is_editable(attrs)
                and bounds.area <= _MAX_MERGE_AREA * screen_area
            )
            drafts[element_id] = _Draft(
                attrs, node_id, element_id, bounds, parent_element, absorbs
            )
            ancestors[element_id] = path
        nodes.append(
            ViewNode(
                id=node_id,
                parent_id=parent_node,
                depth=depth,
                class_name=attrs.get("class", ""),
                resource_id=attrs.get("resource-id", ""),
                package=attrs.get("package", ""),
                bounds=bounds,
                element_id=element_id,
                labelled=bool(label),
                label=label if not _flag(attrs, "password") else "",
            )
        )
        own = element_id if element_id is not None and element_id in drafts else None
        next_element = own if own is not None and drafts[own].node_id == node_id else parent_element
        next_absorber = absorber
        if own is not None and drafts[own].node_id == node_id and drafts[own].absorbs:
            next_absorber = own
        push_children(
            el, key, node_id, (*path, node_id), next_element, next_absorber, depth + 1
        )
    elements = tuple(_finish(d) for d in drafts.values())
    return ParsedHierarchy(elements=elements, tree=ViewTree(nodes=tuple(nodes), ancestors=ancestors))
