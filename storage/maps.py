"""App maps in the object store: one JSON per app and version, its screenshots beside it.

    maps/<package>/<version>/map.json            the AppMap (also while a build is under way)
    maps/<package>/<version>/screens/<id>.png    one screenshot per map screen

A map is written whole, after every screen a build expands, so a build that
stops (a killed worker, a budget) resumes from what was written. A map whose
JSON does not parse (written by a newer release, damaged) is reported with
what to do, never half read.
"""

from __future__ import annotations

import logging

from pydantic import ValidationError

from core.models import AppMap
from storage.errors import MapFormatError
from storage.keys import validate_key
from storage.objects import ObjectStore

__all__ = ["MapStore", "map_key", "map_screen_key"]

_PREFIX = "maps/"

log = logging.getLogger(__name__)


def _part(value: str, what: str) -> str:
    if not value or "/" in value or value in {".", ".."} or any(ord(c) < 32 for c in value):
        raise ValueError(f"{what} {value!r} cannot be part of an object key")
    return value


def map_key(package: str, version: str) -> str:
    """Where the map of ``package`` at ``version`` lives."""
    return validate_key(f"{_PREFIX}{_part(package, 'package')}/{_part(version or 'unknown', 'version')}/map.json")


def map_screen_key(package: str, version: str, screen_id: str) -> str:
    """Where a map screen's screenshot lives."""
    return validate_key(f"{_PREFIX}{_part(package, 'package')}/{_part(version or 'unknown', 'version')}"
                        f"/screens/{_part(screen_id, 'screen id')}.png")


class MapStore:
    """Reads and writes app maps through an :class:`ObjectStore`."""

    def __init__(self, store: ObjectStore) -> None:
        self.store = store

    def load(self, package: str, version: str) -> AppMap | None:
        """The map of ``package`` at ``version``, or None when none was built."""
        key = map_key(package, version)
        if not self.store.exists(key):
            return None
        return self._read(key)

    def latest(self, package: str) -> AppMap | None:
        """The most recently built map of ``package``, whatever its version (None when none)."""
        maps = [m for m in self.list() if m.package == package]
        return max(maps, key=lambda m: m.built_at) if maps else None

    def save(self, app_map: AppMap) -> None:
        """Write ``app_map`` whole (replacing the version's earlier one)."""
        self.store.put_bytes(map_key(app_map.package, app_map.version),
                             app_map.model_dump_json().encode(), "application/json")

    def save_screenshot(self, package: str, version: str, screen_id: str, png: bytes) -> str:
        """Store a map screen's screenshot; returns its key."""
        key = map_screen_key(package, version, screen_id)
        self.store.put_bytes(key, png, "image/png")
        return key

    def list(self) -> list[AppMap]:
        """Every readable map in the store, sorted by package then version; a damaged one is
        logged (with the fix) and left out, so one bad file does not hide the others."""
        found: list[AppMap] = []
        for info in self.store.list_objects(_PREFIX):
            if not info.key.endswith("/map.json"):
                continue
            try:
                found.append(self._read(info.key))
            except MapFormatError as exc:
                log.warning("%s (fix: %s)", exc, exc.hint)
        return sorted(found, key=lambda m: (m.package, m.version))

    def delete(self, package: str, version: str) -> int:
        """Remove a map and its screenshots; returns how many objects went."""
        prefix = map_key(package, version).removesuffix("map.json")
        infos = self.store.list_objects(prefix)
        for info in infos:
            self.store.delete(info.key)
        return len(infos)

    def _read(self, key: str) -> AppMap:
        data = self.store.get_bytes(key)
        try:
            return AppMap.model_validate_json(data)
        except ValidationError as exc:
            raise MapFormatError(
                f"the app map at {key} is not a map this release reads: {exc.errors()[0]['msg']}",
                hint=f"rebuild it with `droidretriever map build --rebuild` (or delete {key})",
            ) from exc
