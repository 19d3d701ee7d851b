"""Recorded real-app data: DroidBot's format (states, events, task sequences) and where it lies.

Perception's tests and benchmarks read the recorded screens; the virtual
phones replay whole recordings as installed apps. Both layers use this one
reader, which sits above the shared models and below everything else.
"""

from __future__ import annotations

from droidretriever.recordings.data import REPOSITORY, find_data_dir
from droidretriever.recordings.droidbot import (
    DroidbotEvent,
    DroidbotState,
    DroidbotTransition,
    DroidbotView,
    convert_droidbot_state,
    list_droidbot_states,
    load_droidbot_state,
    load_droidbot_task,
    load_droidbot_transition,
    screenshot_path,
)
from droidretriever.recordings.errors import RecordingError

__all__ = [
    "REPOSITORY",
    "DroidbotEvent",
    "DroidbotState",
    "DroidbotTransition",
    "DroidbotView",
    "RecordingError",
    "convert_droidbot_state",
    "find_data_dir",
    "list_droidbot_states",
    "load_droidbot_state",
    "load_droidbot_task",
    "load_droidbot_transition",
    "screenshot_path",
]
