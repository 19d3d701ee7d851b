"""Chaos: ``python -m bench.chaos`` (area "chaos" of docs/benchmarks.md).

Questions asked two at a time on four virtual phones (realistic latency) while
faults are injected at random moments, one at a time: a device worker
SIGKILLed (the farm repaired afterwards, as ``droidretriever up`` does), a phone
dropped off the adb server for a few seconds, Redis restarted, the S3 store
stopped (SIGTERM or SIGKILL) and started again, the Prefect server restarted
(SIGTERM or SIGKILL). The same questions are first asked with no fault, side
by side in the same run, for what each run should give and how long it takes.

Per run: did it complete (manifest ``completed``, the report stored, every
sub-task ending as it did with no fault); captures lost (fewer captures than
with no fault, or ids in the manifest whose image is not in the store once the
spool is flushed); captures duplicated (capture images in the run's folder
beyond its manifest's ids, or an id twice); the time a fault added (wall time
minus the same question's with no fault, for the runs a fault overlapped).
Goal: every run completed, none lost, none duplicated.

Everything is real and local: the stack and farm as ``droidretriever up`` starts
them (``droidretriever.testing.LocalStack``), the flow in this process as
``droidretriever ask`` runs it. Bounded in time: no question starts after
``--budget-s`` and a run that has not ended ``--run-timeout-s`` after it started
counts as not completed.
"""

from __future__ import annotations

import argparse
import contextvars
import importlib
import os
import random
import statistics
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from bench.results import create_figure, parse_bench_args, save_plot, write_section
from core.errors import DroidRetrieverError
from core.models import RunStatus, new_id
from device_farm.models import DeviceInfo
from device_farm.sim import SimControlClient
from droidretriever.testing import Fault, LocalStack
from storage import RunKeys, StorageError, open_object_store
from suites import load_suite

__all__ = ["FAULT_KINDS", "ChaosMonkey", "RunRecord", "ask_question", "main"]

# Study 1 and 2 questions that complete on the virtual phones with no model (bench.answers).
QUESTION_TASKS = (
    "s1_05_xiaomi14_prices", "s1_06_12306_afternoon_trains", "s1_07_taxi_trips",
    "s1_08_cainiao_packages", "s2_multi_01_king_gnu", "s2_multi_03_mission_impossible",
    "s2_multi_05_big_mac", "s2_multi_06_vivo_x100_ultra", "s2_single_01_meituan_permissions",
    "s2_single_02_bilibili_guidelines", "s2_single_03_12306_member_rights",
    "s2_single_07_qqmusic_eason", "s2_single_08_tencent_meeting_irene",
    "s2_single_12_taobao_cart_ram", "s2_single_13_shein_currency",
)
FAULT_KINDS = ("worker_kill", "phone_drop", "redis_restart", "s3_restart", "prefect_restart")
_COLOURS = {"worker_kill": "#8e24aa", "phone_drop": "#1e88e5", "redis_restart": "#e53935",
            "s3_restart": "#fb8c00", "prefect_restart": "#43a047"}


class RunRecord(BaseModel):
    """One question asked: when, how it ended, and what it stored."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question: str
    phase: str  # baseline | chaos
    run_id: str
    started: float  # seconds since the phase began
    ended: float
    status: str  # the manifest's, or why there is none
    subtasks: dict[str, str] = {}
    captures: int = 0  # ids in the manifest
    missing: int = 0  # ids in the manifest whose image is not in the store
    extra: int = 0  # images in the run's folder beyond the manifest's ids, ids listed twice
    error: str = ""

    @property
    def wall_s(self) -> float:
        return self.ended - self.started


def ask_question(question: str, phase: str, origin: float, timeout_s: float) -> RunRecord:
    """Ask ``question`` as ``droidretriever ask`` does (the flow in this process); inspect it."""
    from flows.models import RetrieveRequest
    from flows.retrieve import run_retrieve

    run_id = new_id("run")
    started = time.monotonic() - origin
    error = ""
    done = threading.Event()
    context = contextvars.copy_context()  # the Prefect settings of the caller

    def run() -> None:
        nonlocal error
        try:
            context.run(run_retrieve, RetrieveRequest(text=question, run_id=run_id))
        except Exception as exc:  # recorded; the run counts as not completed
            error = f"{type(exc).__name__}: {exc}"[:160]
        finally:
            done.set()

    threading.Thread(target=run, daemon=True, name=f"run {run_id}").start()
    if not done.wait(timeout_s):
        error = f"not ended within {timeout_s:.0f} s"
    ended = time.monotonic() - origin
    return RunRecord(question=question, phase=phase, run_id=run_id, started=started, ended=ended,
                     status="unknown", error=error)


def inspect_run(record: RunRecord) -> RunRecord:
    """The run's manifest and stored captures (after the spool was flushed)."""
    from core.config import load_settings
    from flows.runtime import open_services

    services = open_services(load_settings())
    try:
        manifest = services.manifests.read(record.run_id)
    except StorageError as exc:
        return record.model_copy(update={"status": "no manifest", "error": record.error
                                         or str(exc)[:160]})
    prefix = RunKeys(record.run_id).key("captures") + "/"
    stored = {i.key.removeprefix(prefix).removesuffix(".png")
              for i in services.store.list_objects(prefix) if i.key.endswith(".png")}
    ids = manifest.capture_ids
    return record.model_copy(update={
        "status": manifest.status.value,
        "subtasks": {k: v.value for k, v in manifest.subtasks.items()},
        "captures": len(set(ids)),
        "missing": len(set(ids) - stored),
        "extra": len(stored - set(ids)) + len(ids) - len(set(ids)),
        "error": record.error or (manifest.error or ""),
    })


