"""Benchmark results as files: the Markdown table, the plots, and comparing two runs."""

from __future__ import annotations

from pathlib import Path

from core.config import Settings
from flows.bench import BenchRequest, BenchResults, BenchTaskResult, compare_results, load_results
from flows.bench.results import render_markdown, write_results
from storage.fake import FakeObjectStore
from suites import ReportScore
from suites.metrics import RoleTokens, TaskMetrics


def _task(task_id: str, found: int, total: int, *, wrong: tuple[str, ...] = (), steps: int = 5,
          wall_s: float = 4.0, navigated: tuple[str, ...] = ("Spotify",)) -> BenchTaskResult:
    points = tuple(f"p{i}" for i in range(total))
    score = ReportScore(points_total=total, found=points[:found], missed=points[found:], wrong=wrong,
                        claims=found + 2, redundant_claims=2)
    metrics = TaskMetrics(apps_wanted=("Spotify",), apps_planned=("Spotify",), apps_right=True,
                          mode_right=True, navigated=navigated, steps=steps, wall_s=wall_s,
                          statuses={"Spotify": "completed"},
                          tokens=(RoleTokens(role="navigator", calls=3, text_tokens=900, image_tokens=1200,
                                             completion_tokens=60),))
    return BenchTaskResult(task_id=task_id, query="q?", run_id=f"run-{task_id}", serial="emulator-5554",
                           score=score, metrics=metrics, expected_coverage=1.0 if task_id == "g_a" else None)


def _results(bench_id: str, *tasks: BenchTaskResult) -> BenchResults:
    return BenchResults(bench_run_id=bench_id, suite="smoke", request=BenchRequest(suite="smoke"),
                        tasks=tasks, phones=("emulator-5554",), host="x86_64, 2 cores", decomposer="rules")


BEFORE = _results("bench-1", _task("g_a", 2, 2), _task("g_b", 1, 4, steps=9, wall_s=10.0))
AFTER = _results("bench-2", _task("g_a", 1, 2, wrong=("¥35",), navigated=()),
                 _task("g_b", 4, 4, steps=6, wall_s=10.5), _task("g_c", 1, 1))


def test_the_table_states_the_suites_figures_and_each_task() -> None:
    text = render_markdown(BEFORE)
    assert "| scoring points stated as answers (coverage) | 3/6 (50%) |" in text
    assert "| tasks fully answered (every point, no wrong value) | 1/2 |" in text
    assert "| g_a | 2/2 ✓ | - | ✓ | ✓ | 1/1 | 5 (0) | 0 | 3 | 4.0 | Spotify completed |" in text
    below = render_markdown(AFTER)
    assert "| g_a | 1/2 (expected 100%) | ¥35 |" in below


def test_compare_marks_improvements_and_regressions_per_task_and_metric() -> None:
    text = compare_results(BEFORE, AFTER)
    assert "| coverage | 50% | 86% | ▲ better |" in text
    assert "| g_a | coverage | 100% | 50% | ▼ worse |" in text
    assert "| g_a | wrong | 0 | 1 | ▼ worse |" in text
    assert "| g_a | navigated apps | 1 | 0 | ▼ worse |" in text
    assert "| g_b | coverage | 25% | 100% | ▲ better |" in text
    assert "| g_b | steps | 9 | 6 | ▲ better |" in text
    assert "g_b | wall s" not in text  # 10.0 -> 10.5 s is timing noise, not marked
    assert "| g_c | (new) |" in text


def test_results_are_written_to_the_store_and_a_folder_and_read_back(tmp_path: Path) -> None:
    store = FakeObjectStore()
    folder = write_results(AFTER, store, str(tmp_path / "out"), Settings(state_dir=tmp_path))
    for name in ("results.json", "results.md", "coverage.png", "time.png", "tokens.png"):
        data = (folder / name).read_bytes()
        assert data == store.get_bytes(f"bench/bench-2/{name}")
        if name.endswith(".png"):
            assert data.startswith(b"\x89PNG") and len(data) > 5000
    assert load_results(store, "bench-2") == AFTER
    assert load_results(store, str(folder / "results.json")) == AFTER
    default = write_results(BEFORE, store, None, Settings(state_dir=tmp_path))
    assert default == tmp_path / "bench" / "bench-1"
