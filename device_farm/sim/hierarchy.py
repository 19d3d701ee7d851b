"""``uiautomator dump`` XML, byte for byte in the format Android writes.

One line, ``<?xml ... standalone='yes' ?>``, ``<hierarchy rotation="0">``,
then ``node`` elements with the attributes in Android's order.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from device_farm.sim.node import Node

__all__ = ["dump_hierarchy"]

_HEADER = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"


_ENTITIES = {'"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}


def quoteattr(value: str) -> str:
    """A double-quoted XML attribute value, escaped as Android's serializer does."""
    return '"' + escape(value, _ENTITIES) + '"'


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _write(node: Node, index: int, out: list[str]) -> None:
    left, top, right, bottom = node.box
    out.append(
        f'<node index="{index}" text={quoteattr(node.text)} resource-id={quoteattr(node.resource_id)} '
        f'class={quoteattr(node.cls)} package={quoteattr(node.package)} '
        f'content-desc={quoteattr(node.desc)} checkable="{_flag(node.checkable)}" '
        f'checked="{_flag(node.checked)}" clickable="{_flag(node.clickable)}" '
        f'enabled="{_flag(node.enabled)}" focusable="{_flag(node.focusable)}" '
        f'focused="{_flag(node.focused)}" scrollable="{_flag(node.scrollable)}" '
        f'long-clickable="{_flag(node.long_clickable)}" password="{_flag(node.password)}" '
        f'selected="{_flag(node.selected)}" bounds="[{left},{top}][{right},{bottom}]"'
    )
    if not node.children:
        out.append(" />")
        return
    out.append(">")
    for i, child in enumerate(node.children):
        _write(child, i, out)
    out.append("</node>")


def dump_hierarchy(windows: list[Node], rotation: int = 0) -> str:
    """The XML ``uiautomator dump`` writes for these window roots (z-order)."""
    out = [_HEADER, f'<hierarchy rotation="{rotation}">']
    for i, root in enumerate(windows):
        _write(root, i, out)
    out.append("</hierarchy>")
    return "".join(out)
