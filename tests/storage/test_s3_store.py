"""The S3 adapter against a real SeaweedFS server (the s3_settings fixture)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from core.config import S3Settings
from droidretriever.testing import free_port
from storage import (
    ObjectNotFoundError,
    RunKeys,
    S3ObjectStore,
    StoreAccessError,
    StoreUnavailableError,
)

pytestmark = pytest.mark.services


@pytest.fixture()
def store(s3_settings: S3Settings) -> S3ObjectStore:
    return S3ObjectStore(s3_settings)


def test_put_get_overwrite_and_list(store: S3ObjectStore) -> None:
    keys = RunKeys("run-s3-basic")
    store.put_bytes(keys.manifest, b'{"v": 1}')
    store.put_bytes(keys.manifest, b'{"v": 2}')  # a retried write overwrites
    store.put_bytes(keys.screen(1), b"\x89PNG one")
    store.put_bytes(keys.screen(2), b"\x89PNG two")

    assert store.get_bytes(keys.manifest) == b'{"v": 2}'
    listed = [info.key for info in store.list_objects(keys.prefix)]
    assert listed == [keys.manifest, keys.screen(1), keys.screen(2)]  # no duplicate manifest
    assert store.stat(keys.screen(1)).content_type == "image/png"
    assert store.stat(keys.manifest).content_type == "application/json"
    assert store.list_objects("runs/no-such-run/") == []


def test_large_object_goes_multipart_and_round_trips(store: S3ObjectStore, tmp_path: Path) -> None:
    data = os.urandom(5 * 1024 * 1024 + 17)  # just over one 5 MiB part
    key = RunKeys("run-s3-large").capture_image("cap-1")
    store.put_bytes(key, data)
    assert store.get_bytes(key) == data
    assert store.stat(key).size == len(data)

    path = tmp_path / "frame.png"
    path.write_bytes(data[:300_000])
    store.put_file(key, path)
    assert store.get_bytes(key) == data[:300_000]


def test_unicode_keys(store: S3ObjectStore) -> None:
    key = RunKeys("run-s3-unicode").key("captures", "麦当劳 巨无霸 €5 ✓.json")
    store.put_bytes(key, "价格 ¥25".encode())
    assert store.get_bytes(key).decode() == "价格 ¥25"
    assert [info.key for info in store.list_objects("runs/run-s3-unicode/")] == [key]
    assert store.exists(key)


def test_missing_key_delete_and_presigned_url(store: S3ObjectStore) -> None:
    key = RunKeys("run-s3-misc").report_markdown
    with pytest.raises(ObjectNotFoundError):
        store.get_bytes(key)
    assert not store.exists(key)
    store.put_bytes(key, b"# Report")
    url = store.presigned_get_url(key)
    response = httpx.get(url, timeout=5)
    assert response.status_code == 200
    assert response.content == b"# Report"
    store.delete(key)
    store.delete(key)  # deleting twice is fine
    assert not store.exists(key)


def test_wrong_secret_is_an_access_error(s3_settings: S3Settings) -> None:
    bad = S3ObjectStore(s3_settings.model_copy(update={"secret_key": SecretStr("wrong-secret-key")}))
    with pytest.raises(StoreAccessError) as info:
        bad.put_bytes("runs/x/manifest.json", b"{}")
    assert "DROIDRETRIEVER_S3__SECRET_KEY" in info.value.hint


def test_unreachable_store_fails_fast_after_bounded_retries() -> None:
    dead = S3Settings(endpoint=f"http://127.0.0.1:{free_port()}", retries=2,
                      access_key="some-key", secret_key=SecretStr("some-secret"))
    store = S3ObjectStore(dead, backoff_s=0.05)
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError) as info:
        store.put_bytes("runs/x/manifest.json", b"{}")
    assert time.monotonic() - started < 3.0
    assert "droidretriever up" in info.value.hint
