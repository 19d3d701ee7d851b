"""Subscriptions: a question asked on a schedule; a person hears only about changes.

    droidretriever subscribe "q" --cron "0 8 * * *"
      -> Subscription record   subscriptions/<id>/subscription.json
      -> Prefect deployment    "subscription-<id>" of flow ``subscription``, cron schedule,
                               served by ``python -m flows.serve`` (the local stack can run it)
    each scheduled run (:func:`check_subscription`):
      retrieve (sub-flow) -> facts of the captures -> diff with the previous run's facts
      -> report and facts kept under subscriptions/<id>/<run_id>/
      -> a ChangeNotice to the subscription's notifier, only when something changed
"""

from __future__ import annotations

import builtins
import secrets
from datetime import datetime, timedelta
from typing import Self, cast
from uuid import UUID

import httpx
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.client.schemas.schedules import CronSchedule
from prefect.deployments.runner import RunnerDeployment
from prefect.exceptions import ObjectNotFound, PrefectException
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from core.config import load_settings
from core.models import Capture, PageMode, utcnow
from flows.errors import SubscriptionError
from flows.models import RetrieveRequest
from flows.notifiers import ChangeNotice, NotifierSpec, notifier_for
from flows.retrieve import run_retrieve
from flows.runtime import open_services
from flows.ui import current_flow_run_id
from storage import ObjectNotFoundError, ObjectStore, RunKeys
from tasks.synthesis import FactSet, diff_facts, extract_facts

__all__ = [
    "ScheduleState",
    "ScheduledRun",
    "Subscription",
    "SubscriptionCheck",
    "SubscriptionStore",
    "check_subscription",
    "create_subscription",
    "delete_subscription",
    "deployment_name",
    "pause_subscription",
    "read_schedule_state",
    "remove_subscription",
    "schedule_subscription",
    "set_subscription_paused",
    "to_deployment",
]

_PREFIX = "subscriptions/"
# The Prefect server's scheduler looks at new deployments every 5 s and the runner polls
# every 10 s: a shorter interval would only pile up late runs.
MIN_INTERVAL_S = 10


class Subscription(BaseModel):
    """A question asked on a schedule (a cron or a fixed interval), and who hears about changes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^sub-[a-z0-9]{6,}$")
    query: str = Field(min_length=1, max_length=2000)
    cron: str | None = None
    interval_s: int | None = Field(default=None, ge=MIN_INTERVAL_S)
    apps: tuple[str, ...] = ()
    mode: PageMode | None = None
    browsing_limit: int = Field(default=3, ge=1, le=20)
    notifier: NotifierSpec = NotifierSpec()
    paused: bool = False
    navigate_task: str = "copilot.navigate"
    created_at: datetime = Field(default_factory=utcnow)

    @field_validator("cron")
    @classmethod
    def _five_fields(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            CronSchedule(cron=value)
        except ValueError:
            raise ValueError(f"{value!r} is not a cron expression such as '0 8 * * *'") from None
        return value

    @model_validator(mode="after")
    def _one_schedule(self) -> Self:
        if (self.cron is None) == (self.interval_s is None):
            raise ValueError("give a subscription either a cron schedule or an interval")
        return self

    @property
    def schedule(self) -> str:
        """The schedule in words: ``cron 0 8 * * *``, ``every 30 s``, ``every 2 h``."""
        if self.interval_s is None:
            return f"cron {self.cron}"
        for unit, seconds in (("d", 86400), ("h", 3600), ("min", 60)):
            if self.interval_s % seconds == 0:
                return f"every {self.interval_s // seconds} {unit}"
        return f"every {self.interval_s} s"

    @classmethod
    def create(cls, query: str, cron: str | None = None, **options: object) -> Subscription:
        """A new subscription with a fresh id (a cron, or ``interval_s=`` seconds)."""
        return cls.model_validate({"id": f"sub-{secrets.token_hex(4)}", "query": query,
                                   "cron": cron, **options})


class SubscriptionCheck(BaseModel):
    """One scheduled run of a subscription: what changed and whether anyone was told."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    subscription_id: str
    run_id: str
    report_key: str
    facts: int
    changed: bool
    notified: bool
    summary: str
    flow_run_id: str | None = None  # the Prefect flow run of this check
    finished_at: datetime = Field(default_factory=utcnow)


