"""The spool: nothing is lost while the store is down, and nothing stale wins afterwards."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest

from core.config import S3Settings
from deploy.local import SeaweedService
from storage import (
    FakeObjectStore,
    RunKeys,
    S3ObjectStore,
    Spool,
    SpoolingObjectStore,
    StoreUnavailableError,
)


def test_spool_and_flush_across_a_real_server_restart(
    s3_service: SeaweedService, s3_settings: S3Settings, tmp_path: Path
) -> None:
    keys = RunKeys("run-spool-restart")
    store = SpoolingObjectStore(
        S3ObjectStore(s3_settings.model_copy(update={"retries": 1}), backoff_s=0.05),
        Spool(tmp_path / "spool"),
        retry_after_s=0.0,
    )
    store.put_bytes(keys.manifest, b'{"before": true}')
    s3_service.stop()
    restart = threading.Timer(1.0, s3_service.start)
    try:
        store.put_bytes(keys.screen(1), b"\x89PNG offline frame")
        store.put_bytes(keys.manifest, b'{"offline": true}')
        big = tmp_path / "capture.png"
        big.write_bytes(b"\x89PNG" + b"x" * 200_000)
        store.put_file(keys.capture_image("cap-1"), big)

        usage = store.spool_size()
        assert usage.entries == 3
        assert usage.bytes > 200_000
        # Reads see the spooled (newest) bytes while the store is down.
        assert store.get_bytes(keys.manifest) == b'{"offline": true}'
        assert store.stat(keys.screen(1)).content_type == "image/png"
        with pytest.raises(StoreUnavailableError):
            store.flush()
        # A read of what is only in the store has nowhere else to go: it waits for the store
        # (s3.retry_window_s) instead of failing, and gets the bytes once it is back.
        restart.start()
        started = time.monotonic()
        assert S3ObjectStore(s3_settings).get_bytes(keys.manifest) == b'{"before": true}'
        assert time.monotonic() - started >= 1.0
    finally:
        if restart.is_alive():
            restart.join()
        s3_service.start()  # no-op when the timer started it
        s3_service.wait_healthy(90)

    assert store.flush() == 3
    assert store.spool_size().entries == 0
    direct = S3ObjectStore(s3_settings)
    assert direct.get_bytes(keys.manifest) == b'{"offline": true}'
    assert direct.get_bytes(keys.screen(1)) == b"\x89PNG offline frame"
    assert len(direct.get_bytes(keys.capture_image("cap-1"))) == 200_004


def test_first_write_after_recovery_flushes_the_spool(tmp_path: Path) -> None:
    fake = FakeObjectStore()
    store = SpoolingObjectStore(fake, Spool(tmp_path), retry_after_s=0.0)
    fake.set_unavailable(True)
    store.put_bytes("runs/r/a.json", b"1")
    store.put_bytes("runs/r/b.json", b"2")
    assert store.spool_size().entries == 2
    fake.set_unavailable(False)
    store.put_bytes("runs/r/c.json", b"3")
    assert store.spool_size().entries == 0
    assert [i.key for i in fake.list_objects("runs/r/")] == [
        "runs/r/a.json", "runs/r/b.json", "runs/r/c.json",
    ]


def test_newer_write_is_not_overwritten_by_an_older_spooled_one(tmp_path: Path) -> None:
    fake = FakeObjectStore()
    store = SpoolingObjectStore(fake, Spool(tmp_path), retry_after_s=60.0)
    fake.set_unavailable(True)
    store.put_bytes("runs/r/manifest.json", b"old")
    fake.set_unavailable(False)
    # Still within retry_after_s: the write queues behind the spooled one.
    store.put_bytes("runs/r/manifest.json", b"new")
    assert store.flush() == 1
    assert fake.get_bytes("runs/r/manifest.json") == b"new"


def test_offline_store_is_not_retried_on_every_write(tmp_path: Path) -> None:
    fake = FakeObjectStore()
    store = SpoolingObjectStore(fake, Spool(tmp_path), retry_after_s=60.0)
    fake.set_unavailable(True)
    for i in range(5):
        store.put_bytes(f"runs/r/screens/{i:04d}.png", b"png")
    assert fake.calls.count("put_bytes") == 1  # later writes went straight to the spool
    assert store.spool_size().entries == 5


def test_spool_entry_replaced_during_upload_is_kept(tmp_path: Path) -> None:
    spool = Spool(tmp_path)
    first = spool.write("runs/r/x.json", b"v1")
    spool.write("runs/r/x.json", b"v2")  # a newer version lands while v1 uploads
    assert not spool.remove("runs/r/x.json", token=first.token)
    found = spool.read("runs/r/x.json")
    assert found is not None and found[1] == b"v2"
    assert not list(tmp_path.glob("*.tmp"))  # no half-written leftovers


def test_spooled_objects_are_the_owners_alone(tmp_path: Path) -> None:
    previous = os.umask(0o022)  # a person's usual umask
    try:
        spool = Spool(tmp_path / "state" / "spool")
        spool.write("runs/r/screen.png", b"what a run saw")
    finally:
        os.umask(previous)
    files = list((tmp_path / "state" / "spool").iterdir())
    assert files and {stat.S_IMODE(p.stat().st_mode) for p in files} == {0o600}
    assert stat.S_IMODE((tmp_path / "state" / "spool").stat().st_mode) == 0o700
    assert spool.read("runs/r/screen.png") is not None
