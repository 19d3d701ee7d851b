"""Build a YOLO dataset from (screenshot, hierarchy) pairs, train, evaluate, export ONNX.

Run on a GPU machine with the ``gpu`` extra installed::

    python -m inference.perception.detector_train build ../shared/data /tmp/ui-yolo
    python -m inference.perception.detector_train train /tmp/ui-yolo --epochs 80
    # -> /tmp/ui-yolo/runs/.../best.onnx and evaluation.json (mAP on held-out screens)

Labels come from the recorded view boxes: every visible widget with a size
becomes one box of a class in :data:`DETECTOR_LABELS`. Held-out screens are
chosen by a hash of the screen id (or whole apps with ``--holdout-package``),
so the evaluation is on screens the model never saw.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel, ConfigDict

from core.models import Bounds
from inference.errors import BackendUnavailableError
from inference.perception.detector import DETECTOR_LABELS
from inference.perception.droidbot import (
    DroidbotState,
    DroidbotView,
    list_droidbot_states,
    load_droidbot_state,
)

__all__ = [
    "DatasetSummary",
    "TrainingResult",
    "YoloLabel",
    "build_yolo_dataset",
    "label_views",
    "train_detector",
]

_MIN_SIDE = 8  # pixels: thinner boxes are dividers, not widgets
_BUTTON_MAX_SHARE = 0.1  # clickable containers above this share of the screen are rows/pages


class YoloLabel(BaseModel):
    """One training box: a class index and its pixel box."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    label: int
    box: Bounds

    def to_line(self, width: int, height: int) -> str:
        """``cls cx cy w h`` normalised to 0..1, as YOLO label files want."""
        b = self.box
        return (
            f"{self.label} {(b.left + b.right) / 2 / width:.6f} {(b.top + b.bottom) / 2 / height:.6f} "
            f"{b.width / width:.6f} {b.height / height:.6f}"
        )


class DatasetSummary(BaseModel):
    """What :func:`build_yolo_dataset` wrote."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    root: Path
    data_yaml: Path
    train_images: int
    val_images: int
    boxes_per_label: dict[str, int]


class TrainingResult(BaseModel):
    """Held-out evaluation and the exported model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    onnx_path: Path
    map50: float
    map50_95: float
    val_images: int
    epochs: int


def _classify(view: DroidbotView, screen_area: int) -> str | None:
    short = view.class_name.rsplit(".", 1)[-1]
    if view.editable or "EditText" in short:
        return "input"
    if view.checkable or short in ("CheckBox", "Switch", "RadioButton", "ToggleButton"):
        return "toggle"
    if short in ("Button", "ImageButton") or (
        view.clickable and view.box.area <= _BUTTON_MAX_SHARE * screen_area and not view.text
    ):
        return "button"
    if view.text and view.text.strip():
        return "text"
    if "Image" in short:
        return "image"
    return None


def label_views(state: DroidbotState) -> tuple[YoloLabel, ...]:
    """The training boxes for one recorded screen (visible, on-screen, sized widgets)."""
    screen = Bounds(left=0, top=0, right=state.width, bottom=state.height)
    labels = []
    for view in state.visible_views():
        kind = _classify(view, screen.area)
        box = view.box
        if kind is None or box.width < _MIN_SIDE or box.height < _MIN_SIDE:
            continue
        if screen.intersection(box) < box.area:  # partly off screen: the pixels are not there
            continue
        labels.append(YoloLabel(label=DETECTOR_LABELS.index(kind), box=box))
    return tuple(labels)


def _is_holdout(state: DroidbotState, share: float, packages: tuple[str, ...]) -> bool:
    if packages:
        return state.package in packages
    bucket = int(hashlib.blake2b(state.state_str.encode(), digest_size=2).hexdigest(), 16)
    return bucket / 0xFFFF < share


