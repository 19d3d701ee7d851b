"""Detector pre/post-processing (onnx is not installed: functions tested directly) and dataset builder."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.config import PerceptionSettings
from core.models import Bounds
from inference.errors import BackendUnavailableError, DetectorError
from inference.perception import (
    DETECTOR_LABELS,
    OnnxDetector,
    UltralyticsDetector,
    create_detector,
    load_droidbot_state,
)
from inference.perception.detector import decode_yolo_output, letterbox, suppress_overlaps
from inference.perception.detector_train import build_yolo_dataset, label_views


def test_letterbox_keeps_aspect_and_pads_evenly() -> None:
    image = np.zeros((2160, 1080, 3), dtype=np.uint8)
    tensor, fit = letterbox(image, 640)
    assert tensor.shape == (1, 3, 640, 640) and tensor.dtype == np.float32
    assert fit.scale == pytest.approx(640 / 2160)
    assert fit.pad_y == 0 and fit.pad_x == (640 - round(1080 * fit.scale)) // 2
    assert tensor[0, 0, 320, 0] == pytest.approx(114 / 255)  # grey border
    assert tensor[0, 0, 320, 320] == 0.0  # the image itself


def test_nms_keeps_the_best_of_overlapping_boxes() -> None:
    boxes = np.array([[0, 0, 100, 100], [5, 5, 105, 105], [200, 200, 300, 300]], dtype=np.float32)
    scores = np.array([0.8, 0.9, 0.7], dtype=np.float32)
    assert suppress_overlaps(boxes, scores, 0.5).tolist() == [1, 2]


def test_decode_maps_yolo_boxes_back_to_screen_pixels() -> None:
    image = np.zeros((2160, 1080, 3), dtype=np.uint8)
    _, fit = letterbox(image, 640)
    screen_box = Bounds(left=100, top=400, right=500, bottom=600)
    cx = (screen_box.left + screen_box.right) / 2 * fit.scale + fit.pad_x
    cy = (screen_box.top + screen_box.bottom) / 2 * fit.scale + fit.pad_y
    w, h = screen_box.width * fit.scale, screen_box.height * fit.scale
    anchors = np.zeros((1, 4 + len(DETECTOR_LABELS), 3), dtype=np.float32)
    anchors[0, :4, 0] = [cx, cy, w, h]
    anchors[0, 4, 0] = 0.9  # button
    anchors[0, :4, 1] = [cx + 1, cy, w, h]
    anchors[0, 4, 1] = 0.6  # the same button again: suppressed
    anchors[0, :4, 2] = [cx, cy, w, h]
    anchors[0, 5, 2] = 0.1  # below confidence
    detections = decode_yolo_output(anchors, fit, width=1080, height=2160, confidence=0.35)
    assert len(detections) == 1 and detections[0].label == "button"
    assert detections[0].box.iou(screen_box) > 0.95
    with pytest.raises(DetectorError):
        decode_yolo_output(np.zeros((1, 3, 5), dtype=np.float32), fit, width=1080, height=2160)


def test_backends_explain_what_is_missing(tmp_path: Path) -> None:
    assert create_detector(PerceptionSettings()) is None  # off by default
    with pytest.raises(BackendUnavailableError) as info:
        OnnxDetector(tmp_path / "missing.onnx")
    assert "detector_train" in info.value.hint
    with pytest.raises(BackendUnavailableError) as info:
        UltralyticsDetector(tmp_path / "m.pt")
    assert "gpu" in info.value.hint
    with pytest.raises(BackendUnavailableError):
        create_detector(PerceptionSettings(detector_enabled=True))


def test_dataset_labels_match_widget_boxes(sample_paths: list[Path], tmp_path: Path) -> None:
    paths = sample_paths[:12]
    summary = build_yolo_dataset(paths, tmp_path, holdout_share=0.3)
    assert summary.train_images + summary.val_images > 0
    assert summary.data_yaml.read_text().count(":") >= len(DETECTOR_LABELS)
    for path in paths:
        state = load_droidbot_state(path)
        expected = label_views(state)
        stem = f"{state.package}_{state.tag}"
        files = list(tmp_path.glob(f"labels/*/{stem}.txt"))
        if not expected:
            assert not files
            continue
        (label_file,) = files
        assert (tmp_path / "images" / label_file.parent.name / f"{stem}.jpg").is_file()
        rows = [line.split() for line in label_file.read_text().splitlines()]
        assert len(rows) == len(expected)
        widget_boxes = {v.box for v in state.visible_views()}
        for row, label in zip(rows, expected, strict=True):
            cls, cx, cy, w, h = int(row[0]), *map(float, row[1:])
            box = Bounds(
                left=round((cx - w / 2) * state.width), top=round((cy - h / 2) * state.height),
                right=round((cx + w / 2) * state.width), bottom=round((cy + h / 2) * state.height),
            )
            assert cls == label.label
            assert max(box.iou(b) for b in widget_boxes) > 0.98
