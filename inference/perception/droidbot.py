"""Recorded DroidBot screens as perception's input.

The format itself (states, events, the ``uiautomator`` XML conversion) lives in
:mod:`core.recordings`, below both perception and the replay phones;
this module turns a recorded state into the :class:`Observation` a phone would
have produced, so the recordings drive the very parser, OCR and description
code that real phones do. Format errors surface as :class:`HierarchyError`.
"""

from __future__ import annotations

from pathlib import Path

from core.recordings import (
    DroidbotState,
    DroidbotView,
    RecordingError,
    convert_droidbot_state,
    list_droidbot_states,
    screenshot_path,
)
from core.recordings import load_droidbot_state as _load_state
from inference.errors import HierarchyError
from inference.perception.observation import Observation

__all__ = [
    "DroidbotState",
    "DroidbotView",
    "convert_droidbot_state",
    "list_droidbot_states",
    "load_droidbot_state",
    "observe_droidbot_state",
]


def load_droidbot_state(path: Path) -> DroidbotState:
    """Read one ``state_<ts>.json``; raises :class:`HierarchyError` when it is not one."""
    try:
        return _load_state(path)
    except RecordingError as exc:
        raise HierarchyError(str(exc), hint=exc.hint) from exc


def observe_droidbot_state(path: Path, *, serial: str = "droidbot", step: int = 0) -> Observation:
    """A recorded state as the :class:`Observation` a phone would have produced.

    The screenshot is the recording's ``screen_<ts>.jpg`` beside the JSON
    (JPEG bytes; perception decodes any image format Pillow reads).
    """
    state = load_droidbot_state(path)
    image_path = screenshot_path(path)
    try:
        image = image_path.read_bytes()
    except OSError as exc:
        raise HierarchyError(
            f"DroidBot state {path} has no screenshot {image_path.name}",
            hint="keep each state_<ts>.json beside its screen_<ts>.jpg",
        ) from exc
    return Observation(
        serial=serial,
        step=step,
        package=state.package,
        activity=state.activity,
        width=state.width,
        height=state.height,
        screenshot_png=image,
        hierarchy_xml=convert_droidbot_state(state),
    )