def build_yolo_dataset(
    states: list[Path],
    out_dir: Path,
    *,
    holdout_share: float = 0.2,
    holdout_packages: tuple[str, ...] = (),
) -> DatasetSummary:
    """Write ``images/{train,val}``, ``labels/{train,val}`` and ``data.yaml`` under ``out_dir``."""
    counts = dict.fromkeys(DETECTOR_LABELS, 0)
    split_counts = {"train": 0, "val": 0}
    for split in split_counts:
        (out_dir / "images" / split).mkdir(parents=True, exist_ok=True)
        (out_dir / "labels" / split).mkdir(parents=True, exist_ok=True)
    for path in states:
        state = load_droidbot_state(path)
        labels = label_views(state)
        if not labels:
            continue
        split = "val" if _is_holdout(state, holdout_share, holdout_packages) else "train"
        image = path.with_name(path.name.replace("state_", "screen_", 1)).with_suffix(".jpg")
        stem = f"{state.package}_{state.tag}"
        shutil.copyfile(image, out_dir / "images" / split / f"{stem}.jpg")
        lines = [lab.to_line(state.width, state.height) for lab in labels]
        (out_dir / "labels" / split / f"{stem}.txt").write_text("\n".join(lines) + "\n")
        split_counts[split] += 1
        for lab in labels:
            counts[DETECTOR_LABELS[lab.label]] += 1
    data_yaml = out_dir / "data.yaml"
    names = "\n".join(f"  {i}: {name}" for i, name in enumerate(DETECTOR_LABELS))
    data_yaml.write_text(
        f"path: {out_dir.resolve()}\ntrain: images/train\nval: images/val\nnames:\n{names}\n"
    )
    return DatasetSummary(
        root=out_dir, data_yaml=data_yaml, train_images=split_counts["train"],
        val_images=split_counts["val"], boxes_per_label=counts,
    )


def train_detector(
    dataset: Path, *, weights: str = "yolov8n.pt", epochs: int = 80, imgsz: int = 640,
    device: str = "0",
) -> TrainingResult:
    """Train with ultralytics, evaluate mAP on the held-out split, export ONNX."""
    try:
        from ultralytics import YOLO
    except ImportError as exc:
        raise BackendUnavailableError(
            "training the detector needs ultralytics, which is not installed",
            hint="on a GPU machine: pip install 'droidretriever[gpu]'",
        ) from exc
    model: Any = YOLO(weights)
    model.train(data=str(dataset / "data.yaml"), epochs=epochs, imgsz=imgsz, device=device,
                project=str(dataset / "runs"), exist_ok=True, verbose=False)
    metrics = model.val(data=str(dataset / "data.yaml"), split="val", imgsz=imgsz, device=device)
    onnx_path = Path(model.export(format="onnx", imgsz=imgsz, opset=12, simplify=False))
    val_images = len(list((dataset / "images" / "val").glob("*.jpg")))
    result = TrainingResult(
        onnx_path=onnx_path, map50=float(metrics.box.map50), map50_95=float(metrics.box.map),
        val_images=val_images, epochs=epochs,
    )
    (onnx_path.parent / "evaluation.json").write_text(result.model_dump_json(indent=2))
    return result


app = typer.Typer(help="Build the UI detector's dataset, train it, evaluate it, export ONNX.")


@app.command("build")
def build_command(
    data_dir: Path, out_dir: Path,
    holdout_share: float = 0.2,
    holdout_package: Annotated[list[str] | None, typer.Option()] = None,
) -> None:
    """Write a YOLO dataset from the DroidBot recordings under DATA_DIR."""
    summary = build_yolo_dataset(
        list_droidbot_states(data_dir), out_dir, holdout_share=holdout_share,
        holdout_packages=tuple(holdout_package or ()),
    )
    typer.echo(json.dumps(summary.model_dump(mode="json"), indent=2))


@app.command("train")
def train_command(
    dataset: Path, weights: str = "yolov8n.pt", epochs: int = 80, imgsz: int = 640, device: str = "0"
) -> None:
    """Train on DATASET (from `build`), evaluate on its held-out split, export ONNX."""
    result = train_detector(dataset, weights=weights, epochs=epochs, imgsz=imgsz, device=device)
    typer.echo(result.model_dump_json(indent=2))


if __name__ == "__main__":
    app()
