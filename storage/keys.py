"""Deterministic object keys (docs/architecture.md "Storage layout"), and storage's Redis keys.

Every key a run writes is a function of the run id and what is written, never
of the time or a random suffix, so a retried task overwrites its earlier
attempt instead of leaving a duplicate beside it.

Redis (live run events, :mod:`storage.events`):

    runs:<run_id>:events   STREAM  the run's live events, entry id ``0-<seq>``
    runs:<run_id>:seq      STR     the counter that hands out their sequence numbers
"""

from __future__ import annotations

import re

__all__ = ["RunKeys", "route_memory_key", "seq_key", "stream_key", "validate_key"]

_SAFE_PART = re.compile(r"^[^/\x00-\x1f]+$")


def validate_key(key: str) -> str:
    """Return ``key`` if it is a usable object key, else raise ValueError saying why."""
    if not key or key.startswith("/") or "//" in key or key.endswith("/"):
        raise ValueError(f"bad object key {key!r}: no leading, trailing or doubled '/'")
    if any(part in {".", ".."} for part in key.split("/")):
        raise ValueError(f"bad object key {key!r}: '.' and '..' are not key parts")
    if len(key.encode()) > 1024:
        raise ValueError(f"object key longer than 1024 bytes: {key[:60]!r}...")
    return key


def _part(value: str, what: str) -> str:
    if not _SAFE_PART.match(value) or value in {".", ".."}:
        raise ValueError(f"{what} {value!r} cannot be part of an object key")
    return value


class RunKeys:
    """The keys of one run, all under ``runs/<run_id>/``."""

    def __init__(self, run_id: str) -> None:
        self.run_id = _part(run_id, "run id")
        self.prefix = f"runs/{self.run_id}/"

    def key(self, *parts: str) -> str:
        """Any other file of the run: ``runs/<run_id>/<parts...>``."""
        return validate_key(self.prefix + "/".join(_part(p, "key part") for p in parts))

    @property
    def manifest(self) -> str:
        return self.prefix + "manifest.json"

    @property
    def events(self) -> str:
        return self.prefix + "events.jsonl"

    @property
    def event_segments_prefix(self) -> str:
        return self.prefix + "events/"

    def event_segment(self, first_seq: int, last_seq: int) -> str:
        """A flushed batch of events; zero-padded so keys sort in seq order."""
        return f"{self.event_segments_prefix}{first_seq:010d}-{last_seq:010d}.jsonl"

    def screen(self, step: int, subtask_id: str | None = None) -> str:
        """A step's screenshot; per sub-task when several apps run in parallel."""
        name = f"{step:04d}.png"
        if subtask_id is None:
            return self.prefix + "screens/" + name
        return self.key("screens", subtask_id, name)

    def capture_image(self, capture_id: str) -> str:
        return self.key("captures", f"{_part(capture_id, 'capture id')}.png")

    def capture_elements(self, capture_id: str) -> str:
        return self.key("captures", f"{_part(capture_id, 'capture id')}.json")

    @property
    def report_markdown(self) -> str:
        return self.prefix + "report.md"

    @property
    def report_html(self) -> str:
        return self.prefix + "report.html"

    @property
    def report_json(self) -> str:
        return self.prefix + "report.json"


def route_memory_key(package: str) -> str:
    """Where the successful routes for one app are remembered."""
    return f"memory/routes/{_part(package, 'package')}.json"


def stream_key(run_id: str) -> str:
    """The Redis stream of a run's live events."""
    return f"runs:{run_id}:events"


def seq_key(run_id: str) -> str:
    """The Redis counter that hands out a run's event sequence numbers."""
    return f"runs:{run_id}:seq"
