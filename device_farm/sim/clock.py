"""A phone's simulated clock: follows real time from a fixed start, and can jump.

Day 0 is the start day; scheduled subscriptions see new data by advancing
the clock (control API) instead of waiting for real days.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta

__all__ = ["DEFAULT_START", "SimClock"]

DEFAULT_START = datetime(2025, 6, 23, 9, 0, 0)  # a Monday


class SimClock:
    """Simulated wall-clock time: ``start`` + real seconds elapsed + manual offset."""

    def __init__(self, start: datetime = DEFAULT_START) -> None:
        self.start = start
        self._t0 = time.monotonic()
        self._offset = 0.0

    def seconds(self) -> float:
        """Simulated seconds since ``start``."""
        return time.monotonic() - self._t0 + self._offset

    def now(self) -> datetime:
        return self.start + timedelta(seconds=self.seconds())

    @property
    def day(self) -> int:
        """Whole simulated days since the start day (0 on the start day)."""
        return (self.now().date() - self.start.date()).days

    def advance(self, seconds: float) -> None:
        """Jump forward (or back, with a negative value)."""
        self._offset += seconds

    def set_day(self, day: int) -> None:
        """Jump to ``day`` at the start's time of day."""
        self._offset += (self.start + timedelta(days=day) - self.now()).total_seconds()

    def state(self) -> float:
        """The simulated seconds now, for snapshots."""
        return self.seconds()

    def restore(self, seconds: float) -> None:
        """Continue from a :meth:`state` value."""
        self._offset = seconds
        self._t0 = time.monotonic()
