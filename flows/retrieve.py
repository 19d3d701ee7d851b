"""The ``retrieve`` flow: a question in, a cited and grounded report out.

    retrieve(request)
      transcribe (spoken questions)  ->  decompose  ->  plan (DAG of sub-tasks)
      one ``app`` sub-flow per app, in parallel where no edge joins them; along an
      edge the upstream app's facts are written into the downstream goals
      ->  synthesize (report.md + report.html)  ->  artifacts, manifest, events

The run's manifest (``runs/<run_id>/manifest.json``) is written by this flow
only; sub-flows report back to it through :class:`~flows.runtime.FlowServices`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn
from uuid import UUID

import httpx
from prefect import Task, flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.objects import State, TaskRun
from prefect.futures import PrefectFuture
from prefect.runtime import flow_run as current_run

from core.config import load_settings
from core.errors import DroidRetrieverError, InputError
from core.models import (
    Edge,
    Heard,
    InstalledApp,
    ModelFallback,
    Plan,
    Query,
    RunEvent,
    RunEventKind,
    RunManifest,
    RunStatus,
    SubTask,
    SubTaskResult,
    SubTaskStatus,
    TokenLedger,
    merge_tallies,
    new_id,
    tally_fallbacks,
)
from core.text import strip_controls
from device_farm.registry import DeviceRegistry
from flows.app_flow import run_app
from flows.beacons import Beacon
from flows.errors import AppNotStartedError, FlowError, NoAppsError, RunFailedError
from flows.keys import alive_key
from flows.models import AppOutcome, RetrieveRequest, RunOutcome
from flows.runtime import FlowServices, open_services
from flows.stop import final_state, is_stop_requested, outcome_of
from flows.ui import add_flow_run_tags, current_flow_run_id, publish_artifacts
from inference.rules.apps import app_named, resolve_app
from storage import RunEventReader, StorageError, iter_replay
from tasks.model_clock import RedisModelClock
from tasks.run_steps import plan_query, report_run, transcribe_recording
from tasks.synthesis.render import slow_sentences

__all__ = [
    "app_groups",
    "app_start_delays",
    "check_apps_installed",
    "decompose_task",
    "read_run_events",
    "retrieve",
    "retry_unstarted_app",
    "rewrite_goals",
    "run_retrieve",
    "synthesize_task",
]

_JITTER = 0.2  # Prefect's retry jitter factor: each delay is drawn within 20 % either way
_START_DELAY_CAP_S = 10.0


def check_apps_installed(names: Sequence[str], installed: Sequence[InstalledApp], *,
                         option: str = "apps") -> None:
    """Raise :class:`InputError` when a name of ``option`` is no app of the farm's phones.

    Called before a run is created, so a typo costs no run. ``installed`` empty (no phone
    online, so what is installed is not known) checks nothing: the run says so itself.
    """
    unknown = [name for name in names if installed and app_named(name, installed) is None]
    if not unknown:
        return
    guesses = [app.label for app in (resolve_app(name, installed) for name in unknown) if app]
    known = sorted(app.label for app in installed)
    listed = ", ".join(known[:12]) + (", ..." if len(known) > 12 else "")
    raise InputError(
        f"{option} {', '.join(repr(strip_controls(n, keep_newlines=False)) for n in unknown)}: "
        f"no phone of the farm has {'it' if len(unknown) == 1 else 'them'}",
        hint=(f"did you mean {', '.join(dict.fromkeys(guesses))}? " if guesses else "")
        + f"name installed apps (labels or packages): {listed}")


def _run_name() -> str:
    """``ask: <question>`` so the Prefect UI lists runs by what was asked."""
    request = current_run.parameters.get("request")
    text = getattr(request, "title", None)
    if text is None and isinstance(request, dict):
        text = request.get("text") or "spoken question"
    return f"ask: {text or 'question'}"[:120]


@task(name="transcribe", cache_policy=NO_CACHE, retries=1)
def transcribe_task(request: RetrieveRequest) -> Query:
    """The question as text: typed, corrected from what was heard, or transcribed now."""
    if request.audio_key is None or (request.heard is not None and request.text):
        return Query(text=request.text or "", apps=request.apps, mode=request.mode,
                     browsing_limit=request.browsing_limit, audio_key=request.audio_key,
                     heard=request.heard)
    services = open_services(load_settings())
    transcript = transcribe_recording(services.settings, services.store, request.audio_key)
    if not transcript.text.strip():
        raise FlowError("nothing could be heard in the recording",
                        hint="record again closer to the microphone, or type the question")
    heard = Heard(text=transcript.text, engine=transcript.backend,
                  low_accuracy=transcript.low_accuracy)
    return Query(text=transcript.text, apps=request.apps, mode=request.mode,
                 browsing_limit=request.browsing_limit, audio_key=request.audio_key, heard=heard)


def farm_apps(registry: DeviceRegistry) -> tuple[InstalledApp, ...]:
    """The apps of the farm's live phones (waiting two beats for phones registering again);
    NoAppsError saying which is missing, phones or apps, when there are none."""
    live = registry.live_statuses_soon()
    if not live:
        raise NoAppsError("no phone of the farm is online, so no app can be searched",
                          hint="start phones with `droidretriever farm up --sim 2`")
    installed = registry.apps_of(live)
    if not installed:
        raise NoAppsError("the farm's phones are online but list no installed app",
                          hint="see what each phone has with `droidretriever farm status`")
    return installed


def retry_unless_no_apps(task: Task[..., object], task_run: TaskRun, state: State[object]) -> bool:
    """Planning is tried again after a model or service fault, not when the farm has no app for
    the question: :func:`farm_apps` has waited for phones already, and a second try answers the
    same."""
    try:
        error = state.result(raise_on_failure=False)
    except Exception:  # an unreadable state: try again, as for any fault
        return True
    return not isinstance(error, NoAppsError)


@task(name="decompose", cache_policy=NO_CACHE, retries=1, retry_condition_fn=retry_unless_no_apps)
def decompose_task(query: Query, run_id: str) -> Plan:
    """Apps, search terms and page modes for ``query``, over the apps the farm's phones have.

    The decomposer's model time starts the run's model clock (``budgets.model_s_per_run``).
    """
    services = open_services(load_settings())
    installed = farm_apps(services.registry)
    plan = plan_query(services.settings, query, installed, clock=RedisModelClock(services.redis, run_id))
    if not plan.subtasks:
        notes = "; ".join(n for n in plan.notes[-2:] if not n.startswith("no installed app"))
        heard = f" heard as “{query.heard.text}”" if query.heard is not None else ""
        raise NoAppsError(f"no installed app fits the question{heard}" +
                          (f" ({notes})" if notes else ""),
                          hint="name the app in the question, or use --apps with an installed app")
    return plan


def retry_unstarted_app(task: Task[..., object], task_run: TaskRun,
                        state: State[object]) -> bool:
    """Prefect retries an app only when its sub-flow could not even be created.

    Creating a sub-flow opens a new Prefect client, which (unlike the run's own)
    fails at once when the server is restarting; nothing of the app ran yet, so
    trying again is safe. The retries wait 2, 4, 8, then 10 s each, as many as add
    up to ``prefect.retry_window_s`` (:func:`app_start_delays`).
    """
    try:
        error = state.result(raise_on_failure=False)
    except Exception:  # an unreadable state: do not guess, do not retry
        return False
    return isinstance(error, AppNotStartedError)


@task(name="app", task_run_name="{app_label}", cache_policy=NO_CACHE,
      retry_condition_fn=retry_unstarted_app)
def app_task(run_id: str, app_label: str, package: str, subtasks: list[SubTask],
             navigate_task: str, edges: list[Edge], upstream: list[AppOutcome],
             device: str | None = None) -> AppOutcome:
    """Run one app's sub-flow once the apps it depends on have answered."""
    try:
        # The sub-flow ends Cancelled (stopped) or Failed (its sub-tasks failed) in Prefect; its
        # outcome goes to the report either way.
        return outcome_of(run_app(run_id, app_label, package,
                                  rewrite_goals(subtasks, edges, upstream), navigate_task, device,
                                  return_state=True), AppOutcome)
    except httpx.TransportError as exc:
        manifest = open_services(load_settings()).kept_manifest(run_id)
        started = manifest is None or any(
            manifest.subtasks.get(s.id, SubTaskStatus.PENDING) is not SubTaskStatus.PENDING
            for s in subtasks)
        if started:
            raise
        raise AppNotStartedError(
            f"{app_label} could not start: the Prefect API did not answer ({exc})",
            hint="is the Prefect server up? `droidretriever status`") from exc


@task(name="synthesize", cache_policy=NO_CACHE, retries=1)
def synthesize_task(run_id: str, plan: Plan, results: list[SubTaskResult],
                    stopped: bool) -> RunOutcome:
    """Write, ground and store the report; put it and the captures on the run page."""
    services = open_services(load_settings())
    manifest = services.manifests.read(run_id)  # the run's model costs, failed tries included
    files = report_run(services.settings, services.store, run_id=run_id, plan=plan,
                       results=results, stopped=stopped, spent=manifest.tokens,
                       fallbacks=manifest.fallbacks, clock=RedisModelClock(services.redis, run_id),
                       events=read_run_events(services, run_id))
    report = files.report
    for role in ("decomposer", "synthesizer"):  # the sub-tasks' roles said so step by step
        usage = report.tokens.roles.get(role)
        if usage is not None and usage.slow:
            sentence = slow_sentences(TokenLedger(roles={role: usage}))[0]
            services.publish(run_id, RunEventKind.LOG, message=f"slow model server: {sentence}")
            get_run_logger().warning("slow model server: %s", sentence)
    known = {t.role for t in manifest.fallbacks}
    for tally in report.fallbacks:
        if tally.role not in known:  # the synthesizer's own, decided just now
            services.publish(run_id, RunEventKind.MODEL_FALLBACK, message=tally.sentence(),
                             fallback=ModelFallback(role=tally.role, reason=tally.reason))
            get_run_logger().warning("%s", tally.sentence())
    captures = [c for r in results for c in r.captures]
    labels = {s.package: s.app_label for s in plan.subtasks}
    publish_artifacts(report, list({c.id: c for c in captures}.values()), labels,
                      files.html_key, subtask_tokens=manifest.subtask_tokens)
    return RunOutcome(run_id=run_id, report=files.report, markdown_key=files.markdown_key,
                      html_key=files.html_key, stopped=stopped)


def app_groups(plan: Plan) -> list[tuple[str, list[SubTask]]]:
    """The plan's sub-tasks by app (package), apps in dependency order, sub-tasks in plan order."""
    groups: dict[str, list[SubTask]] = {}
    for subtask in plan.topological_order():
        groups.setdefault(subtask.package, []).append(subtask)
    return list(groups.items())


def rewrite_goals(subtasks: Sequence[SubTask], edges: Sequence[Edge],
                  upstream: Sequence[AppOutcome]) -> list[SubTask]:
    """Write what upstream apps found into the goals they feed (MobileSteward's information flow)."""
    found = {r.subtask_id: (o.app_label, r) for o in upstream for r in o.results}
    rewritten: list[SubTask] = []
    for subtask in subtasks:
        known: list[str] = []
        for edge in edges:
            if edge.target != subtask.id or edge.source not in found:
                continue
            label, result = found[edge.source]
            if result.facts:
                what = f" ({edge.info})" if edge.info else ""
                known.append(f"from {label}{what}: " + "; ".join(result.facts))
        if known:
            subtask = subtask.model_copy(update={
                "goal": f"{subtask.goal}\nKnown already, {' | '.join(known)}"})
        rewritten.append(subtask)
    return rewritten


def _dependencies(plan: Plan, package: str) -> set[str]:
    """Packages whose sub-tasks feed a sub-task of ``package``."""
    by_id = {s.id: s.package for s in plan.subtasks}
    return {by_id[e.source] for e in plan.edges
            if by_id[e.target] == package and by_id[e.source] != package}


@flow(name="retrieve", flow_run_name=_run_name, validate_parameters=True)
def retrieve(request: RetrieveRequest) -> State[RunOutcome]:
    """Answer ``request`` from the apps on the farm's phones; the report is stored and returned.

    The flow run ends Completed, or Cancelled when a person stopped it (its partial report is
    its result all the same): call it through :func:`run_retrieve` to get the outcome.
    While it runs, this process keeps the run's beacon lit, so that a sweep
    (flows.crashes) can tell when the process dies and mark the run crashed.
    """
    services = open_services(load_settings())
    run_id = request.run_id or new_id("run")
    flow_run_id = current_flow_run_id()
    add_flow_run_tags(flow_run_id, [f"run:{run_id}"])
    with Beacon(services.redis, alive_key(run_id), str(flow_run_id),
                services.settings.farm.lease_ttl_s):
        try:
            outcome = _answer(services, request, run_id, flow_run_id)
        finally:
            services.finish_manifest(run_id)
    return final_state(outcome, stopped=outcome.stopped)


def run_retrieve(request: RetrieveRequest) -> RunOutcome:
    """Run :func:`retrieve` here (as a flow, or a sub-flow of the caller's) and return its
    outcome, a stopped run's too; an error of the run is raised."""
    return outcome_of(retrieve(request, return_state=True), RunOutcome)


def read_run_events(services: FlowServices, run_id: str) -> list[RunEvent]:
    """The run's events so far, each once: its record in the store and its live stream (where
    every process's latest ones are, a person's inputs from the API too)."""
    by_seq: dict[int, RunEvent] = {}
    try:
        for event in iter_replay(services.store, run_id):
            by_seq[event.seq] = event
    except StorageError as exc:  # nothing recorded yet, or the store is down: the stream has them
        get_run_logger().info("events of run %s not read from the record: %s", run_id, exc)
    reader, after = RunEventReader(services.redis), 0
    try:
        while batch := reader.read_after(run_id, after, count=1000):
            by_seq.update((event.seq, event) for event in batch)
            after = batch[-1].seq
    except StorageError as exc:
        get_run_logger().warning("live events of run %s not read: %s", run_id, exc)
    return [by_seq[seq] for seq in sorted(by_seq)]


def _answer(services: FlowServices, request: RetrieveRequest, run_id: str,
            flow_run_id: UUID | None) -> RunOutcome:
    try:
        query = transcribe_task(request)
    except Exception as exc:  # nothing heard, the recording gone: the run ends, saying why
        _fail(services, run_id, exc)
    services.start_manifest(RunManifest(
        run_id=run_id, query=query, status=RunStatus.RUNNING,
        prefect_flow_run_id=str(flow_run_id) if flow_run_id else None))
    services.publish(run_id, RunEventKind.RUN_STARTED, message=query.text)
    try:
        plan = decompose_task(query, run_id)
        planned = tally_fallbacks((plan.fallback,) if plan.fallback else ())
        services.update_manifest(run_id, lambda m: m.model_copy(update={
            "plan": plan, "subtasks": {s.id: SubTaskStatus.PENDING for s in plan.subtasks},
            "tokens": m.tokens + TokenLedger.of(plan.calls), "fallbacks": merge_tallies(m.fallbacks, planned)}))
        for tally in planned:
            services.publish(run_id, RunEventKind.MODEL_FALLBACK, message=tally.sentence(),
                             fallback=ModelFallback(role=tally.role, reason=tally.reason))
            get_run_logger().warning("%s", tally.sentence())
        services.publish(run_id, RunEventKind.PLAN_READY, plan=plan,
                         message=f"{len(plan.subtasks)} sub-task(s) in "
                                 f"{len(plan.packages)} app(s), by {plan.decomposer}")
        add_flow_run_tags(flow_run_id, [f"app:{s.app_label}" for s in plan.subtasks])
        outcomes = _run_apps(run_id, plan, request.navigate_task, request.device)
        add_flow_run_tags(flow_run_id, [f"device:{o.device}" for o in outcomes if o.device])
        results = [r for o in outcomes for r in o.results]
        stopped = is_stop_requested(services.redis, run_id)
        outcome = synthesize_task(run_id, plan, results, stopped)
    except Exception as exc:
        _fail(services, run_id, exc)
    services.update_manifest(run_id, lambda m: m.model_copy(update={
        "status": RunStatus.STOPPED if stopped else RunStatus.COMPLETED,
        "report_key": outcome.markdown_key, "tokens": outcome.report.tokens,
        "fallbacks": outcome.report.fallbacks,
        "capture_ids": tuple(dict.fromkeys([*m.capture_ids,
                                            *(c.id for r in results for c in r.captures)]))}))
    services.publish(run_id, RunEventKind.REPORT_READY, report=outcome.report,
                     message=outcome.html_key)
    services.publish(run_id, RunEventKind.RUN_FINISHED,
                     message="stopped early" if stopped else "completed")
    return outcome.model_copy(update={"flow_run_id": str(flow_run_id) if flow_run_id else None})


def app_start_delays(window_s: float) -> list[float]:
    """Seconds between tries of an app that could not start: 2, 4, 8, then 10 each.

    As many as wait out ``window_s`` with the shortest jitter draws; capped at 10 s
    so that a server back after a minute is seen within seconds, not a minute later.
    """
    delays: list[float] = []
    while sum(delays) * (1 - _JITTER) < window_s:
        delays.append(min(_START_DELAY_CAP_S, 2.0 ** (len(delays) + 1)))
    return delays


def _fail(services: FlowServices, run_id: str, exc: Exception) -> NoReturn:
    """End the run failed (manifest and events say why) and raise one line for the person."""
    message = str(exc) if isinstance(exc, DroidRetrieverError) else f"{type(exc).__name__}: {exc}"
    services.end_run(run_id, RunStatus.FAILED, message)
    if isinstance(exc, DroidRetrieverError):
        raise exc
    # A foreign error (the Prefect API gone for longer than its clients wait, a bug):
    # the person gets one line; the traceback stays in the Prefect UI and --debug.
    raise RunFailedError(f"run {run_id} failed: {message}",
                         hint="see `droidretriever status` and the run in the Prefect UI; "
                              "ask again once every service is healthy") from exc


def _run_apps(run_id: str, plan: Plan, navigate_task: str,
              device: str | None = None) -> list[AppOutcome]:
    """Start every app's sub-flow as soon as the apps feeding it are done; wait for all.

    ``device``: every app on that phone (a benchmark's phone, in the task's starting state).
    """
    futures: dict[str, PrefectFuture[AppOutcome]] = {}
    # Retries of an app whose sub-flow could not be created wait out a Prefect restart.
    delays = app_start_delays(load_settings().prefect.retry_window_s)
    start_app = app_task.with_options(retries=len(delays), retry_delay_seconds=delays,
                                      retry_jitter_factor=_JITTER)
    for package, subtasks in app_groups(plan):
        upstream = [futures[p] for p in sorted(_dependencies(plan, package))]
        edges = [e for e in plan.edges if e.target in {s.id for s in subtasks}]
        futures[package] = start_app.submit(
            run_id, subtasks[0].app_label, package, subtasks, navigate_task, edges,
            upstream, device)  # type: ignore[arg-type]  # Prefect resolves the futures first
    return [future.result() for future in futures.values()]
