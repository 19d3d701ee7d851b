"""``droidretriever bench run SUITE | list | show RUN | compare A B``: benchmark suites on the farm.

``run`` starts the ``bench`` Prefect flow here (one ``retrieve`` sub-flow per task,
visible in the Prefect UI; the tasks a queue fed one per phone at once) on the local
stack's farm, prints a line per task as it ends and the suite's table at the end; results go to the object store
(``bench/<id>/``) and a local folder (``--out``, default ``<state>/bench/<id>/``).
See docs/bench.md.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.markdown import Markdown

from core.config import Settings, load_settings
from core.errors import InputError
from core.models import new_id
from core.text import strip_controls
from droidretriever.cli._app import app
from droidretriever.cli.ask import _local_prefect
from droidretriever.cli.inputs import validated

if TYPE_CHECKING:
    from flows.bench import BenchRequest, BenchResults

__all__ = ["bench_app"]

console = Console()

bench_app = typer.Typer(help="Run benchmark suites across the farm; list, show and compare runs.",
                        no_args_is_help=True)
app.add_typer(bench_app, name="bench")

_NO_OPERATOR_PAUSE_S = "5"  # nobody answers: a pause ends its app quickly, as needs_user


class _PrintLines(logging.Handler):
    """Prints the bench flow's progress lines (one per task, numbered; warnings marked !) as they come."""

    def __init__(self, console: Console) -> None:
        super().__init__(logging.INFO)
        self._console = console
        self._count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:  # the queue riding out a fault: not a task's end
            mark = "!"
        else:
            self._count += 1
            mark = str(self._count)
        self._console.print(f"[{mark}] {strip_controls(record.getMessage())}", highlight=False,
                            markup=False)


@bench_app.command("run")
def run_suite(
    suite: str = typer.Argument(..., help="paper, paper-study1, paper-study2, general, examples, "
                                          "smoke, or a folder of task files"),
    devices: int = typer.Option(1, "--devices", min=1, max=256, help="phones used at once"),
    repeat: int = typer.Option(1, "--repeat", min=1, max=100, help="ask every task this often"),
    operator: str = typer.Option("none", "--operator",
                                 help="who answers pauses: none (they time out) or scripted "
                                      "(a test double logs in with a test account, refuses the rest)"),
    operator_delay: float = typer.Option(3.0, "--operator-delay", min=0.0, max=120.0,
                                         help="seconds the scripted operator waits before answering"),
    only: str = typer.Option("", "--only", help="only task ids containing this text"),
    out: Path | None = typer.Option(None, "--out", help="local folder for the results "
                                                        "(default <state>/bench/<id>/)"),
    resume: str | None = typer.Option(None, "--resume", help="a run id that stopped: ask only its "
                                                              "tasks that did not finish, keep the rest"),
    start_gap: float = typer.Option(0.5, "--start-gap", min=0.0, max=60.0,
                                    help="least seconds between two tasks' starts across the farm"),
    outage_window: float = typer.Option(600.0, "--outage-window", min=0.0, max=3600.0,
                                        help="seconds a task waits out a failing Prefect API "
                                             "before it is given up"),
    as_json: bool = typer.Option(False, "--json", help="print results.json instead of the table"),
    count_writes: bool = typer.Option(False, "--count-writes",
                                      help="after the run, count what it wrote to Prefect (runs, "
                                           "states, logs, artifacts) per question"),
    cron: str | None = typer.Option(None, "--cron", help="do not run now: run on this schedule "
                                                         "(e.g. '0 2 * * *') under `droidretriever up`"),
) -> None:
    """Ask every task of SUITE on the farm's phones, score each report, write results and plots."""
    from flows.bench import BenchRequest, OperatorKind, run_bench
    from suites import SuiteError, resolve_suite

    if operator not in {k.value for k in OperatorKind}:
        raise InputError(f"--operator {operator[:20]!r} is neither none nor scripted")
    if resume is not None and cron is not None:
        raise InputError("--resume continues one run; a schedule starts a new run each time",
                         hint="drop --resume to schedule the suite, or --cron to resume now")
    try:
        resolve_suite(suite)  # a wrong name or folder says so before anything starts
    except SuiteError as exc:
        raise InputError(str(exc).splitlines()[0], hint=exc.hint) from exc
    if operator == "none":
        os.environ.setdefault("DROIDRETRIEVER_BUDGETS__PAUSE_TIMEOUT_S", _NO_OPERATOR_PAUSE_S)
    request = BenchRequest(suite=suite, devices=devices, repeat=repeat, operator=OperatorKind(operator),
                           operator_delay_s=operator_delay, only=only, bench_run_id=_run_id(resume),
                           out_dir=str(out) if out else None, start_gap_s=start_gap,
                           outage_window_s=outage_window)
    settings = load_settings()
    if cron is not None:
        _schedule(settings, cron, request)
        return
    shown = Console(stderr=as_json)
    handler = _PrintLines(shown)
    lines = logging.getLogger("flows.bench.progress")
    lines.addHandler(handler)
    lines.setLevel(logging.INFO)
    lines.propagate = False
    # Named now, so that a run that stops can be resumed by it.
    request = request.model_copy(update={"bench_run_id": request.bench_run_id or new_id("bench")})
    shown.print(f"{suite}: asking on up to {devices} phone(s), one task per phone at once; a line per "
                f"task as it ends; run {request.bench_run_id} (resume it with --resume "
                f"{request.bench_run_id})", highlight=False)
    try:
        with _local_prefect(settings):
            results = run_bench(request)
            if count_writes and results.flow_run_id:
                _print_writes(shown, results.flow_run_id, len(results.tasks) - results.kept)
    finally:
        lines.removeHandler(handler)
    if as_json:
        console.print_json(results.model_dump_json())
        return
    _show_results(results, out or settings.state_dir / "bench" / results.bench_run_id, settings)


