"""The OCR engine the settings ask for: in this process, the host's shared service, or none."""

from __future__ import annotations

from core.config import PerceptionSettings
from inference.perception.ocr import CachedOcrEngine, OcrEngine, PaddleOcrEngine, RapidOcrEngine
from inference.perception.ocr_client import OcrServiceClient

__all__ = ["create_engine_in_process", "create_ocr_engine"]


def create_engine_in_process(backend: str, settings: PerceptionSettings) -> OcrEngine:
    """An engine of ``backend`` ("rapidocr" or "paddle") in this process, uncached."""
    if backend == "paddle":
        return PaddleOcrEngine(min_confidence=settings.ocr_min_confidence)
    return RapidOcrEngine(min_confidence=settings.ocr_min_confidence)


def create_ocr_engine(settings: PerceptionSettings) -> OcrEngine | None:
    """The engine the settings ask for, cached; None when OCR is switched off."""
    engine: OcrEngine
    if settings.ocr_backend == "none":
        return None
    if settings.ocr_backend == "service":
        engine = OcrServiceClient(settings)
    else:
        engine = create_engine_in_process(settings.ocr_backend, settings)
    return CachedOcrEngine(engine, max_entries=settings.ocr_cache_size)
