"""Benchmark suites across the farm, as a product feature (``droidretriever bench``).

    from flows.bench import BenchRequest, run_bench
    results = run_bench(BenchRequest(suite="smoke", devices=2))
    results.summary().coverage, results.tasks[0].score, results.tasks[0].metrics

The ``bench`` flow (:mod:`flows.bench.flow`) asks each task of a suite on a phone
brought to the task's starting state (:mod:`.phones`), through the real ``retrieve``
flow, scores the report and measures the run (:mod:`suites.scoring`,
:mod:`suites.metrics`); the scripted operator (:mod:`.operator`)
answers pauses when asked to; :mod:`.results` writes, lists and compares results.
"""

from __future__ import annotations

from flows.bench.flow import ask_task, bench, run_bench
from flows.bench.models import (
    BenchRequest,
    BenchResults,
    BenchSummary,
    BenchTaskResult,
    OperatorKind,
)
from flows.bench.operator import ScriptedOperator
from flows.bench.results import (
    compare_results,
    list_results,
    load_results,
    render_markdown,
    write_results,
)

__all__ = [
    "BenchRequest",
    "BenchResults",
    "BenchSummary",
    "BenchTaskResult",
    "OperatorKind",
    "ScriptedOperator",
    "ask_task",
    "bench",
    "compare_results",
    "list_results",
    "load_results",
    "render_markdown",
    "run_bench",
    "write_results",
]
