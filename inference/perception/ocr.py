"""OCR engines behind one protocol, and a bounded cache keyed by image content.

Backends (:func:`inference.perception.ocr_backends.create_ocr_engine` picks one):
- :class:`RapidOcrEngine` (default install): PP-OCRv4 ONNX models shipped
  inside the ``rapidocr-onnxruntime`` wheel, so it works offline on a CPU.
- :class:`PaddleOcrEngine` (``gpu`` extra): PaddleOCR, imported lazily.
- :class:`~inference.perception.ocr_client.OcrServiceClient`: the host's shared
  OCR service, which holds one of the two for every worker of the host.

Phone screens are upright, so the angle classifier is skipped (it costs time
and only helps with rotated photos).

Resident memory: a read of a full screenshot allocates a few hundred MB of
tensors that glibc keeps after they are freed (a process grew to 488 MB after
102 reads); :class:`RapidOcrEngine` gives freed pages back after every read
(``malloc_trim``): 151 MB after the same reads, for a little more time per
read (docs/benchmarks.md, "Worker memory"; ``python -m bench.worker_memory``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from core.models import Bounds
from inference.errors import BackendUnavailableError, OcrError
from inference.perception.image import RGBImage, hash_image

__all__ = [
    "CachedOcrEngine",
    "OcrEngine",
    "OcrLine",
    "PaddleOcrEngine",
    "RapidOcrEngine",
    "release_freed_memory",
]

_GPU_EXTRA_HINT = "install the gpu extra: pip install 'droidretriever[gpu]' (or use ocr_backend='rapidocr')"


class OcrLine(BaseModel):
    """One line of text found in an image, in that image's pixel coordinates."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    box: Bounds
    confidence: float = Field(ge=0.0, le=1.0)


@runtime_checkable
class OcrEngine(Protocol):
    """Reads the text lines of an RGB image."""

    name: str

    def read(self, image: RGBImage) -> tuple[OcrLine, ...]:
        """Every text line in ``image``; raises :class:`OcrError` on failure."""
        ...


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none (musl, macOS)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


def release_freed_memory() -> None:
    """Give the pages freed since the last call back to the system (glibc only; else nothing)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def _box_from_quad(quad: Any, width: int, height: int) -> Bounds:
    xs = [float(p[0]) for p in quad]
    ys = [float(p[1]) for p in quad]
    left, right = max(0, int(min(xs))), min(width, round(max(xs)))
    top, bottom = max(0, int(min(ys))), min(height, round(max(ys)))
    return Bounds(left=left, top=top, right=max(left, right), bottom=max(top, bottom))


class RapidOcrEngine:
    """RapidOCR (PP-OCRv4 det + rec on onnxruntime); models load on first use."""

    name = "rapidocr"

    def __init__(self, *, min_confidence: float = 0.5) -> None:
        self._min_confidence = min_confidence
        self._engine: Any = None

    def _load(self) -> Any:
        if self._engine is None:
            try:
                from rapidocr_onnxruntime import RapidOCR
            except ImportError as exc:
                raise BackendUnavailableError(
                    "RapidOCR is not installed",
                    hint="reinstall the project: pip install -e . (it depends on rapidocr-onnxruntime)",
                ) from exc
            self._engine = RapidOCR(text_score=self._min_confidence)
        return self._engine

    def read(self, image: RGBImage) -> tuple[OcrLine, ...]:
        """Every text line in ``image``."""
        height, width = image.shape[:2]
        if height < 4 or width < 4:
            return ()
        engine = self._load()
        try:
            result, _ = engine(image, use_cls=False)
        except Exception as exc:  # onnxruntime and cv2 raise many unrelated types
            raise OcrError(
                f"RapidOCR failed on a {width}x{height} image: {exc}",
                hint="check the screenshot is a normal RGB image; reinstall rapidocr-onnxruntime if it persists",
            ) from exc
        finally:
            release_freed_memory()  # the read's tensors: hundreds of MB glibc would keep
        lines = []
        for quad, text, score in result or ():
            if text.strip():
                box = _box_from_quad(quad, width, height)
                lines.append(OcrLine(text=text.strip(), box=box, confidence=min(1.0, float(score))))
        return tuple(lines)


class PaddleOcrEngine:
    """PaddleOCR (GPU); needs the ``gpu`` extra."""

    name = "paddle"

    def __init__(self, *, min_confidence: float = 0.5, use_gpu: bool = True) -> None:
        try:
            from paddleocr import PaddleOCR
        except ImportError as exc:
            raise BackendUnavailableError(
                "the PaddleOCR backend needs the paddleocr package, which is not installed",
                hint=_GPU_EXTRA_HINT,
            ) from exc
        self._min_confidence = min_confidence
        self._engine = PaddleOCR(use_angle_cls=False, use_gpu=use_gpu, show_log=False)

    def read(self, image: RGBImage) -> tuple[OcrLine, ...]:
        """Every text line in ``image``."""
        height, width = image.shape[:2]
        try:
            pages = self._engine.ocr(image[:, :, ::-1], cls=False)  # PaddleOCR wants BGR
        except Exception as exc:  # paddle raises its own and numpy types
            raise OcrError(f"PaddleOCR failed on a {width}x{height} image: {exc}") from exc
        lines = []
        for quad, (text, score) in (pages[0] if pages else None) or ():
            if text.strip() and float(score) >= self._min_confidence:
                box = _box_from_quad(quad, width, height)
                lines.append(OcrLine(text=text.strip(), box=box, confidence=min(1.0, float(score))))
        return tuple(lines)


class CachedOcrEngine:
    """Wraps an engine with a bounded LRU cache keyed by the image's content hash.

    The same banner or WebView region reappears step after step while a
    copilot navigates, and re-reading it costs hundreds of milliseconds.
    """

    def __init__(self, engine: OcrEngine, *, max_entries: int = 256) -> None:
        self.name = engine.name
        self._engine = engine
        self._max = max_entries
        self._cache: OrderedDict[str, tuple[OcrLine, ...]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def read(self, image: RGBImage) -> tuple[OcrLine, ...]:
        """Cached :meth:`OcrEngine.read`."""
        key = hash_image(image)
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            self.hits += 1
            return cached
        self.misses += 1
        lines = self._engine.read(image)
        if self._max > 0:
            self._cache[key] = lines
            while len(self._cache) > self._max:
                self._cache.popitem(last=False)
        return lines

    def __len__(self) -> int:
        return len(self._cache)