class ChaosMonkey:
    """Injects one fault at a time, at random moments, into a running :class:`LocalStack`."""

    def __init__(self, stack: LocalStack, control: SimControlClient, serials: tuple[str, ...],
                 rng: random.Random, gap_s: tuple[float, float], origin: float) -> None:
        self._stack, self._control, self._serials = stack, control, serials
        self._rng, self._gap_s, self._origin = rng, gap_s, origin
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="chaos")
        self.injected: list[tuple[str, Fault]] = []  # (kind, fault) in order
        self.errors: list[str] = []

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=300)

    def _kinds(self) -> Iterator[str]:
        while True:  # every kind once per round, in a random order
            yield from self._rng.sample(FAULT_KINDS, len(FAULT_KINDS))

    def _loop(self) -> None:
        kinds = self._kinds()
        while not self._stop.wait(self._rng.uniform(*self._gap_s)):
            kind = next(kinds)
            try:
                self.injected.append((kind, self._inject(kind)))
            except Exception as exc:  # a fault that could not be injected is reported, not hidden
                self.errors.append(f"{kind}: {type(exc).__name__}: {exc}"[:200])

    def _inject(self, kind: str) -> Fault:
        rng, stack = self._rng, self._stack
        if kind == "redis_restart":
            return stack.restart("redis", rng.uniform(2, 10))
        if kind == "s3_restart":
            return stack.restart("s3", rng.uniform(2, 10), kill=rng.random() < 0.5)
        if kind == "prefect_restart":
            return stack.restart("prefect", rng.uniform(1, 5), kill=rng.random() < 0.5)
        phone = self._pick_phone()
        serial = phone.serial
        started = time.monotonic()
        if kind == "worker_kill":
            stack.kill_worker(serial)
            time.sleep(rng.uniform(2, 6))  # then the operator runs `droidretriever up`
            stack.repair_farm()
        else:  # phone_drop: gone from the adb server (which names it by its adb serial)
            self._control.set_offline(phone.local_serial, True)
            try:
                time.sleep(rng.uniform(3, 8))
            finally:
                self._control.set_offline(phone.local_serial, False)
        fault = Fault(kind=kind, target=serial, started=started, back=time.monotonic())
        stack.faults.append(fault)
        return fault

    def _pick_phone(self) -> DeviceInfo:
        """A virtual phone with a sub-task in flight, else any (as registered: by farm serial)."""
        from device_farm.registry import DeviceRegistry

        statuses = [s for s in DeviceRegistry.from_settings(self._stack.settings, retry_window_s=0).statuses()
                    if s.info.local_serial in self._serials]
        busy = [s.info for s in statuses if s.inflight is not None]
        return self._rng.choice(busy or [s.info for s in statuses])


def run_phase(questions: list[str], phase: str, *, concurrency: int, budget_s: float,
              timeout_s: float, origin: float) -> list[RunRecord]:
    """Ask ``questions``, ``concurrency`` at a time; none starts after ``budget_s``."""
    records: list[RunRecord] = []
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        futures: list[Future[RunRecord]] = []
        for question in questions:
            while len([f for f in futures if not f.done()]) >= concurrency:
                time.sleep(0.05)
            if time.monotonic() - origin > budget_s:
                break
            context = contextvars.copy_context()
            futures.append(pool.submit(context.run, ask_question, question, phase, origin,
                                       timeout_s))
            time.sleep(0.5)  # the two runs of a pair start apart, as people ask
        records = [f.result() for f in futures]
    return records


def _is_completed(run: RunRecord, baseline: dict[str, RunRecord]) -> bool:
    expected = baseline.get(run.question)
    return (run.status == RunStatus.COMPLETED.value and not run.error
            and expected is not None and run.subtasks == expected.subtasks)


def _lost(run: RunRecord, baseline: dict[str, RunRecord]) -> int:
    expected = baseline.get(run.question)
    fewer = max(0, expected.captures - run.captures) if expected is not None else 0
    return fewer + run.missing


