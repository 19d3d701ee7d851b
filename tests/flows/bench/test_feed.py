"""A suite longer than the farm is a queue: one task per phone in flight, the next started as a
phone frees up, every task answered; a Prefect API that fails mid-queue is ridden out, and a
stopped run resumes without asking its finished tasks again."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit
from uuid import UUID

import httpx
import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    FlowRunFilter,
    FlowRunFilterId,
    FlowRunFilterParentTaskRunId,
)
from prefect.settings import PREFECT_API_URL, PREFECT_CLIENT_MAX_RETRIES, temporary_settings

from flows.bench import BenchRequest, BenchResults, run_bench
from flows.bench.feed import FeedPolicy, feed, is_prefect_fault, most_in_flight
from flows.bench.results import bench_key
from flows.bench.writes import count_prefect_writes
from storage import open_object_store
from tests.flows.conftest import FlowFarm
from tests.support.outage import OutageProxy


def test_the_feed_keeps_one_item_per_phone_in_flight_and_spaces_the_starts() -> None:
    spans: list[tuple[float, float]] = []
    lock = threading.Lock()

    def ask(item: int, serial: str) -> str:
        start = time.monotonic()
        time.sleep(0.2 + 0.05 * (item % 3))
        with lock:
            spans.append((start, time.monotonic()))
        return f"{item} on {serial}"

    fed = feed(list(range(10)), ["a", "b", "c"], ask, lambda *_: "failed",
               policy=FeedPolicy(start_gap_s=0.05))
    assert [f.result.split(" on ")[0] for f in fed] == [str(i) for i in range(10)]
    assert all(f.result.endswith(f.serial) and f.tries == 1 for f in fed)
    assert most_in_flight(spans) == 3  # every phone busy, never more than the phones
    starts = sorted(start for start, _ in spans)
    assert starts[-1] - starts[0] >= 9 * 0.05 - 0.05  # ten starts, at least a gap apart


def test_an_item_that_raises_is_its_own_result_and_the_queue_goes_on() -> None:
    def ask(item: int, serial: str) -> str:
        if item == 2:
            raise ValueError("a broken task file")
        return "answered"

    fed = feed([1, 2, 3], ["a"], ask, lambda item, serial, exc: f"failed: {exc}",
               policy=FeedPolicy(start_gap_s=0.0))
    assert [f.result for f in fed] == ["answered", "failed: a broken task file", "answered"]
    assert [f.tries for f in fed] == [1, 1, 1] and not any(f.gave_up for f in fed)


def test_only_the_prefect_api_failing_for_a_while_is_a_prefect_fault() -> None:
    api = "http://127.0.0.1:4999/api"
    on_api = httpx.Request("POST", f"{api}/flow_runs/")
    elsewhere = httpx.Request("POST", "http://127.0.0.1:8000/v1/chat/completions")

    def answered(status: int, request: httpx.Request) -> httpx.HTTPStatusError:
        return httpx.HTTPStatusError("said no", request=request, response=httpx.Response(status))

    def raised_from(cause: Exception) -> RuntimeError:
        try:
            raise RuntimeError("run failed") from cause
        except RuntimeError as exc:
            return exc

    with temporary_settings({PREFECT_API_URL: api}):
        assert is_prefect_fault(answered(503, on_api)) and is_prefect_fault(answered(429, on_api))
        assert is_prefect_fault(httpx.ReadTimeout("slow", request=on_api))
        assert is_prefect_fault(raised_from(httpx.ConnectError("refused", request=on_api)))
        assert not is_prefect_fault(answered(404, on_api))  # a wrong request, not an outage
        assert not is_prefect_fault(answered(503, elsewhere))  # a model server, not Prefect
        assert not is_prefect_fault(ValueError("a bug"))


@contextmanager
def on_first_task_end(act: Callable[[], None]) -> Iterator[None]:
    """Call ``act`` in the queue's thread as the first task's line is logged (a task ended and
    its phone is about to take the next one)."""
    fired = threading.Event()

    class Trigger(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.levelno == logging.INFO and not fired.is_set():
                fired.set()
                act()

    progress = logging.getLogger("flows.bench.progress")
    handler, level = Trigger(), progress.level
    progress.addHandler(handler)
    progress.setLevel(logging.INFO)
    try:
        yield
    finally:
        progress.removeHandler(handler)
        progress.setLevel(level)


def assert_every_task_answered(results: BenchResults, tasks: int, phones: int) -> None:
    assert len(results.tasks) == tasks
    spans: list[tuple[float, float]] = []
    for task in results.tasks:
        assert task.error is None and task.score is not None and task.run_id, task
        assert task.started_at is not None and task.ended_at is not None
        spans.append((task.started_at.timestamp(), task.ended_at.timestamp()))
    assert len({(t.task_id, t.repeat) for t in results.tasks}) == tasks
    assert most_in_flight(spans) == phones  # every phone used, never more tasks than phones
    for serial in results.phones:  # a phone asks one task at a time
        assert most_in_flight([s for s, t in zip(spans, results.tasks, strict=True)
                               if t.serial == serial]) == 1


@pytest.mark.services
@pytest.mark.slow
def test_a_queue_of_nine_tasks_on_two_phones_and_its_resume(flow_farm: FlowFarm, tmp_path: Path) -> None:
    request = BenchRequest(suite="smoke", devices=2, repeat=3, out_dir=str(tmp_path / "first"))
    results = run_bench(request)
    assert_every_task_answered(results, tasks=9, phones=2)
    assert results.kept == 0 and set(results.phones) == {t.serial for t in results.tasks}
    # Prefect holds each task's retrieve run directly under the bench run, and of INFO lines
    # only the bench run's own two (started, finished): none per question.
    writes = count_prefect_writes(results.flow_run_id or "")
    assert writes.info_logs <= 2, writes
    with get_client(sync_client=True) as client:
        parents = [t.id for t in client.read_task_runs(flow_run_filter=FlowRunFilter(
            id=FlowRunFilterId(any_=[UUID(results.flow_run_id or "")])))]
        children = client.read_flow_runs(flow_run_filter=FlowRunFilter(
            parent_task_run_id=FlowRunFilterParentTaskRunId(any_=parents)))
    assert sorted(str(c.name)[:5] for c in children) == ["ask: "] * 9

    # Stopped with two tasks unfinished: resuming asks those two only.
    store = open_object_store(flow_farm.settings)
    lost = results.tasks[4], results.tasks[7]
    for task in lost:
        store.delete(bench_key(results.bench_run_id, f"tasks/{task.repeat}-{task.task_id}.json"))
    again = run_bench(request.model_copy(update={"bench_run_id": results.bench_run_id,
                                                 "out_dir": str(tmp_path / "resumed")}))
    assert again.kept == 7 and len(again.tasks) == 9
    for before, after in zip(results.tasks, again.tasks, strict=True):
        assert (after.run_id == before.run_id) == (before not in lost), (before.task_id, after.run_id)
        assert after.error is None and after.score is not None


@pytest.mark.services
@pytest.mark.slow
def test_a_prefect_outage_mid_queue_is_ridden_out_and_every_task_answered(
        flow_farm: FlowFarm, tmp_path: Path) -> None:
    """Six seconds of ``503 Service Unavailable`` (and cut connections) from the Prefect API as
    the first task ends, with a client that does not retry: what 16 phones' state writes did to
    the embedded server once its clients' retries had run out."""
    api = urlsplit(str(PREFECT_API_URL.value()))
    with OutageProxy(api.hostname or "127.0.0.1", api.port or 4200) as proxy, temporary_settings({
            PREFECT_API_URL: proxy.url(api.path), PREFECT_CLIENT_MAX_RETRIES: 0}), \
            on_first_task_end(lambda: proxy.fail_for(6.0)):
        results = run_bench(BenchRequest(suite="smoke", devices=2, repeat=2,
                                         out_dir=str(tmp_path / "out")))
    assert proxy.refused > 0  # the outage happened, and requests met it
    assert_every_task_answered(results, tasks=6, phones=2)
    assert any(t.tries > 1 for t in results.tasks), [t.tries for t in results.tasks]
    kept = open_object_store(flow_farm.settings).list_objects(bench_key(results.bench_run_id, "tasks/"))
    assert len(list(kept)) == 6
