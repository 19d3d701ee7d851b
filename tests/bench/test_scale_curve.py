"""``python -m bench.scale_curve``: a row per run, with the queue's columns from the recorded times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bench.scale_curve import main
from flows.bench import BenchRequest, BenchResults, BenchTaskResult
from suites import resolve_suite
from suites.metrics import measure_task


def _run(devices: int, spans: list[tuple[int, int, int]]) -> BenchResults:
    """Tasks asked at (start s, end s, tries) from one moment."""
    task = resolve_suite("smoke").tasks[0]
    at = datetime(2026, 11, 28, tzinfo=UTC)
    tasks = tuple(BenchTaskResult(task_id=task.id, repeat=i + 1, query=task.query,
                                  metrics=measure_task(task, None, [], wall_s=float(end - start)),
                                  started_at=at + timedelta(seconds=start),
                                  ended_at=at + timedelta(seconds=end), tries=tries,
                                  error="ReadTimeout: gave up" if tries > 2 else None)
                  for i, (start, end, tries) in enumerate(spans))
    return BenchResults(bench_run_id=f"bench-{devices}", suite="smoke",
                        request=BenchRequest(suite="smoke", devices=devices), tasks=tasks,
                        wall_s=float(max(end for _, end, _ in spans)))


def test_each_run_row_says_errors_tasks_asked_again_and_most_in_flight(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = []
    for devices, spans in ((1, [(0, 10, 1), (10, 20, 1)]),
                           (2, [(0, 10, 1), (0, 5, 2), (5, 12, 3), (10, 14, 1)])):
        path = tmp_path / f"{devices}.json"
        path.write_text(_run(devices, spans).model_dump_json(), encoding="utf-8")
        files.append(str(path))
    main(files)
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")][1:]
    assert rows[0].startswith("| 1 | 6.0 | 1.00x") and rows[0].endswith("| 0 | 0 | 1 |")
    # Two tasks asked again, one of them given up; never more than its 2 phones in flight.
    assert rows[1].startswith("| 2 | 17.1 | 2.86x") and rows[1].endswith("| 1 | 2 | 2 |")
