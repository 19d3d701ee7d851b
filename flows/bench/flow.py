"""The ``bench`` flow: a suite's tasks across the farm's phones, each run scored.

    run_bench(BenchRequest(suite="paper-study2", devices=8, operator="scripted"))
      pick up to N idle phones  ->  the tasks (and repeats) a queue fed to them (flows.bench.feed):
      one task per phone at once, the next as soon as that phone is free; for each task
          bring its phone to the task's start state (flows.bench.phones)
          the real ``retrieve`` flow (a sub-flow of ``bench``), pinned to that phone, on the
          question as a person asks it (the plan is the product's own: nothing reads the
          suites' scripted paths)
          score the report (suites.scoring) and measure the run (.metrics),
          keep the result in the run's journal (flows.bench.journal)
      ->  BenchResults: results.json, results.md and plots in the object store
          (bench/<bench_run_id>/) and a local folder (flows.bench.results)

Prefect faults: a task whose run the Prefect API failed under (5xx, no answer) is asked again
once it answers; a ``bench`` flow it failed under is resumed from its journal (run_bench).

Pauses: with ``operator=scripted`` the :class:`~flows.bench.operator.ScriptedOperator`
answers them (logs in, refuses the rest); with ``none`` nobody does and a pause ends
its app as ``needs_user`` after ``budgets.pause_timeout_s``.
"""

from __future__ import annotations

import logging
import os
import platform
import time
from contextlib import nullcontext

from prefect import flow
from pydantic import ValidationError

from core.config import load_settings
from core.errors import DroidRetrieverError
from core.models import (
    Report,
    RunEvent,
    RunEventKind,
    RunStatus,
    StepRecord,
    SubTaskResult,
    new_id,
)
from device_farm.models import DeviceState
from flows.bench.feed import Fed, FeedPolicy, feed, is_prefect_fault, wait_for_prefect
from flows.bench.journal import TaskJournal
from flows.bench.models import BenchRequest, BenchResults, BenchTaskResult, OperatorKind
from flows.bench.operator import ScriptedOperator
from flows.bench.phones import missing_apps, prepare_phone
from flows.bench.quiet import quiet_prefect_logs
from flows.bench.results import write_results
from flows.errors import FlowError
from flows.models import RetrieveRequest
from flows.retrieve import run_retrieve
from flows.runtime import FlowServices, open_services
from flows.ui import current_flow_run_id
from storage import RunEventReader, RunKeys
from suites import SuiteTask, resolve_suite, score_task_report
from suites.metrics import TaskMetrics, measure_task

__all__ = ["ask_task", "bench", "describe_task_result", "pick_phones", "run_bench"]

# One line per task as it ends (the CLI prints them; the Prefect UI has the runs themselves).
progress = logging.getLogger("flows.bench.progress")


def describe_task_result(result: BenchTaskResult) -> str:
    """``s2_single_07 on emulator-5554: 10/10 points, 0 wrong, 14 steps (0 a person's), 6.2 s``."""
    score, m = result.score, result.metrics
    points = f"{len(score.found)}/{score.points_total} points, {len(score.wrong)} wrong" if score else "no report"
    told = f" ({result.error})" if result.error else ""
    tries = f", asked {result.tries} times" if result.tries > 1 else ""
    return (f"{result.task_id} on {result.serial}: {points}, {m.steps} steps "
            f"({m.intervention_steps} a person's), {m.wall_s:.1f} s{tries}{told}")


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


def ask_task(task: SuiteTask, serial: str, repeat: int = 1, expected_coverage: float | None = None,
             operator: ScriptedOperator | None = None) -> BenchTaskResult:
    """Ask one task on ``serial`` from its starting state; score and measure the run.

    The task's ``retrieve`` run is a sub-flow of the calling flow (the ``bench`` run). A
    Prefect API that failed under the run is raised (the queue asks the task again), unless
    the run had ended all the same: then its stored report is scored.
    """
    services = open_services(load_settings())
    base = _unasked(task, serial, repeat, expected_coverage)
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
    report: Report | None = None
    error: str | None = None
    try:
        report = run_retrieve(RetrieveRequest(text=task.query, run_id=run_id, device=serial)).report
    except Exception as exc:
        if is_prefect_fault(exc):
            report = _ended_report(services, run_id)
            if report is None:
                raise
        elif isinstance(exc, DroidRetrieverError):
            error = str(exc).splitlines()[0][:200]
        else:
            raise
    wall = time.perf_counter() - started
    return base.model_copy(update={
        "run_id": run_id, "score": score_task_report(task, report) if report is not None else None,
        "error": error, "metrics": _measure(task, _events(services, run_id), services, run_id, wall),
        "operator_answers": operator.answers(run_id) if operator else 0})


def _unasked(task: SuiteTask, serial: str, repeat: int, expected_coverage: float | None) -> BenchTaskResult:
    return BenchTaskResult(task_id=task.id, repeat=repeat, query=task.query, serial=serial,
                           metrics=measure_task(task, None, []), expected_coverage=expected_coverage)


