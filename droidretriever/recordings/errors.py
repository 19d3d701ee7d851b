"""Errors of the recorded-data layer.

    DroidRetrieverError            droidretriever.errors
     +-- RecordingError            a DroidBot recording (state, event, task) cannot be read
"""

from __future__ import annotations

from droidretriever.errors import DroidRetrieverError

__all__ = ["RecordingError"]


class RecordingError(DroidRetrieverError):
    """A recorded file is missing, unreadable or not in DroidBot's format."""
