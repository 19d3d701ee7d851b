"""Run manifests: ``runs/<run_id>/manifest.json`` is the system of record for a run.

The flow that owns a run is its only writer (sub-flows report back to it). It
keeps the run's manifest itself and writes it whole (:meth:`ManifestStore.apply`),
so an update never needs to read the store first: with the object store down,
the write goes to the spool and the run goes on. ``updated_at`` is stamped on
every write. :meth:`ManifestStore.update` (read, change, write) is for the
processes that do not own the run (``resume``, the sweep of crashed runs).
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import ValidationError

from core.models import RunManifest, utcnow
from storage.errors import ManifestError, ObjectNotFoundError
from storage.keys import RunKeys
from storage.objects import ObjectStore

__all__ = ["ManifestStore"]


class ManifestStore:
    """Read, write and update run manifests in an object store."""

    def __init__(self, store: ObjectStore) -> None:
        self._store = store

    def write(self, manifest: RunManifest) -> RunManifest:
        """Store ``manifest`` (overwriting), stamped with a fresh ``updated_at``."""
        stamped = manifest.model_copy(update={"updated_at": utcnow()})
        self._store.put_bytes(
            RunKeys(manifest.run_id).manifest,
            stamped.model_dump_json(indent=2).encode(),
            "application/json",
        )
        return stamped

    def read(self, run_id: str) -> RunManifest:
        """The manifest of ``run_id``; ManifestError if there is none or it is damaged."""
        key = RunKeys(run_id).manifest
        try:
            raw = self._store.get_bytes(key)
        except ObjectNotFoundError as exc:
            raise ManifestError(
                f"run {run_id!r} has no manifest at {key}",
                hint="check the run id (`droidretriever status` lists runs)",
            ) from exc
        try:
            return RunManifest.model_validate_json(raw)
        except ValidationError as exc:
            raise ManifestError(
                f"the manifest of run {run_id!r} is not valid: {exc.errors()[0]['msg']}",
                hint=f"inspect {key} in the object store; it was written by another version?",
            ) from exc

    def exists(self, run_id: str) -> bool:
        """Whether ``run_id`` has a manifest."""
        return self._store.exists(RunKeys(run_id).manifest)

    def update(self, run_id: str, change: Callable[[RunManifest], RunManifest]) -> RunManifest:
        """Read, apply ``change``, re-validate and write back; returns what was written."""
        return self.apply(self.read(run_id), change)

    def apply(self, current: RunManifest,
              change: Callable[[RunManifest], RunManifest]) -> RunManifest:
        """Apply ``change`` to ``current``, re-validate and write the whole; no read.

        ``change`` returns a new manifest (``m.model_copy(update=...)`` is fine:
        the result is validated again here, so a bad field cannot slip through).
        """
        run_id = current.run_id
        changed = change(current)
        if changed.run_id != run_id:
            raise ManifestError(
                f"an update of run {run_id!r} tried to change its run id to {changed.run_id!r}",
                hint="run ids are fixed at creation; create a new run instead",
            )
        try:
            validated = RunManifest.model_validate(changed.model_dump(warnings=False))
        except ValidationError as exc:
            raise ManifestError(
                f"the update of run {run_id!r} produced an invalid manifest: "
                f"{exc.errors()[0]['loc']}: {exc.errors()[0]['msg']}"
            ) from exc
        return self.write(validated)

    def list_run_ids(self) -> list[str]:
        """Ids of every run that has a manifest, oldest id first (ids sort by time)."""
        suffix = "/manifest.json"
        return sorted(
            info.key.removeprefix("runs/").removesuffix(suffix)
            for info in self._store.list_objects("runs/")
            if info.key.endswith(suffix) and info.key.count("/") == 2
        )
