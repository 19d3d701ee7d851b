"""Where the recorded real-app data lies: a setting, else ``../shared/data`` beside the repository.

CI clones the repository next to ``shared/``; a developer's worktree sees the
same layout through a symlink. ``DROIDRETRIEVER_DATA_DIR`` points anywhere else.
"""

from __future__ import annotations

from pathlib import Path

from core.config import Settings

__all__ = ["REPOSITORY", "find_data_dir"]

REPOSITORY = Path(__file__).resolve().parents[2]


def find_data_dir(settings: Settings | None = None) -> Path | None:
    """The data folder in force, or None when it is not on this machine.

    ``settings.data_dir`` wins when set (and must exist); otherwise
    ``<repository>/../shared/data`` when it exists.
    """
    if settings is not None and settings.data_dir is not None:
        return settings.data_dir if settings.data_dir.is_dir() else None
    beside = REPOSITORY.parent / "shared" / "data"
    return beside if beside.is_dir() else None
