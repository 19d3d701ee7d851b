"""Questions end to end, scored honestly: ``python -m bench.answers [--suite paper|general|heldout|all]``.

Area "answers" of docs/benchmarks.md. Each task's question goes, as a person
would type it, to the ``retrieve`` flow with no model configured (rule
decomposer, copilot with route memory / skills / explorer, extractive
synthesis), on phones reset to the task's starting state (its simulated day,
its ``signed_out`` apps logged out). The plan is always the product's own:
nothing here reads the suites' scripted paths or their search terms (an
import-linter contract keeps ``suites.subtasks`` out).

Scoring is ``suites.scoring``: a scoring point counts only in a
cited claim of the report's answer, never from a page the extractive writer
copied because nothing matched (``Report.page_dumps``), and a wrong value
stated (another record, one a filter excludes) counts against accuracy.
Reported per suite, measured side by side in one run: share of scoring points,
questions fully answered (every point, no wrong value), accuracy, redundancy,
apps right (the plan chose exactly the task's apps), pauses right (the apps
that paused are the task's expected ``pauses``), wall time; and what issue 15's
goals count: inputs typed into fields that are not the app's search field, and
pauses on screens that are not themselves risky (``bench.answer_audit``).

Everything is real and local, as in ``bench.flows``: redis-server, SeaweedFS
S3, a temporary Prefect server, virtual phones in their own process (zero
latency: this measures answers, not speed), one worker process per phone.
Route memory starts empty and learns as the run goes. Nobody answers pauses:
a login wall ends its app as ``needs_user`` after a few seconds.

``--suite heldout`` measures the held-out questions (``suites/heldout``)
on their own, never with ``all``, and always whole (``--only`` is refused): what it
writes and prints names none of its tasks (``bench.answer_results.AGGREGATE_ONLY_SUITES``).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from bench.answer_audit import FieldKind, PauseWatcher, SimTruth, audit_inputs
from bench.answer_results import (
    AGGREGATE_ONLY_SUITES,
    TaskAnswer,
    is_aggregate_only,
    write_answers_section,
)
from bench.flows import bench_services
from bench.maps import load_maps_into
from bench.results import parse_bench_args
from core.config import load_settings
from core.errors import DroidRetrieverError
from core.models import RunEventKind, new_id
from core.redis_client import open_redis
from device_farm.registry import DeviceRegistry
from device_farm.sim import SimControlClient, load_catalog
from storage import ObjectStore, RunEventReader, open_object_store
from suites import ReportScore, SuiteTask, load_suite, score_task_report

__all__ = ["SUITE_CHOICES", "TaskAnswer", "answer_task", "main", "old_rule_points"]

SUITE_CHOICES = {"paper": ("paper",), "general": ("general",), "heldout": ("heldout",), "dev": ("dev",),
                 "all": ("paper", "general")}
PAUSE_TIMEOUT_S = "5"
MAP_PASS = " · map"  # the suffix of a suite's name in the pass answered with the app maps  # login walls: nobody is there to log in; the report names the app


def old_rule_points(markdown: str, points: tuple[str, ...]) -> int:
    """The previous measure, kept to restate it: points found anywhere in the report's text."""
    body = "".join(markdown.replace("\\", "").split()).casefold()
    return sum(1 for point in points if "".join(point.split()).casefold() in body)


def _start_state(task: SuiteTask, control: SimControlClient) -> None:
    """Every phone as booted, on the task's day, with its signed-out apps logged out."""
    control.reset("boot")
    control.set_day(task.day)
    catalog = load_catalog()
    for label in task.signed_out:
        spec = catalog.find_label(label)
        if spec is None:
            raise DroidRetrieverError(f"{task.id} signs out {label!r}, which the phones do not have",
                                      hint="name an app of device_farm/sim/apps")
        for phone in control.status():
            control.set_logged_in(phone.serial, spec.package, False)


def answer_task(task: SuiteTask, suite: str, control: SimControlClient, reader: RunEventReader,
                watcher: PauseWatcher, truth: SimTruth) -> TaskAnswer:
    """Ask ``task``'s question from its starting state; score the report and audit the run."""
    from flows.models import RetrieveRequest
    from flows.retrieve import run_retrieve

    _start_state(task, control)
    run_id = new_id("run")
    watcher.start(run_id)
    started = time.perf_counter()
    base = {"task_id": task.id, "suite": suite, "apps_wanted": task.apps, "pauses_expected": task.pauses}
    try:
        outcome = run_retrieve(RetrieveRequest(text=task.query, run_id=run_id))
    except DroidRetrieverError as exc:
        return TaskAnswer(**base, score=ReportScore(points_total=len(task.scoring_points),
                                                    missed=task.scoring_points),
                          wall_s=time.perf_counter() - started, error=str(exc)[:120],
                          pause_sites=tuple(watcher.sites()))
    wall = time.perf_counter() - started
    report = outcome.report
    events = reader.read_after(run_id, 0, count=100_000)
    packages = {s.id: s.package for e in events if e.kind is RunEventKind.PLAN_READY and e.plan
                for s in e.plan.subtasks}
    return TaskAnswer(
        **base, apps_planned=tuple(a.app_label for a in report.apps),
        statuses={a.app_label: a.status.value for a in report.apps},
        score=score_task_report(task, report),
        old_rule_found=old_rule_points(report.markdown, task.scoring_points), wall_s=wall,
        typed=tuple(audit_inputs(events, truth, packages)), pause_sites=tuple(watcher.sites()),
        report=report.markdown, page_dumps=report.page_dumps,
    )


