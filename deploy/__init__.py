"""Deployment: the embedded local stack (``deploy.local``), the farm's processes (``deploy.farm``)."""

from __future__ import annotations

from deploy.errors import PortTakenError, ServiceError, ServiceStartError

__all__ = ["PortTakenError", "ServiceError", "ServiceStartError"]
