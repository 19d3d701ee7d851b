"""UI element detector behind one protocol: YOLO on onnxruntime (default) or ultralytics (gpu).

The detector finds widgets the hierarchy does not list (games, Flutter or
canvas apps, WebViews without accessibility). It is off by default
(``perception.detector_enabled``) until a trained model is committed; the
pre- and post-processing here (letterbox, YOLOv8 output decoding, NMS in
numpy) is what the exported ONNX model needs and is tested on its own.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import cv2
import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

from core.config import PerceptionSettings
from core.models import Bounds, ElementSource, UIElement
from inference.errors import BackendUnavailableError, DetectorError
from inference.perception.image import RGBImage

__all__ = [
    "DETECTOR_LABELS",
    "Detection",
    "Detector",
    "Letterbox",
    "OnnxDetector",
    "UltralyticsDetector",
    "create_detector",
    "decode_yolo_output",
    "detections_to_elements",
    "letterbox",
    "suppress_overlaps",
]

# Class order of the training script's dataset (detector_train.py writes data.yaml from it).
DETECTOR_LABELS: tuple[str, ...] = ("button", "text", "image", "input", "toggle")
_PAD_VALUE = 114  # YOLO's grey letterbox border


class Detection(BaseModel):
    """One detected widget in screen pixels."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: str
    box: Bounds
    confidence: float = Field(ge=0.0, le=1.0)


@runtime_checkable
class Detector(Protocol):
    """Finds UI widgets in an RGB screenshot."""

    name: str

    def detect(self, image: RGBImage) -> tuple[Detection, ...]:
        """Detected widgets; raises :class:`DetectorError` on failure."""
        ...


