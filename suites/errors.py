"""Errors of the benchmark suite files (suites).

    DroidRetrieverError            core.errors
     +-- SuiteError                a suite file cannot be read or is not a valid task
                                   (the message names the file and the field)
"""

from __future__ import annotations

from core.errors import DroidRetrieverError

__all__ = ["SuiteError"]


class SuiteError(DroidRetrieverError):
    """A suite task file is unreadable or invalid; the message names the file and field."""
