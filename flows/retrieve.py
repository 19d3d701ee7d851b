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

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import PrefectFuture
from prefect.runtime import flow_run as current_run

from droidretriever.config import load_settings
from droidretriever.models import (
    Edge,
    Heard,
    Plan,
    Query,
    RunEventKind,
    RunManifest,
    RunStatus,
    SubTask,
    SubTaskResult,
    SubTaskStatus,
    new_id,
)
from flows.app_flow import run_app
from flows.errors import FlowError, NoAppsError
from flows.models import AppOutcome, RetrieveRequest, RunOutcome
from flows.runtime import FlowServices, open_services
from flows.stop import is_stop_requested
from flows.ui import add_flow_run_tags, current_flow_run_id, publish_artifacts
from tasks.run_steps import plan_query, report_run, transcribe_recording

__all__ = ["app_groups", "decompose_task", "retrieve", "rewrite_goals", "synthesize_task"]


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


@task(name="decompose", cache_policy=NO_CACHE, retries=1)
def decompose_task(query: Query) -> Plan:
    """Apps, search terms and page modes for ``query``, over the apps the farm's phones have."""
    services = open_services(load_settings())
    installed = services.registry.installed_apps()
    if not installed:
        raise NoAppsError("no phone of the farm is online, so no app can be searched",
                          hint="start phones with `droidretriever farm up --sim 2`")
    plan = plan_query(services.settings, query, installed)
    if not plan.subtasks:
        notes = "; ".join(n for n in plan.notes[-2:] if not n.startswith("no installed app"))
        heard = f" heard as “{query.heard.text}”" if query.heard is not None else ""
        raise NoAppsError(f"no installed app fits the question{heard}" +
                          (f" ({notes})" if notes else ""),
                          hint="name the app in the question, or use --apps with an installed app")
    return plan


@task(name="app", task_run_name="{app_label}", cache_policy=NO_CACHE)
def app_task(run_id: str, app_label: str, package: str, subtasks: list[SubTask],
             navigate_task: str, edges: list[Edge], upstream: list[AppOutcome]) -> AppOutcome:
    """Run one app's sub-flow once the apps it depends on have answered."""
    return run_app(run_id, app_label, package, rewrite_goals(subtasks, edges, upstream),
                   navigate_task)


@task(name="synthesize", cache_policy=NO_CACHE, retries=1)
def synthesize_task(run_id: str, plan: Plan, results: list[SubTaskResult],
                    stopped: bool) -> RunOutcome:
    """Write, ground and store the report; put it and the captures on the run page."""
    services = open_services(load_settings())
    files = report_run(services.settings, services.store, run_id=run_id, plan=plan,
                       results=results, stopped=stopped)
    captures = [c for r in results for c in r.captures]
    labels = {s.package: s.app_label for s in plan.subtasks}
    publish_artifacts(files.report, list({c.id: c for c in captures}.values()), labels,
                      files.html_key)
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
def retrieve(request: RetrieveRequest) -> RunOutcome:
    """Answer ``request`` from the apps on the farm's phones; the report is stored and returned."""
    services = open_services(load_settings())
    run_id = request.run_id or new_id("run")
    flow_run_id = current_flow_run_id()
    add_flow_run_tags(flow_run_id, [f"run:{run_id}"])
    try:
        query = transcribe_task(request)
    except Exception as exc:
        _record_failure(services, run_id, f"{type(exc).__name__}: {exc}")
        raise
    services.manifests.write(RunManifest(
        run_id=run_id, query=query, status=RunStatus.RUNNING,
        prefect_flow_run_id=str(flow_run_id) if flow_run_id else None))
    services.publish(run_id, RunEventKind.RUN_STARTED, message=query.text)
    try:
        plan = decompose_task(query)
        services.update_manifest(run_id, lambda m: m.model_copy(update={
            "plan": plan, "subtasks": {s.id: SubTaskStatus.PENDING for s in plan.subtasks}}))
        services.publish(run_id, RunEventKind.PLAN_READY, plan=plan,
                         message=f"{len(plan.subtasks)} sub-task(s) in "
                                 f"{len(plan.packages)} app(s), by {plan.decomposer}")
        add_flow_run_tags(flow_run_id, [f"app:{s.app_label}" for s in plan.subtasks])
        outcomes = _run_apps(run_id, plan, request.navigate_task)
        add_flow_run_tags(flow_run_id, [f"device:{o.device}" for o in outcomes if o.device])
        results = [r for o in outcomes for r in o.results]
        stopped = is_stop_requested(services.redis, run_id)
        outcome = synthesize_task(run_id, plan, results, stopped)
    except Exception as exc:
        _record_failure(services, run_id, f"{type(exc).__name__}: {exc}")
        raise
    services.update_manifest(run_id, lambda m: m.model_copy(update={
        "status": RunStatus.STOPPED if stopped else RunStatus.COMPLETED,
        "report_key": outcome.markdown_key,
        "capture_ids": tuple(dict.fromkeys([*m.capture_ids,
                                            *(c.id for r in results for c in r.captures)]))}))
    services.publish(run_id, RunEventKind.REPORT_READY, report=outcome.report,
                     message=outcome.html_key)
    services.publish(run_id, RunEventKind.RUN_FINISHED,
                     message="stopped early" if stopped else "completed")
    return outcome.model_copy(update={"flow_run_id": str(flow_run_id) if flow_run_id else None})


def _record_failure(services: FlowServices, run_id: str, message: str) -> None:
    """The manifest (when there is one yet) says failed; the events say why and that it ended."""
    if services.manifests.exists(run_id):
        services.update_manifest(run_id, lambda m: m.model_copy(update={
            "status": RunStatus.FAILED, "error": message}))
    services.publish(run_id, RunEventKind.ERROR, message=message)
    services.publish(run_id, RunEventKind.RUN_FINISHED, message="failed")


def _run_apps(run_id: str, plan: Plan, navigate_task: str) -> list[AppOutcome]:
    """Start every app's sub-flow as soon as the apps feeding it are done; wait for all."""
    futures: dict[str, PrefectFuture[AppOutcome]] = {}
    for package, subtasks in app_groups(plan):
        upstream = [futures[p] for p in sorted(_dependencies(plan, package))]
        edges = [e for e in plan.edges if e.target in {s.id for s in subtasks}]
        futures[package] = app_task.submit(
            run_id, subtasks[0].app_label, package, subtasks, navigate_task, edges,
            upstream)  # type: ignore[arg-type]  # Prefect resolves the futures first
    return [future.result() for future in futures.values()]
