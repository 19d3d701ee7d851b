"""The ``bench`` flow: a suite's tasks across the farm's phones, each run scored.

    bench(BenchRequest(suite="paper-study2", devices=8, operator="scripted"))
      pick up to N idle phones  ->  one "bench-task" sub-flow per task (and repeat), N at once:
          bring its phone to the task's start state (flows.bench.phones)
          the real ``retrieve`` flow, pinned to that phone, on the question as a person asks it
          (the plan is the product's own: nothing reads the suites' scripted paths)
          score the report (droidretriever.suites.scoring) and measure the run (.metrics)
      ->  BenchResults: results.json, results.md and plots in the object store
          (bench/<bench_run_id>/) and a local folder (flows.bench.results)

Pauses: with ``operator=scripted`` the :class:`~flows.bench.operator.ScriptedOperator`
answers them (logs in, refuses the rest); with ``none`` nobody does and a pause ends
its app as ``needs_user`` after ``budgets.pause_timeout_s``.
"""

from __future__ import annotations

import logging
import os
import platform
import queue
import time
from contextlib import nullcontext
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.task_runners import ThreadPoolTaskRunner

from device_farm.models import DeviceState
from droidretriever.config import load_settings
from droidretriever.errors import DroidRetrieverError
from droidretriever.models import RunEvent, RunEventKind, StepRecord, SubTaskResult, new_id
from droidretriever.suites import SuiteTask, resolve_suite, score_task_report
from droidretriever.suites.metrics import TaskMetrics, measure_task
from flows.bench.models import BenchRequest, BenchResults, BenchTaskResult, OperatorKind
from flows.bench.operator import ScriptedOperator
from flows.bench.phones import missing_apps, prepare_phone
from flows.bench.results import write_results
from flows.errors import FlowError
from flows.models import RetrieveRequest
from flows.retrieve import run_retrieve
from flows.runtime import FlowServices, open_services
from flows.ui import current_flow_run_id
from storage import RunEventReader

__all__ = ["ask_on_a_phone", "bench", "bench_task", "describe_task_result", "pick_phones", "run_bench"]

# One line per task as it ends (the CLI prints them; the Prefect UI has the runs themselves).
progress = logging.getLogger("flows.bench.progress")


def describe_task_result(result: BenchTaskResult) -> str:
    """``s2_single_07 on emulator-5554: 10/10 points, 0 wrong, 14 steps (0 a person's), 6.2 s``."""
    score, m = result.score, result.metrics
    points = f"{len(score.found)}/{score.points_total} points, {len(score.wrong)} wrong" if score else "no report"
    told = f" ({result.error})" if result.error else ""
    return (f"{result.task_id} on {result.serial}: {points}, {m.steps} steps "
            f"({m.intervention_steps} a person's), {m.wall_s:.1f} s{told}")


def _bench_name() -> str:
    from prefect.runtime import flow_run as current_run

    request = current_run.parameters.get("request")
    suite = getattr(request, "suite", None) or (request or {}).get("suite", "?")
    return f"bench: {suite}"[:120]


def pick_phones(services: FlowServices, wanted: int) -> tuple[str, ...]:
    """Up to ``wanted`` phones that are alive and idle, in serial order."""
    alive = [s.info.serial for s in services.registry.statuses()
             if s.heartbeat_alive and s.state is DeviceState.IDLE]
    if not alive:
        raise FlowError("no phone of the farm is idle, so no task can be asked",
                        hint="start phones with `droidretriever farm up --sim 2`")
    return tuple(sorted(alive)[:wanted])


@flow(name="bench-task", flow_run_name="{task.id} on {serial}", validate_parameters=False)
def bench_task(task: SuiteTask, serial: str, repeat: int = 1,
               expected_coverage: float | None = None,
               operator: ScriptedOperator | None = None) -> BenchTaskResult:
    """Ask one task on ``serial`` from its starting state; score and measure the run."""
    services = open_services(load_settings())
    base = BenchTaskResult(task_id=task.id, repeat=repeat, query=task.query, serial=serial,
                           metrics=measure_task(task, None, []), expected_coverage=expected_coverage)
    lacking = missing_apps(services.registry, serial, task)
    if lacking:
        return base.model_copy(update={"error": f"phone {serial} lacks {', '.join(lacking)}"})
    try:
        prepare_phone(services.registry, serial, task)
    except FlowError as exc:  # this task cannot start there; the suite goes on
        return base.model_copy(update={"error": str(exc).splitlines()[0][:200]})
    run_id = new_id("run")
    if operator is not None:
        operator.watch(run_id)
    started = time.perf_counter()
    try:
        outcome = run_retrieve(RetrieveRequest(text=task.query, run_id=run_id, device=serial))
    except DroidRetrieverError as exc:
        wall = time.perf_counter() - started
        events = _events(services, run_id)
        return base.model_copy(update={
            "run_id": run_id, "error": str(exc).splitlines()[0][:200],
            "metrics": _measure(task, events, services, run_id, wall),
            "operator_answers": operator.answers(run_id) if operator else 0})
    wall = time.perf_counter() - started
    events = _events(services, run_id)
    return base.model_copy(update={
        "run_id": run_id, "score": score_task_report(task, outcome.report),
        "metrics": _measure(task, events, services, run_id, wall),
        "operator_answers": operator.answers(run_id) if operator else 0})


