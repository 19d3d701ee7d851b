"""Errors of the recorded-data layer.

    DroidRetrieverError            core.errors
     +-- RecordingError            a DroidBot recording (state, event, task) cannot be read
"""

from __future__ import annotations

from core.errors import DroidRetrieverError

__all__ = ["RecordingError"]


class RecordingError(DroidRetrieverError):
    """A recorded file is missing, unreadable or not in DroidBot's format."""
