"""An app installed on a phone, as the farm learns it and the planner sees it."""

from __future__ import annotations

from core.models.base import Frozen

__all__ = ["InstalledApp"]


class InstalledApp(Frozen):
    """An installed app: its package and the label the phone's launcher shows."""

    package: str
    label: str
