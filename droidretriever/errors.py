"""The root of every error DroidRetriever raises on purpose.

    DroidRetrieverError            (.hint: what a person should do about it)
     +-- ConfigError               droidretriever.config: invalid or missing settings
     +-- ServiceError              deploy.local: a local service cannot start / is unhealthy
     +-- storage.errors.StorageError ...
     +-- device_farm.errors.DeviceError ...
     +-- inference.errors.InferenceError ...

Each package keeps its own subtree in its ``errors.py``; adapters translate
foreign exceptions once, at the boundary, and re-raise ``from exc``. The CLI
prints ``str(error)`` and the hint, never a traceback (unless ``--debug``).
"""

from __future__ import annotations

__all__ = ["ConfigError", "DroidRetrieverError", "ServiceError"]


class DroidRetrieverError(Exception):
    """Base class. ``hint`` says what to do; it is shown under the message."""

    hint: str = ""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        if hint:
            self.hint = hint


class ConfigError(DroidRetrieverError):
    """Settings are invalid; the message names each bad setting and its fix."""


class ServiceError(DroidRetrieverError):
    """A service of the local stack could not start or is not healthy."""
