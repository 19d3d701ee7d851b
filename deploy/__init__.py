"""Deployment: the embedded local stack (``deploy.local``) and production manifests."""

from __future__ import annotations

from deploy.errors import PortTakenError, ServiceError, ServiceStartError

__all__ = ["PortTakenError", "ServiceError", "ServiceStartError"]
