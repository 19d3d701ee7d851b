"""The run's non-device steps as plain functions: transcribe, plan, report.

The ``retrieve`` flow wraps each in a Prefect task; they run (and are tested)
without Prefect or Celery. Synthesis itself is ``tasks.synthesis``; this only
gathers a run's results into its inputs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from core.config import Settings
from core.models import (
    ActRequest,
    AppStatus,
    Capture,
    FallbackTally,
    InstalledApp,
    Plan,
    Query,
    RunEvent,
    SubTaskResult,
    SubTaskStatus,
    TokenLedger,
    in_own_app,
    tally_fallbacks,
)
from inference.asr import Transcript, transcriber_for
from inference.llm import ModelClock, Role, client_for
from inference.llm_roles.decomposer import decompose
from inference.perception import redactor_for
from storage import ObjectStore
from tasks.synthesis import (
    ReportFiles,
    list_interventions,
    publish_report,
    synthesize_report,
    writer_for,
)

__all__ = [
    "collect_app_statuses",
    "collect_captures",
    "collect_model_costs",
    "partial_reason",
    "plan_query",
    "report_run",
    "transcribe_recording",
]


def transcribe_recording(settings: Settings, store: ObjectStore, audio_key: str,
                         language: str | None = None) -> Transcript:
    """The text of a stored recording (HTTP transcriber when configured, else pocketsphinx)."""
    audio = store.get_bytes(audio_key)
    return transcriber_for(settings).transcribe(audio, filename=audio_key.rsplit("/", 1)[-1],
                                                language=language)


def plan_query(settings: Settings, query: Query, installed: Sequence[InstalledApp],
               clock: ModelClock | None = None) -> Plan:
    """Decompose ``query`` over the farm's apps: LLM1 when configured, else the rules.

    The plan carries the decomposer's requests and, when its model failed, the fallback;
    their time goes on the run's model ``clock`` (``budgets.model_s_per_run``).
    """
    client = client_for(settings, Role.DECOMPOSER)
    redactor = redactor_for(client.endpoint, settings.perception) if client is not None else None
    plan = decompose(query, installed, client, redactor=redactor).value
    seconds = sum(c.latency_ms for c in plan.calls) / 1000
    if clock is not None and seconds:
        clock.add(seconds)
    return plan


def collect_model_costs(plan: Plan, results: Sequence[SubTaskResult]
                        ) -> tuple[TokenLedger, tuple[FallbackTally, ...]]:
    """The model tokens per role and the fallbacks to the rules of a plan and these results."""
    total = TokenLedger.of(plan.calls)
    for result in results:
        total = total + result.trace.ledger
    fallbacks = (*((plan.fallback,) if plan.fallback else ()), *(f for r in results for f in r.trace.fallbacks))
    return total, tally_fallbacks(fallbacks)


def collect_captures(results: Sequence[SubTaskResult]) -> tuple[Capture, ...]:
    """Every capture of the run, each id once (a redelivered sub-task overwrites, not adds)."""
    by_id: dict[str, Capture] = {}
    for result in results:
        for capture in result.captures:
            by_id[capture.id] = capture
    return tuple(by_id.values())


def collect_app_statuses(plan: Plan, results: Sequence[SubTaskResult],
                         stopped: bool = False) -> tuple[AppStatus, ...]:
    """One status per app of the plan: the worst of its sub-tasks', with the reasons; for a request
    to act (``Plan.act_request``), ``not_done`` saying so, whatever its sub-tasks reached."""
    by_id = {r.subtask_id: r for r in results}
    order = (SubTaskStatus.NEEDS_USER, SubTaskStatus.FAILED, SubTaskStatus.BUDGET_EXHAUSTED,
             SubTaskStatus.STOPPED, SubTaskStatus.PENDING, SubTaskStatus.RUNNING,
             SubTaskStatus.COMPLETED)
    statuses: list[AppStatus] = []
    for package in plan.packages:
        subtasks = [s for s in plan.subtasks if s.package == package]
        found = [by_id[s.id] for s in subtasks if s.id in by_id]
        kinds = {r.status for r in found}
        if len(found) < len(subtasks):
            kinds.add(SubTaskStatus.PENDING)
        status = next(s for s in order if s in kinds)
        reasons = [r.reason for r in found if r.reason and r.status is not SubTaskStatus.COMPLETED]
        if len(found) < len(subtasks):
            reasons.append("stopped before it ran" if stopped else "did not run")
        app = AppStatus(app_label=subtasks[0].app_label, package=package, status=status,
                        reason="; ".join(reasons))
        statuses.append(app if plan.act_request is None else _not_done(app, found, plan.act_request))
    return tuple(statuses)


def _not_done(app: AppStatus, results: Sequence[SubTaskResult], act: ActRequest) -> AppStatus:
    """An app of a request to act: never completed. Paused where the act is done (a pause of the
    act's own kind of risk, not a sign-in on the way) or handed to the person there, the page is
    open for them; otherwise why it was not reached."""
    reached = any(r.status is SubTaskStatus.COMPLETED
                  or (r.status is SubTaskStatus.NEEDS_USER and r.risk_category is act.kind.risk)
                  for r in results)
    return app.model_copy(update={"status": SubTaskStatus.NOT_DONE,
                                  "reason": act.not_done(reached=reached, why="" if reached else app.reason)})


def report_run(settings: Settings, store: ObjectStore, *, run_id: str, plan: Plan,
               results: Sequence[SubTaskResult], stopped: bool = False,
               spent: TokenLedger | None = None, fallbacks: Sequence[FallbackTally] | None = None,
               clock: ModelClock | None = None, events: Iterable[RunEvent] = (),
               ) -> ReportFiles:
    """Synthesize the grounded report from the run's captures and store report.md/.html.

    ``spent`` / ``fallbacks``: the run's model costs so far when the caller kept them
    (the flow's manifest counts failed deliveries too); else those of ``plan`` and ``results``.
    ``clock``: the run's model time so far (the synthesizer gets what is left of
    ``budgets.model_s_per_run``).
    ``stopped``: a person stopped the run, so the report is labelled partial. ``events``: the
    run's events, whose people's acts the report lists. A screen a person saved outside the
    sub-task's app (the home screen, another app) is shown, never an answer.
    """
    captures = collect_captures(results)
    apps = collect_app_statuses(plan, results, stopped)
    terms = tuple(dict.fromkeys(s.search_term for s in plan.subtasks if s.search_term))
    if spent is None or fallbacks is None:
        spent, fallbacks = collect_model_costs(plan, results)
    report = synthesize_report(
        run_id=run_id, query=plan.query, captures=tuple(c for c in captures if in_own_app(c)),
        apps=apps, store=store, threshold=settings.budgets.grounding_threshold,
        writer=writer_for(settings, clock), search_terms=terms, spent=spent, fallbacks=fallbacks,
    )
    labels = {s.id: s.app_label for s in plan.subtasks}
    phones = {r.subtask_id: r.device for r in results if r.device}
    report = report.model_copy(update={
        "partial": partial_reason(apps) if stopped else "",
        "interventions": list_interventions(events, labels, phones)})
    return publish_report(report, captures, store)


def partial_reason(apps: Sequence[AppStatus]) -> str:
    """Why a stopped run's report covers less than its question: the apps a person cut short."""
    short = [a.app_label for a in apps if a.status is not SubTaskStatus.COMPLETED]
    if not short:
        return "a person stopped the run; every app had finished by then"
    return (f"a person stopped the run before {', '.join(dict.fromkeys(short))} finished; "
            "what they had captured by then is all this report answers from")

