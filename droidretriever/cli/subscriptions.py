"""``droidretriever subscribe "..." --cron|--every`` and ``droidretriever subscriptions list|show|pause|resume|delete``.

A subscription is a record in the object store plus a Prefect deployment with
its schedule; the Prefect server's scheduler creates its runs and the local
stack's ``subscriptions`` service (``python -m flows.serve``, started by
``droidretriever up``) executes them, picking up new subscriptions by itself.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table

from core.config import Settings, load_settings
from core.errors import InputError
from core.models import InstalledApp
from core.text import strip_controls
from droidretriever.cli._app import app
from droidretriever.cli.ask import _local_prefect
from droidretriever.cli.inputs import (
    check_apps,
    check_id,
    check_question,
    check_webhook,
    parse_mode,
    shown,
    validated,
)

if TYPE_CHECKING:
    from flows.subscriptions import ScheduleState, SubscriptionCheck, SubscriptionStore

__all__ = ["subscribe", "subscriptions_app"]

console = Console()

subscriptions_app = typer.Typer(help="Scheduled questions that tell you when the answer changes.",
                                no_args_is_help=True)
app.add_typer(subscriptions_app, name="subscriptions")


def _store() -> SubscriptionStore:
    from flows.subscriptions import SubscriptionStore
    from storage import open_object_store

    return SubscriptionStore(open_object_store(load_settings()))


_DURATION = re.compile(r"^\s*(\d+)\s*(s|m|h|d)?\s*$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}


_SUBSCRIPTION_ID = r"sub-[a-z0-9]{6,32}"
_EVERY_MAX_S = 366 * 86400


def _parse_every(text: str) -> int:
    """``30s``, ``15m``, ``2h``, ``1d`` (or plain seconds) as seconds."""
    match = _DURATION.match(text.lower()) if len(text) <= 20 else None
    if match is None:
        raise InputError(f"--every {shown(text)} is not a duration such as 30s, 15m, 2h or 1d")
    seconds = int(match.group(1)) * _UNIT_S[match.group(2) or "s"]
    if seconds > _EVERY_MAX_S:
        raise InputError(f"--every {shown(text)} is longer than a year: use --cron for rare runs")
    return seconds


def _installed_apps(settings: Settings) -> tuple[InstalledApp, ...]:
    """The apps of the farm's online phones; none when the farm's registry cannot be read now
    (the subscription's runs find out then)."""
    import redis

    from device_farm.registry import DeviceRegistry

    try:
        return DeviceRegistry.from_settings(settings, retry_window_s=0).installed_apps()
    except redis.RedisError:
        return ()


def _safe(text: str) -> str:
    """Stored text (a question, a fact) for the terminal: no control characters, no markup."""
    from rich.markup import escape

    return escape(strip_controls(text))


@app.command()
def subscribe(
    question: str = typer.Argument(..., help="The question to ask on the schedule."),
    cron: str = typer.Option("", "--cron",
                             help="When, as cron (server time zone); default 0 8 * * *."),
    every: str = typer.Option("", "--every", help="Or every so long: 30s, 15m, 2h, 1d."),
    apps: str = typer.Option("", "--apps", help="Only these apps: a,b."),
    mode: str = typer.Option("", "--mode", help="focused, list_view or multi_page."),
    limit: int = typer.Option(3, "--limit", min=1, max=20),
    webhook: str = typer.Option("", "--webhook", help="POST changes here instead of logging them."),
) -> None:
    """Ask QUESTION on a schedule; changes since the last run are notified."""
    from deploy.local import SubscriptionsService
    from flows.notifiers import NotifierSpec
    from flows.retrieve import check_apps_installed
    from flows.subscriptions import Subscription, create_subscription

    # Everything typed is checked before a schedule or a record is written.
    if cron and every:
        raise InputError("give --cron or --every, not both")
    check_question(question)
    interval_s = _parse_every(every) if every else None
    notifier = validated(
        lambda: NotifierSpec.model_validate({"kind": "webhook", "url": webhook} if webhook else {}),
        {"url": "--webhook", "": "--webhook"})
    sub = validated(
        lambda: Subscription.create(question, None if every else (cron or "0 8 * * *"),
                                    interval_s=interval_s, notifier=notifier,
                                    apps=check_apps(apps), mode=parse_mode(mode),
                                    browsing_limit=limit),
        {"query": "the question", "cron": "--cron", "interval_s": "--every", "apps": "--apps",
         "mode": "--mode", "browsing_limit": "--limit", "notifier": "--webhook"})
    settings = load_settings()
    if webhook:
        check_webhook(webhook, settings)
    check_apps_installed(sub.apps, _installed_apps(settings), option="--apps")
    with _local_prefect(settings):
        deployment_id = create_subscription(_store(), sub)
    console.print(
        f"subscribed {sub.id}: “{_safe(question)}” {sub.schedule}\n"
        f"runs: {settings.prefect.ui_url}/deployments/deployment/{deployment_id}\n"
        f"reports: subscriptions/{sub.id}/ in bucket {settings.s3.bucket} "
        f"(`droidretriever subscriptions show {sub.id}`)", highlight=False)
    service = SubscriptionsService(settings)
    if service.managed and not service.check_health().healthy:
        console.print("[yellow]the subscriptions service is not running:[/] "
                      "`droidretriever up` starts it", highlight=False)


@subscriptions_app.command("list")
def list_subscriptions() -> None:
    """Every subscription, its schedule and whether it is paused."""
    table = Table(title="subscriptions")
    for column in ("id", "question", "schedule", "state", "notifier"):
        table.add_column(column)
    for sub in _store().list():
        table.add_row(sub.id, _safe(sub.query), sub.schedule,
                      "paused" if sub.paused else "active", sub.notifier.kind)
    console.print(table)


def _when(moment: datetime | None) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S") if moment is not None else "-"


def _print_schedule(schedule: ScheduleState, checks: dict[str | None, SubscriptionCheck]) -> None:
    """The next run, then the latest runs with what each found changed."""
    upcoming = schedule.next_run
    if schedule.paused:
        next_text = "paused"
    elif upcoming is None:
        next_text = "none scheduled yet"
    else:
        next_text = f"{_when(upcoming.time)} ({upcoming.state})"
    console.print(f"next run: {next_text}", highlight=False)
    if not schedule.recent:
        console.print("no run yet")
        return
    table = Table(title="latest runs")
    for column in ("time", "status", "changes", "run"):
        table.add_column(column, overflow="fold")
    for run in schedule.recent:
        check = checks.get(run.flow_run_id)
        changes = "-" if check is None else (
            _safe(check.summary.splitlines()[0] if check.summary else "")
            + (" (notified)" if check.notified else ""))
        table.add_row(_when(run.time), run.state, changes,
                      check.run_id if check else run.flow_run_id)
    console.print(table)


@subscriptions_app.command("show")
def show(subscription_id: str,
         runs: int = typer.Option(10, "--runs", min=1, max=100,
                                  help="How many of the latest runs to list.")) -> None:
    """One subscription: its schedule, next run, latest runs with their changes, latest facts."""
    from flows.subscriptions import read_schedule_state

    check_id(subscription_id, "subscription", _SUBSCRIPTION_ID)
    store = _store()
    sub = store.load(subscription_id)
    console.print(f"{sub.id}: “{_safe(sub.query)}” {sub.schedule}, "
                  f"{'paused' if sub.paused else 'active'}, notifier {sub.notifier.kind}",
                  highlight=False)
    with _local_prefect(load_settings()):
        schedule = read_schedule_state(subscription_id, limit=runs)
    if schedule is None:
        console.print("[yellow]no Prefect deployment:[/] subscribe again to recreate it")
    else:
        _print_schedule(schedule, {c.flow_run_id: c for c in store.list_checks(subscription_id)})
    facts = store.read_latest_facts(subscription_id)
    if facts is None:
        return
    table = Table(title=f"latest facts (run {facts.run_id})")
    for column in ("app", "item", "attribute", "value"):
        table.add_column(column)
    for fact in facts.facts:
        table.add_row(_safe(fact.app), _safe(fact.entity), fact.attribute.value, _safe(fact.text))
    console.print(table)


def _set_paused(subscription_id: str, paused: bool) -> None:
    from flows.subscriptions import pause_subscription

    check_id(subscription_id, "subscription", _SUBSCRIPTION_ID)
    with _local_prefect(load_settings()):
        pause_subscription(_store(), subscription_id, paused)
    console.print(f"{subscription_id} {'paused' if paused else 'active again'}")


@subscriptions_app.command("pause")
def pause(subscription_id: str) -> None:
    """Stop scheduling runs of a subscription (keeps its history)."""
    _set_paused(subscription_id, True)


@subscriptions_app.command("resume")
def resume_subscription(subscription_id: str) -> None:
    """Schedule a paused subscription again."""
    _set_paused(subscription_id, False)


@subscriptions_app.command("delete")
def delete(subscription_id: str) -> None:
    """Remove a subscription, its schedule and its kept reports."""
    from flows.subscriptions import remove_subscription

    check_id(subscription_id, "subscription", _SUBSCRIPTION_ID)
    with _local_prefect(load_settings()):
        removed = remove_subscription(_store(), subscription_id)
    console.print(f"deleted {subscription_id} ({removed} stored object(s))")
