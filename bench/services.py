"""Services the benchmarks start for themselves, as ``up`` would: the object store with its secrets."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from core.config import S3Settings, StackSettings, load_settings
from deploy.local import SeaweedService, ensure_stack_secrets
from droidretriever.testing import free_port, free_port_block

__all__ = ["running_store"]


@contextmanager
def running_store(state: Path) -> Iterator[S3Settings]:
    """SeaweedFS S3 on free loopback ports with its state in ``state``; yields its settings.

    Names ``state`` as the state folder (``DROIDRETRIEVER_STATE_DIR``) of this process: the
    store's keys, JWT and certificates are generated there, as ``up`` does, and every process
    of the benchmark reads them from there. Stopped when the block ends.
    """
    s3 = S3Settings(endpoint=f"http://127.0.0.1:{free_port()}", bucket="droidretriever-bench")
    os.environ["DROIDRETRIEVER_STATE_DIR"] = str(state)
    weed = SeaweedService(ensure_stack_secrets(
        load_settings(s3=s3, stack=StackSettings(weed_base_port=free_port_block(7)))))
    weed.start()
    try:
        weed.wait_healthy(90)
        yield s3
    finally:
        weed.stop()