@task(name="ask-on-a-phone", task_run_name="{task.id}", cache_policy=NO_CACHE)
def ask_on_a_phone(task: SuiteTask, phones: queue.Queue[str], repeat: int,
                   expected_coverage: float | None,
                   operator: ScriptedOperator | None) -> BenchTaskResult:
    """Take a free phone of the run's pool, ask the task there, give the phone back."""
    serial = phones.get()
    try:
        result = bench_task(task, serial, repeat, expected_coverage, operator)
    finally:
        phones.put(serial)
    progress.info("%s", describe_task_result(result))
    return result


@flow(name="bench", flow_run_name=_bench_name, validate_parameters=True)
def bench(request: BenchRequest) -> BenchResults:
    """Run ``request``'s suite across the farm; results are stored and returned."""
    services = open_services(load_settings())
    suite = resolve_suite(request.suite)
    tasks = [t for t in suite.tasks if request.only in t.id]
    if not tasks:
        raise FlowError(f"no task of suite {suite.name} matches {request.only!r}",
                        hint="drop --only, or give a part of a task id")
    bench_run_id = request.bench_run_id or new_id("bench")
    phones = pick_phones(services, request.devices)
    pool: queue.Queue[str] = queue.Queue()
    for serial in phones:
        pool.put(serial)
    started_at = time.perf_counter()
    results = BenchResults(bench_run_id=bench_run_id, suite=suite.name, request=request, phones=phones,
                           host=f"{platform.machine()}, {_cores()} cores, Python {platform.python_version()}",
                           decomposer=_decomposer(services), flow_run_id=_flow_run_id())
    operator = (ScriptedOperator(services.redis, services.registry, services.store, services.manifests,
                                 delay_s=request.operator_delay_s)
                if request.operator is OperatorKind.SCRIPTED else None)
    with operator if operator is not None else nullcontext():
        futures = [ask_on_a_phone.submit(t, pool, r, suite.expect.get(t.id), operator)
                   for r in range(1, request.repeat + 1) for t in tasks]
        done = tuple(f.result() for f in futures)
    results = results.model_copy(update={"tasks": done, "wall_s": time.perf_counter() - started_at})
    write_results(results, services.store, request.out_dir, services.settings)
    return results


def run_bench(request: BenchRequest) -> BenchResults:
    """Run the ``bench`` flow with one thread per phone in use (``request.devices``)."""
    runner: ThreadPoolTaskRunner[Any] = ThreadPoolTaskRunner(max_workers=request.devices)
    return bench.with_options(task_runner=runner)(request)  # type: ignore[arg-type]  # Prefect's generic


def _events(services: FlowServices, run_id: str) -> list[RunEvent]:
    return RunEventReader(services.redis).read_after(run_id, 0, count=100_000)


def _measure(task: SuiteTask, events: list[RunEvent], services: FlowServices, run_id: str,
             wall_s: float) -> TaskMetrics:
    plan = next((e.plan for e in events if e.kind is RunEventKind.PLAN_READY and e.plan), None)
    last: dict[str, SubTaskResult] = {}
    for event in events:
        if event.kind is RunEventKind.SUBTASK_FINISHED and event.result is not None:
            last[event.result.subtask_id] = event.result
    steps: list[StepRecord] = [e.step for e in events if e.kind is RunEventKind.STEP and e.step]
    paused = any(e.kind is RunEventKind.NEEDS_USER for e in events)
    try:
        tokens = services.manifests.read(run_id).tokens
    except DroidRetrieverError:
        tokens = None
    return measure_task(task, plan, list(last.values()), tokens=tokens, wall_s=wall_s,
                        paused=paused, steps=steps)


def _decomposer(services: FlowServices) -> str:
    role = services.settings.llm.decomposer
    return f"llm:{role.model}" if role.base_url and role.model else "rules"


def _flow_run_id() -> str | None:
    flow_run_id = current_flow_run_id()
    return str(flow_run_id) if flow_run_id else None


def _cores() -> int:
    return os.cpu_count() or 1

