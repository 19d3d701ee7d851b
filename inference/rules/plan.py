"""Turn a decomposition (apps, search terms, page mode, flows) into a ``Plan``.

Shared by the model decomposer and the rule-based one, so both produce the same
shape: one sub-task per app and search term (at most 3 of each, as in
DroidRetriever), the person's restrictions (``Query.apps``, ``Query.mode``)
applied, and the information flow between apps as DAG edges.

A request to act ("top up my phone by 50 yuan", "帮我下单": :func:`inference.rules.acts.find_act_request`)
is planned as one: ``Plan.act_request`` says in one line that the agent does not do it, and each
sub-task's goal is to open where the act is done and stop there (``SubTask.act``), where the rules'
evaluator pauses for the person.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, ValidationError

from core.models import ActRequest, Edge, InstalledApp, PageMode, Plan, Query, SubTask
from inference.rules.acts import find_act_request
from inference.rules.apps import app_named

__all__ = ["MAX_APPS", "MAX_TERMS", "AppFlow", "build_plan"]

MAX_APPS = 3
MAX_TERMS = 3


class AppFlow(BaseModel):
    """Information one app's answer carries into another app's task."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: InstalledApp
    target: InstalledApp
    info: str


def build_plan(
    query: Query,
    apps: Sequence[InstalledApp],
    terms: Sequence[str],
    mode: PageMode,
    *,
    decomposer: str,
    notes: Sequence[str] = (),
    flows: Sequence[AppFlow] = (),
) -> Plan:
    """One sub-task per (app, search term); ``Query.apps`` and ``Query.mode`` win."""
    remarks = list(notes)
    chosen = list(dict.fromkeys(apps))
    if query.apps:
        allowed = [a for a in chosen if _allowed(a, query.apps)]
        dropped = [a.label for a in chosen if a not in allowed]
        if dropped:
            remarks.append(f"left out {', '.join(dropped)}: not among the apps you allowed")
        chosen = allowed
    if len(chosen) > MAX_APPS:
        remarks.append(
            f"kept the first {MAX_APPS} apps; also relevant: "
            + ", ".join(a.label for a in chosen[MAX_APPS:])
        )
        chosen = chosen[:MAX_APPS]
    if not chosen:
        remarks.append("no installed app fits this question: name an app, or install one")
    clean_terms = list(dict.fromkeys(t.strip() for t in terms if t.strip()))[:MAX_TERMS]
    act = find_act_request(query.text, chosen)
    # A request to act ends on one page, where the act is done: never several.
    page_mode = PageMode.FOCUSED if act is not None else query.mode or mode
    subtasks: list[SubTask] = []
    by_app: dict[str, list[str]] = {}
    for app in chosen:
        for index, term in enumerate(clean_terms or [None], start=1):
            subtask_id = f"{app.package}-{index}"
            subtasks.append(
                SubTask(
                    id=subtask_id,
                    app_label=app.label,
                    package=app.package,
                    goal=_goal(app, term, query, act),
                    search_term=term,
                    page_mode=page_mode,
                    browsing_limit=query.browsing_limit,
                    act=act.kind if act is not None else None,
                )
            )
            by_app.setdefault(app.package, []).append(subtask_id)
    edges = [
        Edge(source=source, target=target, info=flow.info)
        for flow in flows
        if flow.source.package != flow.target.package
        for source in by_app.get(flow.source.package, [])
        for target in by_app.get(flow.target.package, [])
    ]
    try:
        return Plan(
            query=query,
            subtasks=tuple(subtasks),
            edges=tuple(edges),
            decomposer=decomposer,
            notes=tuple(remarks),
            act_request=act,
        )
    except ValidationError:
        # Flows that loop (A needs B, B needs A) cannot be scheduled: run the apps
        # independently rather than fail the whole question.
        remarks.append("ignored the information flow between apps: it forms a cycle")
        return Plan(
            query=query, subtasks=tuple(subtasks), decomposer=decomposer, notes=tuple(remarks),
            act_request=act,
        )


def _goal(app: InstalledApp, term: str | None, query: Query, act: ActRequest | None) -> str:
    """The sub-task's goal: the question in the app (after its search), or for a request to act,
    opening where the act is done and stopping there."""
    search = f', search for "{term}"' if term else ""  # no word of its own names a concept
    if act is not None:
        then = ", then" if term else ","
        return f"In {app.label}{search}{then} open where to {act.kind.verb} and stop there: {query.text}"
    return f"In {app.label}{search}: {query.text}"


def _allowed(app: InstalledApp, allowed: Sequence[str]) -> bool:
    return any(app_named(name, (app,)) is not None for name in allowed)