class SubscriptionStore:
    """Subscription records, their runs' reports and facts, in the object store."""

    def __init__(self, store: ObjectStore) -> None:
        self._store = store

    @staticmethod
    def record_key(subscription_id: str) -> str:
        return f"{_PREFIX}{subscription_id}/subscription.json"

    @staticmethod
    def latest_facts_key(subscription_id: str) -> str:
        return f"{_PREFIX}{subscription_id}/latest-facts.json"

    @staticmethod
    def run_key(subscription_id: str, run_id: str, name: str) -> str:
        return f"{_PREFIX}{subscription_id}/{run_id}/{name}"

    def save(self, subscription: Subscription) -> None:
        """Write (or overwrite) the record."""
        self._store.put_bytes(self.record_key(subscription.id),
                              subscription.model_dump_json(indent=2).encode(), "application/json")

    def exists(self, subscription_id: str) -> bool:
        """Whether the subscription has a record."""
        return self._store.exists(self.record_key(subscription_id))

    def load(self, subscription_id: str) -> Subscription:
        """The record; SubscriptionError when there is none."""
        try:
            raw = self._store.get_bytes(self.record_key(subscription_id))
        except ObjectNotFoundError as exc:
            raise SubscriptionError(f"no subscription {subscription_id!r}",
                                    hint="`droidretriever subscriptions list` shows them") from exc
        try:
            return Subscription.model_validate_json(raw)
        except ValidationError as exc:
            raise SubscriptionError(f"subscription {subscription_id!r} is damaged: "
                                    f"{exc.errors()[0]['msg']}",
                                    hint="delete it and subscribe again") from exc

    def list(self) -> list[Subscription]:
        """Every subscription, oldest first."""
        keys = [i.key for i in self._store.list_objects(_PREFIX)
                if i.key.endswith("/subscription.json") and i.key.count("/") == 2]
        subs = [self.load(k.split("/")[1]) for k in keys]
        return sorted(subs, key=lambda s: s.created_at)

    def delete(self, subscription_id: str) -> int:
        """Remove the record and everything kept for it; returns how many objects went."""
        infos = self._store.list_objects(f"{_PREFIX}{subscription_id}/")
        for info in infos:
            self._store.delete(info.key)
        return len(infos)

    def save_check(self, check: SubscriptionCheck) -> None:
        """Keep what one scheduled run found, beside its report."""
        self._store.put_bytes(self.run_key(check.subscription_id, check.run_id, "check.json"),
                              check.model_dump_json(indent=2).encode(), "application/json")

    def list_checks(self, subscription_id: str) -> builtins.list[SubscriptionCheck]:
        """The subscription's finished runs, newest first."""
        keys = [i.key for i in self._store.list_objects(f"{_PREFIX}{subscription_id}/")
                if i.key.endswith("/check.json")]
        checks = [SubscriptionCheck.model_validate_json(self._store.get_bytes(k)) for k in keys]
        return sorted(checks, key=lambda c: c.finished_at, reverse=True)

    def read_latest_facts(self, subscription_id: str) -> FactSet | None:
        """The facts of the subscription's previous run, if it had one."""
        try:
            return FactSet.model_validate_json(
                self._store.get_bytes(self.latest_facts_key(subscription_id)))
        except ObjectNotFoundError:
            return None

    def keep_run(self, subscription_id: str, run_id: str, facts: FactSet,
                 report_keys: tuple[str, str], summary_text: str) -> str:
        """Copy the run's report next to its facts; the facts become the latest. Returns the md key."""
        md_key, html_key = report_keys
        kept_md = self.run_key(subscription_id, run_id, "report.md")
        self._store.put_bytes(kept_md, self._store.get_bytes(md_key), "text/markdown; charset=utf-8")
        self._store.put_bytes(self.run_key(subscription_id, run_id, "report.html"),
                              self._store.get_bytes(html_key), "text/html; charset=utf-8")
        self._store.put_bytes(self.run_key(subscription_id, run_id, "changes.txt"),
                              summary_text.encode(), "text/plain; charset=utf-8")
        data = facts.model_dump_json(indent=2).encode()
        self._store.put_bytes(self.run_key(subscription_id, run_id, "facts.json"), data,
                              "application/json")
        self._store.put_bytes(self.latest_facts_key(subscription_id), data, "application/json")
        return kept_md


