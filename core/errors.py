"""The root of every error DroidRetriever raises on purpose.

    DroidRetrieverError            (.hint: what a person should do about it; .exit_code)
     +-- ConfigError               core.config: invalid or missing settings (exit 2)
     +-- InputError                a command's argument or option is invalid (exit 2)
     +-- ServiceError              deploy.local: a local service cannot start / is unhealthy
     +-- UnicodeDataError          core.text: Unicode's confusables data is not installed
     +-- storage.errors.StorageError ...
     +-- device_farm.errors.DeviceError ...
     +-- inference.errors.InferenceError ...

Each package keeps its own subtree in its ``errors.py``; adapters translate
foreign exceptions once, at the boundary, and re-raise ``from exc``. The CLI
prints ``str(error)`` and the hint, never a traceback (unless ``--debug``), and
exits with ``exit_code``: 2 for what a person typed or set wrong (nothing was
started or written), 1 for a failure while working.
"""

from __future__ import annotations

__all__ = ["ConfigError", "DroidRetrieverError", "InputError", "ServiceError", "UnicodeDataError"]


class DroidRetrieverError(Exception):
    """Base class. ``hint`` says what to do; it is shown under the message."""

    hint: str = ""
    exit_code: int = 1  # what the CLI exits with

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        if hint:
            self.hint = hint


class ConfigError(DroidRetrieverError):
    """Settings are invalid; the message names each bad setting and its fix, one line each."""

    exit_code = 2


class InputError(DroidRetrieverError):
    """A command's argument or option is invalid: one line naming it, what is wrong and what to do."""

    exit_code = 2


class ServiceError(DroidRetrieverError):
    """A service of the local stack could not start or is not healthy."""


class UnicodeDataError(DroidRetrieverError):
    """Unicode's confusables data (what the word lists fold look-alike letters by) cannot be read."""
