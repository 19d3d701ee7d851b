"""Layout-aware blocks (CORE, section 3.1): group elements by a shared ancestor.

Every important element has an ancestor path (root ... parent). Going down
level by level, elements are grouped by their ancestor at that level; the
first level that yields at least three groups is the partition. Blocks are
what a local model ranks and what a cloud model receives one at a time, so
the exposure (elements that leave the device) is counted per block sent.
"""

from __future__ import annotations

import hashlib

from core.models import Bounds, Frozen, UIElement
from inference.perception.hierarchy import ViewTree

__all__ = ["BlockPartition", "Exposure", "LayoutBlock", "count_exposure", "partition_blocks"]

_MIN_BLOCKS = 3



class LayoutBlock(Frozen):
    """Elements under one ancestor container, in reading order."""

    id: str  # stable: derived from the anchor node's id
    index: int  # reading order of blocks, 0-based
    anchor: str  # node id of the shared ancestor (or the element's own id)
    element_ids: tuple[str, ...]
    bounds: Bounds


class BlockPartition(Frozen):
    """The chosen level and its blocks."""

    level: int
    blocks: tuple[LayoutBlock, ...]

    def block_of(self, element_id: str) -> LayoutBlock | None:
        """The block holding ``element_id``, or None."""
        return next((b for b in self.blocks if element_id in b.element_ids), None)


class Exposure(Frozen):
    """How much of a screen would leave the device for a cloud model."""

    total: int
    exposed: int
    sensitive_exposed: int = 0

    @property
    def share(self) -> float:
        return self.exposed / self.total if self.total else 0.0


def _paths(elements: tuple[UIElement, ...], tree: ViewTree) -> dict[str, tuple[str, ...]]:
    paths: dict[str, tuple[str, ...]] = {}
    for element in elements:
        if element.id in tree.ancestors:
            paths[element.id] = tree.ancestors[element.id]
        elif element.parent_id is not None and element.parent_id in tree.ancestors:
            # OCR / detector elements hang under the hierarchy element holding them.
            paths[element.id] = (*tree.ancestors[element.parent_id], element.parent_id)
        else:
            paths[element.id] = ()
    return paths


def _union(boxes: list[Bounds]) -> Bounds:
    return Bounds(
        left=min(b.left for b in boxes), top=min(b.top for b in boxes),
        right=max(b.right for b in boxes), bottom=max(b.bottom for b in boxes),
    )


def partition_blocks(elements: tuple[UIElement, ...], tree: ViewTree) -> BlockPartition:
    """Partition elements into layout blocks at the first level giving >= 3 blocks."""
    if not elements:
        return BlockPartition(level=0, blocks=())
    paths = _paths(elements, tree)
    deepest = max(len(p) for p in paths.values())
    groups: dict[str, list[UIElement]] = {}
    level = 0
    for level in range(deepest + 1):
        groups = {}
        for element in elements:
            path = paths[element.id]
            key = path[level] if level < len(path) else element.id
            groups.setdefault(key, []).append(element)
        if len(groups) >= _MIN_BLOCKS:
            break
    ordered = sorted(
        groups.items(),
        key=lambda kv: (_union([e.bounds for e in kv[1]]).top, _union([e.bounds for e in kv[1]]).left, kv[0]),
    )
    blocks = []
    for index, (anchor, members) in enumerate(ordered):
        members.sort(key=lambda e: (e.bounds.top, e.bounds.left, e.id))
        blocks.append(
            LayoutBlock(
                id="b" + hashlib.blake2b(anchor.encode(), digest_size=4).hexdigest(),
                index=index,
                anchor=anchor,
                element_ids=tuple(e.id for e in members),
                bounds=_union([e.bounds for e in members]),
            )
        )
    return BlockPartition(level=level, blocks=tuple(blocks))


def count_exposure(
    partition: BlockPartition,
    sent_block_ids: tuple[str, ...],
    sensitive_ids: frozenset[str] = frozenset(),
) -> Exposure:
    """Elements in the blocks sent to a cloud model, and how many were sensitive.

    ``sensitive_ids`` comes from the redactor (elements whose text it masked,
    password fields).
    """
    total = sum(len(b.element_ids) for b in partition.blocks)
    sent = [e for b in partition.blocks if b.id in sent_block_ids for e in b.element_ids]
    return Exposure(
        total=total, exposed=len(sent), sensitive_exposed=sum(1 for e in sent if e in sensitive_ids)
    )
