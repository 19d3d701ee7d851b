"""Files under the state folder are their owner's alone: 0600 files in 0700 folders.

The state folder holds what runs saw (reports, spooled screenshots), the stack's
pid files, the farm's manifest and the generated secrets. Everything written
there goes through these two functions, so no other user can read it, even for
a moment, whatever the process's umask:

    make_private_dir(path)      the folder and any parent it had to make, 0700
                                (an older, wider folder is narrowed)
    write_private(path, data)   a 0600 file written whole: a temporary file beside it,
                                created with its final mode, renamed over it

A crash leaves either the old file or the new one, never half of it.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

__all__ = ["FILE_MODE", "FOLDER_MODE", "make_private_dir", "write_private"]

FILE_MODE = 0o600
FOLDER_MODE = 0o700


def make_private_dir(path: Path) -> Path:
    """``path`` as a 0700 folder, with the parents it lacked made 0700 too; returns it.

    ``mkdir``'s mode is masked by the umask and never applies to the parents it makes,
    and an existing folder may be wider (an older version made it 0755): each is set.
    """
    missing = []
    parent = path
    while not parent.exists():
        missing.append(parent)
        parent = parent.parent
    path.mkdir(parents=True, exist_ok=True, mode=FOLDER_MODE)
    for folder in {*missing, path}:
        if stat.S_IMODE(folder.stat().st_mode) != FOLDER_MODE:
            folder.chmod(FOLDER_MODE)
    return path


def write_private(path: Path, data: bytes | str, *, sync: bool = False) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` as a 0600 file, whole; its folder made private.

    ``sync`` flushes it to the disk before the rename (data that must survive a crash).
    Raises OSError as the file system does; no temporary file is left behind.
    """
    make_private_dir(path.parent)
    temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data.encode() if isinstance(data, str) else data)
            if sync:
                out.flush()
                os.fsync(out.fileno())
        temp.replace(path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
