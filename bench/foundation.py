"""Foundation benchmark: embedded S3 put+get latency and throughput, Redis event latency.

Run: ``python -m bench.foundation``. Starts its own SeaweedFS and Redis (the
deploy.local service code) on free ports in a temporary folder, so it never
touches a developer's stack, and writes the "foundation" block of
docs/benchmarks.md.
"""

from __future__ import annotations

import io
import os
import socket
import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from PIL import Image

from bench.results import parse_bench_args, percentile, summarize_ms, write_section
from core.config import RedisSettings, S3Settings, Settings, StackSettings, load_settings
from core.models import RunEvent, RunEventKind
from core.redis_client import open_redis
from deploy.local import RedisService, SeaweedService, ensure_stack_secrets, is_port_free
from storage import FakeObjectStore, RunEventPublisher, RunEventReader, S3ObjectStore

__all__ = ["main"]

ROUNDS = 40
WRITERS = 8
PUTS_PER_WRITER = 10
EVENTS = 300


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _free_port_block(count: int) -> int:
    for _ in range(200):
        base = _free_port()
        if base + count < 65536 and all(is_port_free("127.0.0.1", base + i) for i in range(count)):
            return base
    raise RuntimeError("no free port block")


def make_png(size_bytes: int = 1_000_000) -> bytes:
    """A PNG of about ``size_bytes`` (noise does not compress, like a photo-heavy screen)."""
    side = int((size_bytes / 3) ** 0.5)
    pixels = np.random.default_rng(7).integers(0, 256, (side, side, 3), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG", compress_level=1)
    return out.getvalue()


def bench_s3(store: S3ObjectStore, png: bytes) -> tuple[list[float], float, float]:
    """Sequential put+get samples, then 1-writer and 8-writer throughput (objects/s)."""
    store.put_bytes("bench/warmup.png", png)
    samples = []
    for i in range(ROUNDS):
        key = f"bench/seq/{i:04d}.png"
        started = time.perf_counter()
        store.put_bytes(key, png)
        if store.get_bytes(key) != png:
            raise RuntimeError("read back different bytes")
        samples.append(time.perf_counter() - started)

    def write_batch(writer: int) -> None:
        for i in range(PUTS_PER_WRITER):
            store.put_bytes(f"bench/par/{writer}/{i:04d}.png", png)

    started = time.perf_counter()
    write_batch(99)
    single = PUTS_PER_WRITER / (time.perf_counter() - started)
    started = time.perf_counter()
    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(write_batch, range(WRITERS)))
    parallel = WRITERS * PUTS_PER_WRITER / (time.perf_counter() - started)
    return samples, single, parallel


def bench_events(redis_settings: RedisSettings) -> list[float]:
    """Publish-to-read latency: a blocked live reader gets each event (one at a time)."""
    run_id = "run-bench-events"
    publisher = RunEventPublisher(
        open_redis(redis_settings), FakeObjectStore(), flush_interval_s=3600, flush_every=10_000
    )
    reader = RunEventReader(open_redis(redis_settings))
    arrived: dict[int, float] = {}
    got = threading.Event()

    def follow() -> None:
        for event in reader.iter_live(run_id, idle_timeout_s=10, block_s=1.0):
            arrived[event.seq] = time.perf_counter()
            got.set()

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    time.sleep(0.2)
    samples = []
    for i in range(EVENTS):
        kind = RunEventKind.RUN_FINISHED if i == EVENTS - 1 else RunEventKind.LOG
        got.clear()
        started = time.perf_counter()
        seq = publisher.publish(RunEvent(run_id=run_id, kind=kind, message=f"step {i}")).seq
        got.wait(5)
        samples.append(arrived[seq] - started)
    thread.join(5)
    return samples


def _settings(state: Path) -> Settings:
    """Settings for the two services on free ports, with their secrets generated as `up` does."""
    return ensure_stack_secrets(load_settings(
        state_dir=state,
        redis=RedisSettings(url=f"redis://127.0.0.1:{_free_port()}/0"),
        s3=S3Settings(endpoint=f"http://127.0.0.1:{_free_port()}", bucket="droidretriever-bench"),
        stack=StackSettings(weed_base_port=_free_port_block(7)),
    ))


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and write its section of docs/benchmarks.md."""
    parse_bench_args(argv=argv)
    with tempfile.TemporaryDirectory(prefix="dr-bench-") as tmp:
        settings = _settings(Path(tmp))
        services = [SeaweedService(settings), RedisService(settings)]
        for service in services:
            service.start()
        try:
            for service in services:
                service.wait_healthy(90)
            png = make_png()
            samples, single, parallel = bench_s3(S3ObjectStore(settings.s3), png)
            event_samples = bench_events(settings.redis)
        finally:
            for service in services:
                service.stop()

    mb = len(png) / 1e6
    body = f"""
Embedded SeaweedFS S3 (`weed server -s3`, one node, loopback) through `storage.S3ObjectStore`
(minio SDK); Redis stream events through `storage.RunEventPublisher` / `RunEventReader`.

| measurement | result |
|---|---|
| put+get of a {mb:.2f} MB PNG, sequential | {summarize_ms(samples)} |
| put throughput, 1 writer | {single:.1f} objects/s ({single * mb:.1f} MB/s) |
| put throughput, {WRITERS} concurrent writers | {parallel:.1f} objects/s ({parallel * mb:.1f} MB/s) |
| {WRITERS} writers vs 1 writer | {parallel / single:.2f}x |
| event publish-to-live-read latency (Redis XADD via Lua -> blocked XREAD) | {summarize_ms(event_samples)} |

The event latency includes the Lua script (seq + XADD + EXPIRE), JSON encoding and
decoding and the reader thread waking up; the record write to the object store is
buffered and not on this path. Throughput with {WRITERS} writers is bounded by the
{os.cpu_count()} CPU cores of this host, shared by the S3 gateway, filer, volume
server and the writers (and other engineers' jobs).
"""
    path = write_section("foundation", "Foundation: object store and run events",
                         "python -m bench.foundation", body)
    print(body)
    print(f"written to {path}")
    print(f"p95 put+get {percentile([s * 1000 for s in samples], 0.95):.1f} ms; "
          f"median events {statistics.median(event_samples) * 1000:.2f} ms")


if __name__ == "__main__":
    main()