def _hit_by(run: RunRecord, faults: list[tuple[str, Fault]], origin: float) -> set[str]:
    return {kind for kind, f in faults
            if f.started - origin < run.ended and f.back - origin > run.started}


def _plot(baseline: list[RunRecord], chaos: list[RunRecord], faults: list[tuple[str, Fault]],
          origin: float, completed: Callable[[RunRecord], bool]) -> str:
    figure = create_figure(7.4, 0.17 * len(chaos) + 1.8)
    axes = figure.subplots()
    for row, run in enumerate(chaos):
        colour = "#37474f" if completed(run) else "#c62828"
        axes.barh(row, run.wall_s, left=run.started, color=colour, height=0.6)
    seen: set[str] = set()
    for kind, fault in faults:
        axes.axvspan(fault.started - origin, max(fault.back - origin, fault.started - origin + 0.5),
                     color=_COLOURS[kind], alpha=0.25,
                     label=kind.replace("_", " ") if kind not in seen else None)
        seen.add(kind)
    axes.set_yticks(range(len(chaos)), [f"{i + 1}" for i in range(len(chaos))], fontsize=6)
    axes.invert_yaxis()
    axes.set_xlabel("seconds since the chaos phase began")
    axes.set_ylabel("run")
    done = sum(1 for r in chaos if completed(r))
    axes.set_title(f"{len(chaos)} questions under faults (bars: runs, grey = completed, red = "
                   f"not; {done}/{len(chaos)} completed); shaded: faults", fontsize=8)
    axes.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=5,
                frameon=False)
    return save_plot("chaos", "timeline", figure,
                     "Timeline: each question's run as a bar over time, grey when it completed, "
                     "with the injected faults shaded by kind")


def _kind_rows(chaos: list[RunRecord], faults: list[tuple[str, Fault]], origin: float,
               baseline: dict[str, RunRecord]) -> list[str]:
    rows = []
    for kind in FAULT_KINDS:
        injected = [f for k, f in faults if k == kind]
        hit = [r for r in chaos if kind in _hit_by(r, faults, origin)]
        # What the fault added is clearest in the runs no other fault overlapped.
        alone = [r for r in hit if _hit_by(r, faults, origin) == {kind} and r.question in baseline]
        added = [r.wall_s - baseline[r.question].wall_s for r in alone]
        outage = [f.back - f.started for f in injected]
        rows.append(
            f"| {kind.replace('_', ' ')} | {len(injected)} | "
            + (f"{statistics.median(outage):.1f} s" if outage else "-")
            + f" | {len(hit)} | {len(alone)} | "
            + (f"{statistics.median(added):+.1f} s | {max(added):+.1f} s |" if added else "- | - |"))
    return rows


def main(argv: list[str] | None = None) -> None:
    """Ask the questions with no fault, then under chaos; write the "chaos" block."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--questions", type=int, default=30, help="Questions under chaos.")
    parser.add_argument("--phones", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=2, help="Questions at a time.")
    parser.add_argument("--gap-s", type=float, nargs=2, default=(5.0, 20.0),
                        help="Seconds between one fault's end and the next one's start.")
    parser.add_argument("--budget-s", type=float, default=1800.0,
                        help="No question starts later than this in a phase.")
    parser.add_argument("--run-timeout-s", type=float, default=300.0)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--records", type=Path, default=None,
                        help="Also write every run and fault here as JSON lines.")
    args = parse_bench_args(parser, argv)
    suite = {t.id: t for t in load_suite()}
    distinct = [suite[task_id].query for task_id in QUESTION_TASKS]
    questions = [distinct[i % len(distinct)] for i in range(args.questions)]
    rng = random.Random(args.seed)
    os.environ["DROIDRETRIEVER_BUDGETS__PAUSE_TIMEOUT_S"] = "5"  # nobody is there to log in
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")  # the runs' own lines, not Prefect's
    with tempfile.TemporaryDirectory() as tmp, \
            LocalStack(Path(tmp) / "state", phones=args.phones, latency="realistic") as stack:
        settings = stack.settings
        control = SimControlClient(settings.sim.host, settings.sim.adb_port)
        serials = tuple(p.serial for p in control.status())
        importlib.import_module("flows.retrieve")  # before the clock starts: imports take seconds
        wall = time.monotonic()
        origin = time.monotonic()
        baseline_runs = run_phase(distinct, "baseline", concurrency=args.concurrency,
                                  budget_s=args.budget_s, timeout_s=args.run_timeout_s,
                                  origin=origin)
        origin = time.monotonic()
        monkey = ChaosMonkey(stack, control, serials, rng, tuple(args.gap_s), origin)
        monkey.start()
        try:
            chaos_runs = run_phase(questions, "chaos", concurrency=args.concurrency,
                                   budget_s=args.budget_s, timeout_s=args.run_timeout_s,
                                   origin=origin)
        finally:
            monkey.stop()
        try:
            open_object_store(settings).flush()  # what was spooled during an S3 outage
        except DroidRetrieverError as exc:
            print(f"spool not flushed: {exc}")
        baseline_runs = [inspect_run(r) for r in baseline_runs]
        chaos_runs = [inspect_run(r) for r in chaos_runs]
        total_s = time.monotonic() - wall
    baseline = {r.question: r for r in baseline_runs}

    def completed(run: RunRecord) -> bool:
        return _is_completed(run, baseline)

    faults = monkey.injected
    done = sum(1 for r in chaos_runs if completed(r))
    lost = sum(_lost(r, baseline) for r in chaos_runs)
    duplicated = sum(r.extra for r in chaos_runs)
    base_done = sum(1 for r in baseline_runs if r.status == RunStatus.COMPLETED.value)
    kinds = Counter(kind for kind, _ in faults)
    failures = [f"- run {i + 1} ({r.run_id}): {r.status}; {r.error or r.subtasks}"
                for i, r in enumerate(chaos_runs) if not completed(r)]
    body = f"""
