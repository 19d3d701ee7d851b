"""Run manifests in the real S3 store and the fake."""

from __future__ import annotations

import pytest

from core.config import S3Settings
from core.models import Query, RunManifest, RunStatus, SubTaskStatus
from storage import FakeObjectStore, ManifestError, ManifestStore, RunKeys, S3ObjectStore


def test_write_read_update_on_real_s3(s3_settings: S3Settings) -> None:
    manifests = ManifestStore(S3ObjectStore(s3_settings))
    created = manifests.write(RunManifest(run_id="run-manifest-1", query=Query(text="Big Mac price?")))
    assert manifests.read("run-manifest-1") == created

    updated = manifests.update(
        "run-manifest-1",
        lambda m: m.model_copy(
            update={"status": RunStatus.RUNNING, "subtasks": {"meituan": SubTaskStatus.RUNNING}}
        ),
    )
    assert updated.updated_at >= created.updated_at
    again = manifests.read("run-manifest-1")
    assert again.status is RunStatus.RUNNING
    assert again.subtasks == {"meituan": SubTaskStatus.RUNNING}
    assert "run-manifest-1" in manifests.list_run_ids()


def test_missing_and_damaged_manifests_say_so() -> None:
    fake = FakeObjectStore()
    manifests = ManifestStore(fake)
    with pytest.raises(ManifestError, match="has no manifest"):
        manifests.read("run-nope")
    fake.put_bytes(RunKeys("run-bad").manifest, b'{"run_id": "run-bad"}')
    with pytest.raises(ManifestError, match="not valid"):
        manifests.read("run-bad")


def test_update_revalidates_and_keeps_the_run_id() -> None:
    manifests = ManifestStore(FakeObjectStore())
    manifests.write(RunManifest(run_id="run-x", query=Query(text="q")))
    with pytest.raises(ManifestError, match="run id"):
        manifests.update("run-x", lambda m: m.model_copy(update={"run_id": "run-y"}))
    with pytest.raises(ManifestError, match="invalid manifest"):
        manifests.update("run-x", lambda m: m.model_copy(update={"status": "exploded"}))
    assert manifests.read("run-x").status is RunStatus.PENDING
