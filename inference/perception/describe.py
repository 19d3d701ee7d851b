"""Screen description (VT Description): compact, deterministic text for a model.

One line per element: a number, a role, the label, states and a coarse
position, grouped by layout block, e.g.::

    Screen com.etsy.android/.HomeActivity, 14 elements
    # top
    [1] input "Search for anything" focused top-center
    [2] button desc="Cart" top-right
    [3] button ~"app bar, left" top-left
    [4] "Free shipping on orders over $35" top-center

Plain text has no role word (most lines are text, and every token is paid
for on each model call). When ``block_ids`` keeps only some blocks, the first
line says how many elements and blocks were left out.

Numbers follow block order, then reading order, ties broken by the stable
element id, so identical screens give identical text. A model answers with
a number; :meth:`ScreenDescription.element_id` maps it back.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from core.models import ElementSource, Screen, UIElement
from inference.perception.blocks import BlockPartition
from inference.perception.naming import id_words, name_unlabelled
from inference.perception.redact import Redactor
from inference.perception.tokens import count_tokens

__all__ = ["ScreenDescription", "describe_element", "describe_screen", "element_role"]

_MAX_LABEL = 48


class ScreenDescription(BaseModel):
    """The text, its token count, and which element each number stands for."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    tokens: int
    element_ids: tuple[str, ...]  # element_ids[n - 1] is element [n]
    sensitive_masked: int = 0  # elements whose text the redactor changed
    left_out: int = 0  # elements of blocks not shown (a large screen cut to some of its blocks)

    def element_id(self, number: int) -> str | None:
        """The element id of ``[number]`` (1-based), or None when out of range."""
        return self.element_ids[number - 1] if 1 <= number <= len(self.element_ids) else None


def element_role(element: UIElement) -> str:
    """A one-word role a model understands: button, input, switch, list, image, text ..."""
    short = element.class_name.rsplit(".", 1)[-1]
    if element.source is ElementSource.DETECTOR:
        return short
    if element.editable:
        return "password" if element.password else "input"
    if element.checkable:
        return {"Switch": "switch", "RadioButton": "radio", "CheckBox": "checkbox"}.get(short, "toggle")
    if element.scrollable:
        return "list" if any(k in short for k in ("Recycler", "List", "Grid")) else "scroll"
    if "Tab" in short:
        return "tab"
    if "Button" in short or (element.clickable and "Image" in short):
        return "button"
    if element.clickable or element.long_clickable:
        return "item"
    if "Image" in short:
        return "image"
    return "text"


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_LABEL else text[: _MAX_LABEL - 1] + "…"


def _position(element: UIElement, width: int, height: int) -> str:
    center = element.bounds.center
    row = ("top", "middle", "bottom")[min(2, 3 * center.y // max(1, height))]
    col = ("left", "center", "right")[min(2, 3 * center.x // max(1, width))]
    return f"{row}-{col}"


def describe_element(element: UIElement, number: int, width: int, height: int, name: str = "",
                     *, inferred: bool = True) -> str:
    """One line: ``[n] role "label" desc="..." states position``; ``name`` names an unlabelled one
    (``~"name"`` when inferred, else ``id=name``: the raw resource id)."""
    role = element_role(element)
    parts = [f"[{number}]"] if role == "text" else [f"[{number}]", role]
    if element.text:
        parts.append(f'"{_clip(element.text)}"')
    if element.content_desc and element.content_desc != element.text:
        parts.append(f'desc="{_clip(element.content_desc)}"')
    if not element.label and name:
        # "~": a name inferred from its id, icon or place
        parts.append(f'~"{_clip(name)}"' if inferred else f"id={name}")
    states = [
        name for name, on in (
            ("checked", element.checked), ("selected", element.selected),
            ("focused", element.focused), ("disabled", not element.enabled),
            ("long-press", element.long_clickable and not element.clickable),
        ) if on
    ]
    parts.extend(states)
    if element.source is ElementSource.OCR:
        parts.append("(ocr)")
    parts.append(_position(element, width, height))
    return " ".join(parts)


def _name(element: UIElement, elements: tuple[UIElement, ...], screen: Screen,
          icons: dict[str, str] | None, infer: bool) -> str:
    if element.label or not (infer or element.resource_id):
        return ""
    if not infer:
        return element.resource_id.rsplit("/", 1)[-1]
    if element.clickable or element.long_clickable or element.editable:
        icon = icons.get(element.id, "") if icons else ""
        return name_unlabelled(element, elements, screen.width, screen.height, icon)
    return id_words(element.resource_id)


def _block_place(top: int, height: int) -> str:
    return ("top", "middle", "bottom")[min(2, 3 * top // max(1, height))]


def describe_screen(
    screen: Screen,
    partition: BlockPartition | None = None,
    *,
    redactor: Redactor | None = None,
    block_ids: tuple[str, ...] | None = None,
    icons: dict[str, str] | None = None,
    name_unlabelled: bool = True,
) -> ScreenDescription:
    """Describe ``screen`` for a model.

    ``partition`` groups the lines by layout block (without it: one group);
    ``block_ids`` keeps only those blocks (what a cloud model is sent);
    ``redactor`` masks personal data first (pass one for a ``cloud`` model);
    ``icons`` (element id -> icon name) names unlabelled controls by their icon.
    Unlabelled controls are named ``~"words"`` (:mod:`inference.perception.naming`);
    ``name_unlabelled=False`` shows only their raw resource id, as before naming existed.
    """
    elements = screen.elements
    masked_count = 0
    if redactor is not None:
        elements, sensitive = redactor.redact_elements(elements)
        masked_count = len(sensitive)
    by_id = {e.id: e for e in elements}
    groups: list[tuple[str, list[UIElement]]] = []
    if partition is not None and partition.blocks:
        for block in partition.blocks:
            if block_ids is not None and block.id not in block_ids:
                continue
            members = [by_id[i] for i in block.element_ids if i in by_id]
            groups.append((f"# {_block_place(block.bounds.top, screen.height)}", members))
    else:
        ordered = sorted(elements, key=lambda e: (e.bounds.top, e.bounds.left, e.id))
        groups.append(("", ordered))
    shown = sum(len(m) for _, m in groups)
    where = f"{screen.package}/{screen.activity}" if screen.activity else screen.package
    header = f"Screen {where}, {shown} elements"
    if partition is not None and len(groups) < len(partition.blocks):
        header += f" of {len(elements)} ({len(groups)} of {len(partition.blocks)} blocks shown)"
    lines = [header]
    ids: list[str] = []
    for heading, members in groups:
        if heading:
            lines.append(heading)
        for element in members:
            ids.append(element.id)
            lines.append(describe_element(element, len(ids), screen.width, screen.height,
                                          _name(element, elements, screen, icons, name_unlabelled),
                                          inferred=name_unlabelled))
    text = "\n".join(lines)
    return ScreenDescription(
        text=text, tokens=count_tokens(text), element_ids=tuple(ids), sensitive_masked=masked_count,
        left_out=len(elements) - shown if partition is not None and len(groups) < len(partition.blocks) else 0,
    )
