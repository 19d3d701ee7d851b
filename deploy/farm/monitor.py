"""The local farm's monitor: :mod:`tasks.worker.farm_monitor` plus starting dead workers again.

``farm up`` (and ``droidretriever up``) runs ``python -m deploy.farm.monitor``. When a
phone's worker stops beating and its process has exited (killed, crashed), the
monitor starts it again with the command line the farm manifest recorded, and
records the new process there, under the manifest's lock (``up``'s own repair
takes it too). A worker that runs but does not beat is left alone: it may still be
starting; ``droidretriever up`` reports one that stays silent.
"""

from __future__ import annotations

import argparse
import logging
from itertools import pairwise
from pathlib import Path

from core.config import load_settings
from deploy.farm.processes import (
    ProcessRecord,
    is_running,
    manifest_lock,
    read_manifest,
    start_process,
    write_manifest,
)
from tasks.worker.farm_monitor import run_monitor

__all__ = ["ManifestRepair", "main"]

log = logging.getLogger(__name__)


class ManifestRepair:
    """Starts a phone's exited worker again from the farm manifest under ``state_dir``."""

    def __init__(self, state_dir: Path) -> None:
        self._state_dir = state_dir

    def __call__(self, serial: str) -> str | None:
        """What was done (in words), or None: no farm, no such worker, or it still runs."""
        with manifest_lock(self._state_dir):
            manifest = read_manifest(self._state_dir)
            if manifest is None:
                return None
            record = next((p for p in manifest.processes if _serves(p, serial)), None)
            if record is None or is_running(record):
                return None
            started = start_process(self._state_dir, record.name, list(record.argv))
            processes = tuple(started if p == record else p for p in manifest.processes)
            write_manifest(self._state_dir, manifest.model_copy(update={"processes": processes}))
        return f"its worker {record.name} had exited; started it again (pid {started.pid})"


def _serves(record: ProcessRecord, serial: str) -> bool:
    """Whether ``record`` is a worker started for ``serial``: its farm name (``--farm-serial``,
    host-qualified), or its adb serial where the farm gave it no other name."""
    args = dict(pairwise(record.argv))
    return (args.get("--farm-serial") or args.get("--serial")) == serial


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``python -m deploy.farm.monitor``."""
    parser = argparse.ArgumentParser(
        description="Redeliver dead device workers' sub-tasks and start the workers again.")
    parser.add_argument("--loglevel", default="INFO")
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.loglevel,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    settings = load_settings()
    run_monitor(settings, ManifestRepair(settings.state_dir))


if __name__ == "__main__":
    main()
