"""Build the object store a process should use, from settings alone."""

from __future__ import annotations

from core.config import Settings
from storage.s3 import S3ObjectStore
from storage.spool import Spool, SpoolingObjectStore, SpoolUsage

__all__ = ["open_object_store", "read_spool_usage"]


def open_object_store(settings: Settings) -> SpoolingObjectStore:
    """The S3 store of ``settings.s3`` behind the local spool in ``settings.spool_dir``."""
    return SpoolingObjectStore(S3ObjectStore(settings.s3), Spool(settings.spool_dir))


def read_spool_usage(settings: Settings) -> SpoolUsage:
    """What waits in the spool, without touching the network (for ``status``)."""
    return Spool(settings.spool_dir).usage()