def load_run_captures(store: ObjectStore, run_id: str, capture_ids: tuple[str, ...]) -> list[Capture]:
    """The run's captures as stored by the copilot (``runs/<run_id>/captures/<id>.json``)."""
    keys = RunKeys(run_id)
    return [Capture.model_validate_json(store.get_bytes(keys.capture_elements(cid)))
            for cid in capture_ids]


@flow(name="subscription", flow_run_name="subscription {subscription_id}",
      validate_parameters=True)
def check_subscription(subscription_id: str) -> SubscriptionCheck:
    """Ask the subscription's question again; notify only if the facts changed since last time."""
    services = open_services(load_settings())
    flow_run_id = current_flow_run_id()
    subs = SubscriptionStore(services.store)
    sub = subs.load(subscription_id)
    outcome = run_retrieve(RetrieveRequest(text=sub.query, apps=sub.apps, mode=sub.mode,
                                           browsing_limit=sub.browsing_limit,
                                           navigate_task=sub.navigate_task))
    manifest = services.manifests.read(outcome.run_id)
    captures = load_run_captures(services.store, outcome.run_id, manifest.capture_ids)
    terms = [s.search_term for s in (manifest.plan.subtasks if manifest.plan else ())
             if s.search_term]
    facts = extract_facts(outcome.report.query, outcome.run_id, captures, outcome.report.apps,
                          terms)
    previous = subs.read_latest_facts(sub.id)
    summary = diff_facts(previous, facts) if previous is not None else None
    text = summary.text if summary is not None else f"First run: {len(facts.facts)} fact(s) kept."
    kept = subs.keep_run(sub.id, outcome.run_id, facts, (outcome.markdown_key, outcome.html_key),
                         text)
    notified = False
    if summary is not None and summary.changed:
        notifier_for(sub.notifier, services.settings).notify(ChangeNotice(
            subscription_id=sub.id, query=sub.query, run_id=outcome.run_id, summary=summary,
            report_key=kept))
        notified = True
    check = SubscriptionCheck(subscription_id=sub.id, run_id=outcome.run_id, report_key=kept,
                              facts=len(facts.facts), changed=bool(summary and summary.changed),
                              notified=notified, summary=text,
                              flow_run_id=str(flow_run_id) if flow_run_id else None)
    subs.save_check(check)
    return check


def deployment_name(subscription_id: str) -> str:
    """The Prefect deployment of one subscription."""
    return f"subscription-{subscription_id}"


def to_deployment(sub: Subscription) -> RunnerDeployment:
    """The subscription as a Prefect deployment of :func:`check_subscription` with its schedule."""
    # Called from sync code, so Prefect's async-dispatching method returns the deployment itself.
    interval = timedelta(seconds=sub.interval_s) if sub.interval_s is not None else None
    return cast(RunnerDeployment, check_subscription.to_deployment(
        name=deployment_name(sub.id), cron=sub.cron, interval=interval,
        parameters={"subscription_id": sub.id},
        tags=["subscription", f"subscription:{sub.id}"], paused=sub.paused,
        description=f"“{sub.query}” {sub.schedule}",
    ))


def schedule_subscription(sub: Subscription) -> UUID:
    """Create (or update) the subscription's deployment and schedule on the Prefect server."""
    try:
        return UUID(str(to_deployment(sub).apply()))
    except (httpx.HTTPError, PrefectException) as exc:
        raise SubscriptionError(f"cannot create the schedule of {sub.id} on Prefect: {exc}",
                                hint="is the Prefect server up? `droidretriever up`") from exc


def _deployment_id(subscription_id: str) -> UUID | None:
    try:
        with get_client(sync_client=True) as client:
            return client.read_deployment_by_name(
                f"subscription/{deployment_name(subscription_id)}").id
    except ObjectNotFound:
        return None


class ScheduledRun(BaseModel):
    """One Prefect flow run of a subscription's deployment."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    flow_run_id: str
    state: str  # Prefect's state name: Scheduled, Late, Running, Completed, Failed, ...
    time: datetime | None  # when it started, or is expected to


class ScheduleState(BaseModel):
    """What Prefect knows of a subscription's schedule: its latest runs and the next one."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    deployment_id: str
    paused: bool
    next_run: ScheduledRun | None  # state "Late" when it is overdue (is the service running?)
    recent: tuple[ScheduledRun, ...]


