"""In-memory test doubles for the small protocols the copilot depends on (named as such)."""

from __future__ import annotations

__all__ = ["InMemoryBlobStore"]


class InMemoryBlobStore:
    """A ``BlobStore`` that keeps objects in a dict, and can fail on demand."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}
        self.fail_next_put: OSError | None = None

    def get(self, key: str) -> bytes | None:
        return self.objects.get(key)

    def put(self, key: str, data: bytes) -> None:
        if self.fail_next_put is not None:
            error, self.fail_next_put = self.fail_next_put, None
            raise error
        self.objects[key] = bytes(data)
