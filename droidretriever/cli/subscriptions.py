"""``droidretriever subscribe "..." --cron`` and ``droidretriever subscriptions list|show|pause|resume|delete``.

A subscription is a record in the object store plus a Prefect deployment with
its cron schedule; ``python -m flows.serve`` serves the deployments and
picks up new ones by itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table

from droidretriever.cli._app import app
from droidretriever.cli.ask import _local_prefect
from droidretriever.config import load_settings
from droidretriever.models import PageMode

if TYPE_CHECKING:
    from flows.subscriptions import SubscriptionStore

__all__ = ["subscribe", "subscriptions_app"]

console = Console()

subscriptions_app = typer.Typer(help="Scheduled questions that tell you when the answer changes.",
                                no_args_is_help=True)
app.add_typer(subscriptions_app, name="subscriptions")


def _store() -> SubscriptionStore:
    from flows.subscriptions import SubscriptionStore
    from storage import open_object_store

    return SubscriptionStore(open_object_store(load_settings()))


@app.command()
def subscribe(
    question: str = typer.Argument(..., help="The question to ask on the schedule."),
    cron: str = typer.Option("0 8 * * *", "--cron", help="When, as cron (server time zone)."),
    apps: str = typer.Option("", "--apps", help="Only these apps: a,b."),
    mode: str = typer.Option("", "--mode", help="focused, list_view or multi_page."),
    limit: int = typer.Option(3, "--limit", min=1, max=20),
    webhook: str = typer.Option("", "--webhook", help="POST changes here instead of logging them."),
) -> None:
    """Ask QUESTION on a cron schedule; changes since the last run are notified."""
    from flows.notifiers import NotifierSpec
    from flows.subscriptions import Subscription, schedule_subscription

    notifier = NotifierSpec.model_validate({"kind": "webhook", "url": webhook} if webhook else {})
    sub = Subscription.create(question, cron, notifier=notifier,
                              apps=tuple(a.strip() for a in apps.split(",") if a.strip()),
                              mode=PageMode.parse(mode) if mode else None, browsing_limit=limit)
    settings = load_settings()
    with _local_prefect(settings):
        deployment_id = schedule_subscription(sub)
    _store().save(sub)
    console.print(f"subscribed {sub.id}: “{question}” on cron {cron} (deployment {deployment_id})\n"
                  "runs are served by `python -m flows.serve` (it picks this one up within 30 s)",
                  highlight=False)


@subscriptions_app.command("list")
def list_subscriptions() -> None:
    """Every subscription, its schedule and whether it is paused."""
    table = Table(title="subscriptions")
    for column in ("id", "question", "cron", "state", "notifier"):
        table.add_column(column)
    for sub in _store().list():
        table.add_row(sub.id, sub.query, sub.cron, "paused" if sub.paused else "active",
                      sub.notifier.kind)
    console.print(table)


@subscriptions_app.command("show")
def show(subscription_id: str) -> None:
    """One subscription and the facts of its latest run."""
    store = _store()
    sub = store.load(subscription_id)
    console.print_json(sub.model_dump_json())
    facts = store.read_latest_facts(subscription_id)
    if facts is None:
        console.print("no run yet")
        return
    table = Table(title=f"latest facts (run {facts.run_id})")
    for column in ("app", "item", "attribute", "value"):
        table.add_column(column)
    for fact in facts.facts:
        table.add_row(fact.app, fact.entity, fact.attribute.value, fact.text)
    console.print(table)


def _set_paused(subscription_id: str, paused: bool) -> None:
    from flows.subscriptions import set_subscription_paused

    store = _store()
    sub = store.load(subscription_id)
    with _local_prefect(load_settings()):
        set_subscription_paused(subscription_id, paused)
    store.save(sub.model_copy(update={"paused": paused}))
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
    from flows.subscriptions import delete_subscription

    store = _store()
    store.load(subscription_id)
    with _local_prefect(load_settings()):
        delete_subscription(subscription_id)
    removed = store.delete(subscription_id)
    console.print(f"deleted {subscription_id} ({removed} stored object(s))")
