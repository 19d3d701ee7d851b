"""Recorded real-app data: DroidBot's format (states, events, task sequences), DroidTask's tasks, where it lies.

Perception's tests and benchmarks read the recorded screens; the virtual
phones replay whole recordings as installed apps. Both layers use this one
reader, which sits above the shared models and below everything else.
"""

from __future__ import annotations

from core.recordings.data import REPOSITORY, find_data_dir
from core.recordings.droidbot import (
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
from core.recordings.droidtask import (
    DroidTask,
    DroidTaskAction,
    DroidTaskElement,
    DroidTaskFile,
    DroidTaskRecord,
    DroidTaskStep,
    load_droidtask_file,
    load_droidtasks,
    parse_simplified_html,
    resolve_element,
)
from core.recordings.errors import RecordingError

__all__ = [
    "REPOSITORY",
    "DroidTask",
    "DroidTaskAction",
    "DroidTaskElement",
    "DroidTaskFile",
    "DroidTaskRecord",
    "DroidTaskStep",
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
    "load_droidtask_file",
    "load_droidtasks",
    "parse_simplified_html",
    "resolve_element",
    "screenshot_path",
]