class Letterbox(BaseModel):
    """How an image was fitted into the square model input (to map boxes back)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scale: float
    pad_x: int
    pad_y: int
    size: int


def letterbox(image: RGBImage, size: int = 640) -> tuple[NDArray[np.float32], Letterbox]:
    """Resize keeping aspect ratio, pad to ``size`` square; NCHW float32 in 0..1."""
    height, width = image.shape[:2]
    scale = min(size / width, size / height)
    new_w, new_h = max(1, round(width * scale)), max(1, round(height * scale))
    resized = cv2.resize(image, (new_w, new_h), interpolation=cv2.INTER_LINEAR)
    canvas = np.full((size, size, 3), _PAD_VALUE, dtype=np.uint8)
    pad_x, pad_y = (size - new_w) // 2, (size - new_h) // 2
    canvas[pad_y : pad_y + new_h, pad_x : pad_x + new_w] = resized
    tensor = canvas.transpose(2, 0, 1)[None].astype(np.float32) / 255.0
    return tensor, Letterbox(scale=scale, pad_x=pad_x, pad_y=pad_y, size=size)


def suppress_overlaps(
    boxes: NDArray[np.float32], scores: NDArray[np.float32], iou_threshold: float = 0.5
) -> NDArray[np.int64]:
    """Greedy non-maximum suppression over ``xyxy`` boxes; indices kept, best first."""
    order = np.argsort(-scores, kind="stable")
    areas = np.clip(boxes[:, 2] - boxes[:, 0], 0, None) * np.clip(boxes[:, 3] - boxes[:, 1], 0, None)
    keep: list[int] = []
    while order.size:
        best = int(order[0])
        keep.append(best)
        rest = order[1:]
        x1 = np.maximum(boxes[best, 0], boxes[rest, 0])
        y1 = np.maximum(boxes[best, 1], boxes[rest, 1])
        x2 = np.minimum(boxes[best, 2], boxes[rest, 2])
        y2 = np.minimum(boxes[best, 3], boxes[rest, 3])
        inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
        union = areas[best] + areas[rest] - inter
        iou = np.where(union > 0, inter / np.maximum(union, 1e-9), 0.0)
        order = rest[iou <= iou_threshold]
    return np.asarray(keep, dtype=np.int64)


def decode_yolo_output(
    output: NDArray[np.float32],
    fit: Letterbox,
    *,
    width: int,
    height: int,
    labels: tuple[str, ...] = DETECTOR_LABELS,
    confidence: float = 0.35,
    iou_threshold: float = 0.5,
) -> tuple[Detection, ...]:
    """Decode a YOLOv8 head ``(1, 4 + classes, anchors)`` into screen detections.

    Boxes are ``cx, cy, w, h`` in letterboxed pixels; they are mapped back
    through the letterbox, clipped to the screen and de-duplicated per class.
    """
    channels = 4 + len(labels)
    preds = output[0] if output.ndim == 3 else output
    if preds.shape[0] != channels and preds.shape[-1] == channels:
        preds = preds.T
    if preds.ndim != 2 or preds.shape[0] != channels:
        raise DetectorError(
            f"the detector returned shape {tuple(output.shape)}, expected (1, {channels}, N)",
            hint="export the model with detector_train.py so its classes match DETECTOR_LABELS",
        )
    class_scores = preds[4:]
    classes = class_scores.argmax(axis=0)
    scores = class_scores.max(axis=0)
    mask = scores >= confidence
    if not mask.any():
        return ()
    cx, cy, w, h = preds[0, mask], preds[1, mask], preds[2, mask], preds[3, mask]
    xyxy = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
    xyxy[:, [0, 2]] = (xyxy[:, [0, 2]] - fit.pad_x) / fit.scale
    xyxy[:, [1, 3]] = (xyxy[:, [1, 3]] - fit.pad_y) / fit.scale
    xyxy[:, [0, 2]] = xyxy[:, [0, 2]].clip(0, width)
    xyxy[:, [1, 3]] = xyxy[:, [1, 3]].clip(0, height)
    kept_scores, kept_classes = scores[mask], classes[mask]
    detections: list[Detection] = []
    for cls in np.unique(kept_classes):
        idx = np.flatnonzero(kept_classes == cls)
        for i in idx[suppress_overlaps(xyxy[idx].astype(np.float32), kept_scores[idx], iou_threshold)]:
            x1, y1, x2, y2 = (round(float(v)) for v in xyxy[i])
            if x2 > x1 and y2 > y1:
                detections.append(
                    Detection(
                        label=labels[int(cls)],
                        box=Bounds(left=x1, top=y1, right=x2, bottom=y2),
                        confidence=min(1.0, float(kept_scores[i])),
                    )
                )
    return tuple(sorted(detections, key=lambda d: (d.box.top, d.box.left, d.label)))


class OnnxDetector:
    """A YOLOv8 ONNX export run with onnxruntime on the CPU (no torch)."""

    name = "onnx"

    def __init__(
        self,
        model_path: Path,
        *,
        labels: tuple[str, ...] = DETECTOR_LABELS,
        confidence: float = 0.35,
        iou_threshold: float = 0.5,
    ) -> None:
        if not model_path.is_file():
            raise BackendUnavailableError(
                f"the detector model {model_path} does not exist",
                hint="train one with `python -m inference.perception.detector_train` on a GPU "
                "machine, or set perception.detector_enabled = false",
            )
        import onnxruntime as ort

        try:
            self._session = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise DetectorError(
                f"cannot load the detector model {model_path}: {exc}",
                hint="re-export it with detector_train.py (opset 12+)",
            ) from exc
        model_input = self._session.get_inputs()[0]
        self._input = model_input.name
        side = model_input.shape[-1]
        self._size = side if isinstance(side, int) else 640
        self._labels = labels
        self._confidence = confidence
        self._iou = iou_threshold

    def detect(self, image: RGBImage) -> tuple[Detection, ...]:
        """Detected widgets in ``image``."""
        height, width = image.shape[:2]
        tensor, fit = letterbox(image, self._size)
        try:
            (output, *_) = self._session.run(None, {self._input: tensor})
        except Exception as exc:  # onnxruntime's errors are not a public hierarchy
            raise DetectorError(f"the detector failed on a {width}x{height} image: {exc}") from exc
        return decode_yolo_output(
            np.asarray(output, dtype=np.float32), fit, width=width, height=height,
            labels=self._labels, confidence=self._confidence, iou_threshold=self._iou,
        )


class UltralyticsDetector:
    """The YOLO ``.pt`` model through ultralytics (GPU); needs the ``gpu`` extra."""

    name = "ultralytics"

    def __init__(self, model_path: Path, *, confidence: float = 0.35) -> None:
        try:
            from ultralytics import YOLO
        except ImportError as exc:
            raise BackendUnavailableError(
                "the ultralytics detector backend needs the ultralytics package, which is not installed",
                hint="install the gpu extra: pip install 'droidretriever[gpu]', or use detector_backend='onnx'",
            ) from exc
        self._model: Any = YOLO(str(model_path))
        self._confidence = confidence

    def detect(self, image: RGBImage) -> tuple[Detection, ...]:
        """Detected widgets in ``image``."""
        try:
            (result,) = self._model.predict(image[:, :, ::-1], conf=self._confidence, verbose=False)
        except Exception as exc:  # torch and ultralytics raise many types
            raise DetectorError(f"the ultralytics detector failed: {exc}") from exc
        names = result.names
        detections = []
        for xyxy, conf, cls in zip(
            result.boxes.xyxy.tolist(), result.boxes.conf.tolist(), result.boxes.cls.tolist(),
            strict=True,
        ):
            x1, y1, x2, y2 = (round(float(v)) for v in xyxy)
            detections.append(
                Detection(label=str(names[int(cls)]), box=Bounds(left=x1, top=y1, right=x2, bottom=y2),
                          confidence=float(conf))
            )
        return tuple(detections)


def detections_to_elements(
    detections: tuple[Detection, ...], known: tuple[UIElement, ...], *, overlap: float = 0.5
) -> tuple[UIElement, ...]:
    """Detections no known element already covers, as ``source=detector`` elements."""
    elements = []
    for det in detections:
        if any(det.box.iou(e.bounds) >= overlap for e in known):
            continue
        b = det.box
        key = f"{det.label}|{b.left // 8},{b.top // 8},{b.right // 8},{b.bottom // 8}"
        elements.append(
            UIElement(
                id="d" + hashlib.blake2b(key.encode(), digest_size=5).hexdigest(),
                class_name=f"detector.{det.label}",
                bounds=b,
                clickable=det.label in ("button", "input", "toggle"),
                editable=det.label == "input",
                checkable=det.label == "toggle",
                source=ElementSource.DETECTOR,
                confidence=det.confidence,
            )
        )
    return tuple(elements)


def create_detector(settings: PerceptionSettings) -> Detector | None:
    """The detector the settings ask for, or None while it is switched off."""
    if not settings.detector_enabled:
        return None
    if settings.detector_model is None:
        raise BackendUnavailableError(
            "the detector is enabled but perception.detector_model is not set",
            hint="point perception.detector_model at an exported .onnx (or .pt for ultralytics)",
        )
    if settings.detector_backend == "ultralytics":
        return UltralyticsDetector(settings.detector_model, confidence=settings.detector_confidence)
    return OnnxDetector(settings.detector_model, confidence=settings.detector_confidence)