def read_schedule_state(subscription_id: str, *, limit: int = 10) -> ScheduleState | None:
    """The deployment's next scheduled run and its ``limit`` latest runs; None without one."""
    from prefect.client.schemas.filters import (
        DeploymentFilter,
        DeploymentFilterId,
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType
    from prefect.client.schemas.sorting import FlowRunSort

    try:
        deployment_id = _deployment_id(subscription_id)
        if deployment_id is None:
            return None
        by_deployment = DeploymentFilter(id=DeploymentFilterId(any_=[deployment_id]))
        with get_client(sync_client=True) as client:
            deployment = client.read_deployment(deployment_id)
            upcoming = client.read_flow_runs(
                deployment_filter=by_deployment, limit=1,
                flow_run_filter=FlowRunFilter(state=FlowRunFilterState(
                    type=FlowRunFilterStateType(any_=[StateType.SCHEDULED]))),
                sort=FlowRunSort.EXPECTED_START_TIME_ASC)
            started = client.read_flow_runs(
                deployment_filter=by_deployment, limit=limit,
                flow_run_filter=FlowRunFilter(state=FlowRunFilterState(
                    type=FlowRunFilterStateType(not_any_=[StateType.SCHEDULED]))),
                sort=FlowRunSort.EXPECTED_START_TIME_DESC)
    except (httpx.HTTPError, PrefectException) as exc:
        raise SubscriptionError(f"cannot read the schedule of {subscription_id}: {exc}",
                                hint="is the Prefect server up? `droidretriever up`") from exc
    runs = [ScheduledRun(flow_run_id=str(r.id), state=r.state_name or "?",
                         time=r.start_time or r.expected_start_time) for r in [*upcoming, *started]]
    return ScheduleState(deployment_id=str(deployment_id), paused=bool(deployment.paused),
                         next_run=runs[0] if upcoming else None,
                         recent=tuple(runs[len(upcoming):]))


def set_subscription_paused(subscription_id: str, paused: bool) -> None:
    """Pause or resume the subscription's schedule on the Prefect server."""
    try:
        deployment_id = _deployment_id(subscription_id)
        if deployment_id is None:
            raise SubscriptionError(f"subscription {subscription_id} has no Prefect deployment",
                                    hint="subscribe again to recreate it")
        with get_client(sync_client=True) as client:
            if paused:
                client.pause_deployment(deployment_id)
            else:
                client.resume_deployment(deployment_id)
    except (httpx.HTTPError, PrefectException) as exc:
        raise SubscriptionError(f"cannot change the schedule of {subscription_id}: {exc}",
                                hint="is the Prefect server up? `droidretriever up`") from exc


def delete_subscription(subscription_id: str) -> None:
    """Remove the subscription's deployment (its schedule and future runs) from Prefect."""
    try:
        deployment_id = _deployment_id(subscription_id)
        if deployment_id is not None:
            with get_client(sync_client=True) as client:
                client.delete_deployment(deployment_id)
    except (httpx.HTTPError, PrefectException) as exc:
        raise SubscriptionError(f"cannot delete the deployment of {subscription_id}: {exc}",
                                hint="is the Prefect server up? `droidretriever up`") from exc


def create_subscription(store: SubscriptionStore, sub: Subscription) -> UUID:
    """Schedule ``sub`` on Prefect, then keep its record; returns the deployment id."""
    deployment_id = schedule_subscription(sub)
    store.save(sub)
    return deployment_id


def pause_subscription(store: SubscriptionStore, subscription_id: str,
                       paused: bool) -> Subscription:
    """Pause (or resume) the schedule and record it; returns the changed subscription."""
    sub = store.load(subscription_id)
    set_subscription_paused(subscription_id, paused)
    changed = sub.model_copy(update={"paused": paused})
    store.save(changed)
    return changed


def remove_subscription(store: SubscriptionStore, subscription_id: str) -> int:
    """Delete the schedule, the record and every kept report; returns how many objects went."""
    store.load(subscription_id)
    delete_subscription(subscription_id)
    return store.delete(subscription_id)