def _row(answer: TaskAnswer) -> str:
    """One progress line; a held-out task is not named, and neither are its apps."""
    score = answer.score
    outcome = answer.error or ", ".join(f"{a} {s}" for a, s in answer.statuses.items())
    name = answer.task_id
    if is_aggregate_only(answer.suite):
        name, outcome = f"a {answer.suite} task", "details withheld"
    form = sum(1 for t in answer.typed if t.kind is FieldKind.FORM)
    return (f"{name}: {len(score.found)}/{score.points_total} points, {len(score.wrong)} wrong, "
            f"apps {'ok' if answer.apps_right else 'no'}, pauses {'ok' if answer.pauses_right else 'no'}, "
            f"{form} form input(s), {answer.wall_s:.1f} s ({outcome})")


def _prepare_pass(store: ObjectStore, maps_from: Path | None) -> None:
    """Before a pass: no remembered routes (each pass learns its own), and the maps or none."""
    for info in store.list_objects("memory/routes/"):
        store.delete(info.key)
    for info in store.list_objects("maps/"):
        store.delete(info.key)
    if maps_from is not None:
        count = load_maps_into(store, maps_from)
        print(f"loaded {count} app-map objects from {maps_from}", flush=True)


def main(argv: list[str] | None = None) -> None:
    """Ask every task of the chosen suites, then write the "answers" block of docs/benchmarks.md."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", choices=sorted(SUITE_CHOICES), default="all",
                        help="which suites to ask, side by side in one run (default: all)")
    parser.add_argument("--only", default="", help="only task ids containing this text (a trial run)")
    parser.add_argument("--json", type=Path, help="also save every task's answer, report included, here")
    parser.add_argument("--maps-from", type=Path,
                        help="app maps kept by `python -m bench.maps --out DIR`: the phones' maps during the run")
    parser.add_argument("--compare", action="store_true",
                        help="with --maps-from: every question without the maps, then with them (route memory "
                             "cleared before each pass), side by side in the written block")
    args = parse_bench_args(parser, argv)
    if args.compare and args.maps_from is None:
        parser.error("--compare compares without and with app maps: give --maps-from DIR")
    if args.maps_from is not None and not (args.maps_from / "maps").is_dir():
        parser.error(f"--maps-from {args.maps_from}: no maps/ folder there (run python -m bench.maps --out DIR)")
    if args.only and AGGREGATE_ONLY_SUITES & set(SUITE_CHOICES[args.suite]):
        parser.error(f"--only picks tasks by id; --suite {args.suite} is measured whole, its ids unread")
    catalog = load_catalog()
    tasks = [(suite, task) for suite in SUITE_CHOICES[args.suite] for task in load_suite(suite)
             if all(catalog.find_label(a) is not None for a in task.apps) and args.only in task.id]
    os.environ["DROIDRETRIEVER_BUDGETS__PAUSE_TIMEOUT_S"] = PAUSE_TIMEOUT_S
    answers: list[TaskAnswer] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, bench_services(Path(tmp), 3, "zero") as serials:
        settings = load_settings()
        port = int(DeviceRegistry.from_settings(settings).info(serials[0]).adb_port)
        control = SimControlClient("127.0.0.1", port)
        truth = SimTruth(catalog)
        watcher = PauseWatcher(RunEventReader(open_redis(settings.redis)), control, truth)
        reader = RunEventReader(open_redis(settings.redis))
        store = open_object_store(settings)
        passes = [("", False), (MAP_PASS, True)] if args.compare else [(MAP_PASS if args.maps_from else "",
                                                                          args.maps_from is not None)]
        for suffix, with_maps in passes:
            _prepare_pass(store, args.maps_from if with_maps else None)
            for number, (suite, task) in enumerate(tasks, 1):
                answer = answer_task(task, suite + suffix, control, reader, watcher, truth)
                answers.append(answer)
                print(f"[{number}/{len(tasks)}{suffix}] {_row(answer)}", flush=True)
    total_s = time.perf_counter() - started
    if args.json is not None:
        args.json.write_text(json.dumps([a.model_dump(mode="json") for a in answers], ensure_ascii=False,
                                        indent=1), encoding="utf-8")
        print(f"saved {len(answers)} answers to {args.json}")
    path = write_answers_section(answers, f"python -m bench.answers --suite {args.suite}", total_s, catalog)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
