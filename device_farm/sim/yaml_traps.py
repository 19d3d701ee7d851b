"""YAML 1.1 traps in app files: plain scalars PyYAML reads as something else than text.

PyYAML follows YAML 1.1, where an unquoted ``no``/``yes``/``on``/``off`` is a
boolean, ``1000:1`` or ``12:15`` is a base-60 integer (735), and
``2025-06-25`` is a date object. App authors almost always mean text, so the
loader finds these plain scalars (with their line) and says to quote them.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

__all__ = ["YamlTrap", "find_yaml_traps"]

_BOOL_TAG = "tag:yaml.org,2002:bool"
_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


@dataclass(frozen=True)
class YamlTrap:
    """One plain scalar that YAML 1.1 does not read as the text it looks like."""

    path: tuple[str, ...]  # keys and list indexes from the document root, as loaded
    line: int  # 1-based
    text: str  # as written
    kind: str  # "boolean", "base-60 number" or "date object"
    read_as: str  # what it became: "false", "735", "2025-06-25"
    is_key: bool  # a mapping key (``no: 1``), not a value

    @property
    def always_wrong(self) -> bool:
        """Dates, base-60 numbers and boolean keys are never meant; a ``no`` value may be."""
        return self.is_key or self.kind != "boolean"

    def describe(self, where: str) -> str:
        """A sentence that says what YAML did and to quote the value."""
        role = "key" if self.is_key else "value"
        field = ".".join(self.path) or "(top level)"
        return (f"{where} line {self.line} ({field}): the unquoted {role} {self.text} is read by YAML 1.1 "
                f"as the {self.kind} {self.read_as}; quote it (\"{self.text}\") if you mean the text")


def _trap(node: yaml.ScalarNode, path: tuple[str, ...], is_key: bool) -> YamlTrap | None:
    if node.style is not None:  # quoted or block scalars are always text
        return None
    loaded = yaml.safe_load(node.value)
    if node.tag == _BOOL_TAG and node.value.lower() not in ("true", "false"):
        kind, read_as = "boolean", str(loaded).lower()
    elif node.tag in _NUMBER_TAGS and ":" in node.value:  # sexagesimal: 12:15 -> 735
        kind, read_as = "base-60 number", str(loaded)
    elif node.tag == _TIMESTAMP_TAG:
        kind, read_as = "date object", str(loaded)
    else:
        return None
    return YamlTrap(path, node.start_mark.line + 1, node.value, kind, read_as, is_key)


def _key_text(node: yaml.Node) -> str:
    """A key as it is after loading (``no`` -> ``False``), to match pydantic's error locations."""
    if isinstance(node, yaml.ScalarNode):
        return str(yaml.safe_load(node.value) if node.style is None else node.value)
    return "?"


def _walk(node: yaml.Node, path: tuple[str, ...], found: list[YamlTrap]) -> None:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            trap = _trap(key, path, is_key=True) if isinstance(key, yaml.ScalarNode) else None
            if trap is not None:
                found.append(trap)
            _walk(value, (*path, _key_text(key)), found)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*path, str(index)), found)
    elif isinstance(node, yaml.ScalarNode):
        trap = _trap(node, path, is_key=False)
        if trap is not None:
            found.append(trap)


def find_yaml_traps(text: str, prefix: tuple[str, ...] = ()) -> list[YamlTrap]:
    """Every trap scalar of the YAML document ``text`` (which must already parse)."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    found: list[YamlTrap] = []
    if root is not None:
        _walk(root, prefix, found)
    return found