The whole benchmark (both passes, the stack's start included) took {total_s / 60:.1f} min.

{len(chaos_runs)} questions (the {len(distinct)} questions of the paper's Study 1 and 2 that the virtual
phones answer with no model, in turn),
{args.concurrency} at a time on {args.phones} virtual phones with realistic latency (150 ms screenshot,
300 ms dump, 300 ms settle), no model. Faults, one at a time, {args.gap_s[0]:.0f}-{args.gap_s[1]:.0f} s
apart at random (seed {args.seed}), every kind once per round in a random order: the worker of a
phone (a busy one when there is one) SIGKILLed and the farm repaired 2-6 s later (`droidretriever up`), a phone (busy if one is) offline
for 3-8 s, Redis stopped (SIGTERM) for 2-10 s, the S3 store stopped (SIGTERM or SIGKILL) for
2-10 s, the Prefect server stopped (SIGTERM or SIGKILL) for 1-5 s, each then started again
and waited for until healthy. Farm timings as in the tests (heartbeat 0.5 s, lease and run
beacon 5 s). The same {len(distinct)} questions were asked first with no fault, in the same run:
{base_done}/{len(baseline_runs)} completed; their captures and wall times are the reference.

| measure | result | goal |
|---|---|---|
| runs completed (manifest `completed`, report stored, every sub-task as with no fault) | {done}/{len(chaos_runs)} ({done / max(len(chaos_runs), 1):.0%}) | 100% |
| captures lost (fewer than with no fault, or not in the store) | {lost} | 0 |
| captures duplicated (stored beyond the manifest, or listed twice) | {duplicated} | 0 |
| faults injected | {sum(kinds.values())} ({", ".join(f"{kinds[k]} {k.replace('_', ' ')}" for k in FAULT_KINDS)}) | |
| faults that could not be injected | {len(monkey.errors)} | 0 |
| wall time per run, no fault / under chaos | median {statistics.median(r.wall_s for r in baseline_runs):.1f} s / {statistics.median(r.wall_s for r in chaos_runs):.1f} s | |

The time a fault added, per kind: the outage (from the fault to the service answering again,
the farm repaired or the phone back), the runs it overlapped, and for those that no other
fault overlapped, their wall time minus the same question's with no fault:

| fault | injected | median outage | runs overlapped | overlapped by it alone | added, median | added, worst |
|---|---|---|---|---|---|---|
{chr(10).join(_kind_rows(chaos_runs, faults, origin, baseline))}

{_plot(baseline_runs, chaos_runs, faults, origin, completed)}
""" + ("\nRuns that did not complete:\n\n" + "\n".join(failures) + "\n" if failures else "") + (
        "\nFaults that could not be injected:\n\n" + "\n".join(f"- {e}" for e in monkey.errors)
        + "\n" if monkey.errors else "")
    if args.records is not None:
        with args.records.open("w") as out:
            for run in [*baseline_runs, *chaos_runs]:
                out.write(run.model_dump_json() + "\n")
            for kind, fault in faults:
                out.write(fault.model_copy(update={"kind": kind, "started": fault.started - origin,
                                                   "back": fault.back - origin}).model_dump_json()
                          + "\n")
    for run in [*baseline_runs, *chaos_runs]:
        print(f"{run.phase:8} {run.started:7.1f} {run.wall_s:6.1f} s {run.status:10} "
              f"captures {run.captures} missing {run.missing} extra {run.extra} {run.error[:80]}")
    print(body)
    path = write_section("chaos", "Chaos: questions answered while services restart",
                         "python -m bench.chaos", body)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