def _show_results(results: BenchResults, folder: Path, settings: Settings) -> None:
    """The run's table, where its files are, its Prefect run; exit 1 below expectations."""
    from flows.bench import render_markdown

    console.print(Markdown(strip_controls(render_markdown(results))))
    console.print(f"\nresults: {folder}/ (results.json, results.md, coverage.png, time.png)\n"
                  f"object store: bench/{results.bench_run_id}/", highlight=False)
    if results.flow_run_id:
        console.print(f"Prefect run: {settings.prefect.flow_run_url(results.flow_run_id)}",
                      highlight=False)
    below = [t.task_id for t in results.tasks if t.below_expectation]
    if below:
        console.print(f"[red]below the suite's expected coverage:[/] {', '.join(below)}")
        raise typer.Exit(1)


def _print_writes(shown: Console, flow_run_id: str, asked: int) -> None:
    from flows.bench.writes import count_prefect_writes

    writes = count_prefect_writes(flow_run_id)
    shown.print(f"Prefect holds for this run: {writes.line()}; per question asked: "
                f"{writes.line(asked)}", highlight=False)


def _run_id(resume: str | None) -> str | None:
    """``--resume``'s run id, checked: one line says what a run id looks like."""
    if resume is None:
        return None
    if not re.fullmatch(r"bench-[A-Za-z0-9-]{1,80}", resume):
        raise InputError(f"--resume {strip_controls(resume, keep_newlines=False)[:40]!r} is no run id",
                         hint="give an id from `droidretriever bench list` or from the run's first line")
    return resume


def _schedule(settings: Settings, cron: str, request: BenchRequest) -> None:
    from flows.bench.schedules import BenchSchedule, BenchScheduleStore, schedule_bench
    from storage import open_object_store

    schedule = validated(lambda: BenchSchedule.create(cron, request), {"cron": "--cron"})
    with _local_prefect(settings):
        schedule_bench(schedule)
    BenchScheduleStore(open_object_store(settings)).save(schedule)
    console.print(f"{schedule.id}: suite {request.suite} {schedule.schedule}; runs under "
                  "`droidretriever up` (the subscriptions service); `droidretriever bench list` "
                  "shows their results", highlight=False)


@bench_app.command("schedules")
def list_schedules() -> None:
    """The scheduled benchmark runs."""
    from flows.bench.schedules import BenchScheduleStore
    from storage import open_object_store

    for s in BenchScheduleStore(open_object_store(load_settings())).list():
        r = s.request
        console.print(f"{s.id}  {s.schedule:<18} suite {r.suite}  {r.devices} phone(s)  "
                      f"{r.operator.value} operator", highlight=False)


@bench_app.command("unschedule")
def unschedule(schedule_id: str = typer.Argument(..., help="an id from `bench schedules`")) -> None:
    """Stop a scheduled benchmark run (its stored results stay)."""
    from flows.bench.schedules import BenchScheduleStore, unschedule_bench
    from storage import open_object_store

    settings = load_settings()
    with _local_prefect(settings):
        unschedule_bench(BenchScheduleStore(open_object_store(settings)), schedule_id)
    console.print(f"{schedule_id}: unscheduled", highlight=False)


@bench_app.command("list")
def list_runs() -> None:
    """The stored benchmark runs, newest first."""
    from flows.bench import list_results
    from storage import open_object_store

    for results in list_results(open_object_store(load_settings())):
        s = results.summary()
        console.print(f"{results.bench_run_id}  {results.started_at:%Y-%m-%d %H:%M}  {results.suite:<14} "
                      f"{s.tasks} task(s)  coverage {s.coverage:.0%}  full {s.fully_answered}/{s.tasks}  "
                      f"{results.request.operator.value} operator", highlight=False)


@bench_app.command("show")
def show_run(run: str = typer.Argument(..., help="a run id, or a results.json path")) -> None:
    """A run's table."""
    from flows.bench import load_results, render_markdown
    from storage import open_object_store

    results = load_results(open_object_store(load_settings()), run)
    console.print(Markdown(strip_controls(render_markdown(results))))


@bench_app.command("compare")
def compare_runs(before: str = typer.Argument(..., help="run id or results.json"),
                 after: str = typer.Argument(..., help="run id or results.json"),
                 as_markdown: bool = typer.Option(False, "--markdown", help="print Markdown source")) -> None:
    """Per task and per metric differences from BEFORE to AFTER (▲ better, ▼ worse)."""
    from flows.bench import compare_results, load_results
    from storage import open_object_store

    store = open_object_store(load_settings())
    text = compare_results(load_results(store, before), load_results(store, after))
    console.print(text if as_markdown else Markdown(strip_controls(text)), highlight=False)
