"""Errors of the task layer (navigation loop, scrolling capture, stitching, control channel).

    DroidRetrieverError                    core.errors
     +-- CopilotError                      the copilot could not do its job
     |    +-- CaptureError                 a scrolling capture failed (frames unreadable, store down)
     |    +-- ControlChannelError          the control channel (Redis) cannot be read or written
     +-- StitchError                       frames cannot be stitched (none, or sizes differ)
     +-- tasks.synthesis.errors.SynthesisError ...  report synthesis (its own subtree)

Device faults stay ``device_farm.errors.DeviceError`` (the device task
quarantines the phone and hands the sub-task to another); storage faults are
translated into ``CaptureError`` where a capture is being saved.
"""

from __future__ import annotations

from core.errors import DroidRetrieverError

__all__ = ["CaptureError", "ControlChannelError", "CopilotError", "StitchError"]


class CopilotError(DroidRetrieverError):
    """Base class of the copilot's errors."""


class CaptureError(CopilotError):
    """A scrolling capture could not be taken or stored."""

    hint = "check the object store (`droidretriever status`); the sub-task can be retried"


class ControlChannelError(CopilotError):
    """Pause / take over / resume / save / stop commands cannot be read or sent."""

    hint = "is Redis up? `droidretriever status` shows it; the run continues without commands"


class StitchError(DroidRetrieverError):
    """The frames cannot be stitched (none, or of different sizes)."""
