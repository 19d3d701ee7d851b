"""Evidence images: where captures are read from, and the highlight crops written beside them.

Synthesis needs only two verbs from an object store, so it names them in a
small :class:`EvidenceStore` protocol: the project's S3 store fits it, and so
does :class:`FolderStore`, a real store over a local folder (used to render a
report from files, e.g. ``droidretriever report`` on a copied run).
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

from PIL import Image, ImageDraw, UnidentifiedImageError

from core.models import Bounds, Capture, Citation
from tasks.synthesis.errors import EvidenceError

__all__ = [
    "EvidenceStore",
    "FolderStore",
    "crop_key_for",
    "load_capture_image",
    "render_highlight_crop",
    "store_highlight_crops",
]

_MARGIN = 24
_OUTLINE = (229, 57, 53)


class EvidenceStore(Protocol):
    """The two object-store verbs synthesis uses (positional, so any adapter's names fit)."""

    def put_bytes(self, key: str, data: bytes, content_type: str, /) -> object: ...

    def get_bytes(self, key: str, /) -> bytes: ...


class FolderStore:
    """Objects as files under ``root``; keys are relative paths (``runs/<id>/report.html``)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, key: str) -> Path:
        path = (self.root / key).resolve()
        if not path.is_relative_to(self.root.resolve()):
            raise EvidenceError(f"object key {key!r} points outside {self.root}",
                                hint="keys are relative paths such as runs/<run_id>/report.md")
        return path

    def put_bytes(self, key: str, data: bytes, content_type: str = "", /) -> Path:
        """Write ``data`` at ``key`` (the content type is implied by the file name here)."""
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        except OSError as exc:
            raise EvidenceError(f"cannot write {key} under {self.root}: {exc.strerror}",
                                hint="check the folder's permissions and free disk space") from exc
        return path

    def get_bytes(self, key: str, /) -> bytes:
        """Read the object at ``key``."""
        path = self._path(key)
        try:
            return path.read_bytes()
        except OSError as exc:
            raise EvidenceError(f"cannot read {key} from {self.root}: {exc.strerror}",
                                hint="check that the run's captures were copied there") from exc


def load_capture_image(store: EvidenceStore, capture: Capture) -> Image.Image:
    """The stitched image of ``capture``, decoded, in RGB."""
    data = store.get_bytes(capture.image_key)
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except (UnidentifiedImageError, OSError) as exc:
        raise EvidenceError(
            f"capture {capture.id}: {capture.image_key} is not a readable image",
            hint="the capture was stored incompletely; re-run the sub-task to capture it again",
        ) from exc
    return image.convert("RGB")


def crop_key_for(run_id: str, capture_id: str, box: Bounds) -> str:
    """Content-addressed key, so a retried synthesis overwrites instead of duplicating."""
    digest = hashlib.sha1(f"{capture_id}:{box.to_uiautomator()}".encode()).hexdigest()[:12]
    return f"runs/{run_id}/highlights/{capture_id}-{digest}.png"


def render_highlight_crop(image: Image.Image, box: Bounds) -> bytes:
    """PNG of ``box`` with a margin of context and the box outlined."""
    left = max(0, box.left - _MARGIN)
    top = max(0, box.top - _MARGIN)
    right = min(image.width, box.right + _MARGIN)
    bottom = min(image.height, box.bottom + _MARGIN)
    if right <= left or bottom <= top:
        raise EvidenceError(f"box {box.to_uiautomator()} lies outside the capture "
                            f"({image.width}x{image.height})",
                            hint="the capture's elements do not match its image; re-capture")
    crop = image.crop((left, top, right, bottom))
    ImageDraw.Draw(crop).rectangle(
        (box.left - left, box.top - top, box.right - left - 1, box.bottom - top - 1),
        outline=_OUTLINE, width=4)
    out = io.BytesIO()
    crop.save(out, format="PNG", optimize=False)
    return out.getvalue()


def store_highlight_crops(
    store: EvidenceStore, run_id: str, citations: Iterable[Citation], captures: Sequence[Capture]
) -> tuple[Citation, ...]:
    """Store one crop per grounded box; return the citations with ``crop_key`` set.

    Each capture image is decoded once, however many citations point into it.
    """
    by_id = {c.id: c for c in captures}
    images: dict[str, Image.Image] = {}
    written: set[str] = set()
    result: list[Citation] = []
    for citation in citations:
        capture = by_id.get(citation.capture_id)
        if not citation.grounded or citation.box is None or capture is None:
            result.append(citation)
            continue
        key = crop_key_for(run_id, capture.id, citation.box)
        if key not in written:
            if capture.id not in images:
                images[capture.id] = load_capture_image(store, capture)
            store.put_bytes(key, render_highlight_crop(images[capture.id], citation.box),
                            "image/png")
            written.add(key)
        result.append(citation.model_copy(update={"crop_key": key}))
    return tuple(result)
