"""Errors of the deployment layer (the embedded local stack).

    core.errors.DroidRetrieverError
     +-- ServiceError                a local service cannot start, stop or answer
          +-- PortTakenError         its port is held by a process that is not ours
          +-- ServiceStartError      it exited or stayed unhealthy while starting

Messages name the service and its log file; hints name the setting to change
(as the environment variable a person would set).
"""

from __future__ import annotations

from core.errors import ServiceError

__all__ = ["PortTakenError", "ServiceError", "ServiceStartError"]


class PortTakenError(ServiceError):
    """A port a service needs is already in use by something `up` did not start."""


class ServiceStartError(ServiceError):
    """A service process exited, or did not become healthy in time."""
