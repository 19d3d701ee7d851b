"""A persistent OCR cache for benchmarks: an engine's reads kept on disk by image content.

Full-screen OCR of every recorded screen takes tens of minutes on a shared
2-core machine; the reads do not change when perception's own code does, so
a before/after comparison reads them once. One JSON line per image:
``{"image": <content hash>, "lines": [{text, box, confidence}, ...]}``.
Timings are never taken through this store (it answers from disk).
"""

from __future__ import annotations

import json
from pathlib import Path

from inference.perception import OcrEngine, OcrLine
from inference.perception.image import RGBImage, hash_image

__all__ = ["StoredOcrEngine"]


class StoredOcrEngine:
    """``engine``'s reads, answered from ``path`` when the image was read before."""

    name = "stored"

    def __init__(self, engine: OcrEngine, path: Path) -> None:
        self.engine, self.path = engine, path
        self.reads: dict[str, tuple[OcrLine, ...]] = {}
        self.misses = 0
        if path.exists():
            for line in path.read_text().splitlines():
                entry = json.loads(line)
                self.reads[entry["image"]] = tuple(OcrLine.model_validate(x) for x in entry["lines"])

    def read(self, image: RGBImage) -> tuple[OcrLine, ...]:
        """The stored lines of ``image``, reading (and storing) them the first time."""
        key = hash_image(image)
        if key not in self.reads:
            self.misses += 1
            lines = self.engine.read(image)
            self.reads[key] = lines
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a") as out:
                out.write(json.dumps({"image": key, "lines": [x.model_dump(mode="json") for x in lines]}) + "\n")
        return self.reads[key]