def _ended_report(services: FlowServices, run_id: str) -> Report | None:
    """The report of a run that completed although Prefect failed afterwards, else None."""
    try:
        manifest = services.manifests.read(run_id)
        if manifest.status is not RunStatus.COMPLETED:
            return None
        return Report.model_validate_json(services.store.get_bytes(RunKeys(run_id).report_json))
    except (DroidRetrieverError, ValidationError):
        return None


@flow(name="bench", flow_run_name=_bench_name, validate_parameters=True)
def bench(request: BenchRequest) -> BenchResults:
    """Run ``request``'s suite across the farm; results are stored and returned.

    The tasks are a queue fed to the phones (:func:`flows.bench.feed.feed`): one per phone
    at once, each ended task journaled, so that ``request.bench_run_id`` of a run that
    stopped resumes it without asking its finished tasks again.
    """
    services = open_services(load_settings())
    suite = resolve_suite(request.suite)
    tasks = [t for t in suite.tasks if request.only in t.id]
    if not tasks:
        raise FlowError(f"no task of suite {suite.name} matches {request.only!r}",
                        hint="drop --only, or give a part of a task id")
    bench_run_id = request.bench_run_id or new_id("bench")
    journal = TaskJournal(services.store, bench_run_id)
    kept = journal.finished()
    wanted = [(t, r) for r in range(1, request.repeat + 1) for t in tasks]
    todo = [(t, r) for t, r in wanted if (t.id, r) not in kept]
    phones = pick_phones(services, request.devices) if todo else ()
    started_at = time.perf_counter()
    results = BenchResults(bench_run_id=bench_run_id, suite=suite.name, request=request, phones=phones,
                           host=f"{platform.machine()}, {_cores()} cores, Python {platform.python_version()}",
                           decomposer=_decomposer(services), flow_run_id=_flow_run_id(),
                           kept=len(wanted) - len(todo))
    operator = (ScriptedOperator(services.redis, services.registry, services.store, services.manifests,
                                 delay_s=request.operator_delay_s)
                if request.operator is OperatorKind.SCRIPTED else None)
    with operator if operator is not None else nullcontext(), quiet_prefect_logs():
        asked = _feed_tasks(todo, phones, suite.expect, operator, request, journal)
    done = tuple(kept.get((t.id, r)) or asked[(t.id, r)] for t, r in wanted)
    results = results.model_copy(update={"tasks": done, "wall_s": time.perf_counter() - started_at})
    write_results(results, services.store, request.out_dir, services.settings)
    return results


def _feed_tasks(todo: list[tuple[SuiteTask, int]], phones: tuple[str, ...], expect: dict[str, float],
                operator: ScriptedOperator | None, request: BenchRequest,
                journal: TaskJournal) -> dict[tuple[str, int], BenchTaskResult]:
    """Ask ``todo`` on ``phones``, one per phone at once; each result journaled as it ends."""

    def ask(item: tuple[SuiteTask, int], serial: str) -> BenchTaskResult:
        return ask_task(item[0], serial, item[1], expect.get(item[0].id), operator)

    def fail(item: tuple[SuiteTask, int], serial: str, exc: BaseException) -> BenchTaskResult:
        said = (str(exc).splitlines() or [""])[0][:180]
        return _unasked(item[0], serial, item[1], expect.get(item[0].id)).model_copy(
            update={"error": f"{type(exc).__name__}: {said}"})

    def ended(fed: Fed[BenchTaskResult]) -> None:
        result = _timed(fed)
        progress.info("%s", describe_task_result(result))
        if not fed.gave_up:  # a task Prefect never let run is asked again on --resume
            journal.record(result)

    policy = FeedPolicy(start_gap_s=request.start_gap_s, outage_window_s=request.outage_window_s)
    fed = feed(todo, phones, ask, fail, policy=policy, on_done=ended,
               label=lambda item: f"{item[0].id} (repeat {item[1]})")
    return {(r.task_id, r.repeat): r for r in map(_timed, fed)}


def _timed(fed: Fed[BenchTaskResult]) -> BenchTaskResult:
    return fed.result.model_copy(update={"started_at": fed.started_at, "ended_at": fed.ended_at,
                                         "tries": fed.tries, "serial": fed.serial})


def run_bench(request: BenchRequest) -> BenchResults:
    """Run the ``bench`` flow; when the Prefect API fails under the flow itself, wait until it
    answers and resume the run (its finished tasks are kept), for up to the outage window."""
    request = request if request.bench_run_id else request.model_copy(
        update={"bench_run_id": new_id("bench")})
    deadline = time.monotonic() + request.outage_window_s
    delay = 2.0
    while True:
        try:
            return bench(request)
        except Exception as exc:
            if not is_prefect_fault(exc) or not wait_for_prefect(deadline, delay):
                raise
            progress.warning("bench run %s: the Prefect API failed under it (%s); resuming",
                             request.bench_run_id, (str(exc).splitlines() or [""])[0][:160])
            delay = min(30.0, delay * 2)


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

