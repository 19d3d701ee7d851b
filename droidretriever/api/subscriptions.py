"""Subscriptions: list (schedule, next run, last change), create from a question, pause / resume, delete.

The verbs are :mod:`flows.subscriptions`'s, the same the CLI uses.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, status

from droidretriever.api.auth import Caller, caller
from droidretriever.api.context import ApiContext, get_context
from droidretriever.api.errors import NotFound
from droidretriever.api.schemas import SUBSCRIPTION_ID, SubscriptionCreate, SubscriptionView
from flows.notifiers import NotifierSpec
from flows.retrieve import check_apps_installed
from flows.subscriptions import (
    Subscription,
    SubscriptionStore,
    create_subscription,
    pause_subscription,
    read_schedule_state,
    remove_subscription,
)
from flows.webhook_targets import check_webhook_target

__all__ = ["router"]

router = APIRouter(tags=["subscriptions"])

SubscriptionId = Annotated[str, Path(pattern=SUBSCRIPTION_ID)]


def _store(context: ApiContext) -> SubscriptionStore:
    return SubscriptionStore(context.store)


def _view(store: SubscriptionStore, sub: Subscription) -> SubscriptionView:
    schedule = read_schedule_state(sub.id, limit=1)
    checks = store.list_checks(sub.id)
    last = checks[0] if checks else None
    upcoming = schedule.next_run if schedule is not None else None
    return SubscriptionView(
        id=sub.id, question=sub.query, schedule=sub.schedule, paused=sub.paused,
        next_run=upcoming.time if upcoming is not None else None,
        next_state=upcoming.state if upcoming is not None else "",
        last_change=last.summary.splitlines()[0] if last and last.summary else "",
        last_run=last.run_id if last else None, last_checked=last.finished_at if last else None)


def _existing(store: SubscriptionStore, subscription_id: str) -> None:
    if not store.exists(subscription_id):
        raise NotFound(f"no subscription {subscription_id}", hint="GET /subscriptions lists them")


@router.get("/subscriptions", response_model=list[SubscriptionView],
            summary="Every subscription: schedule, next run, the last change found")
def list_subscriptions(context: ApiContext = Depends(get_context),
                       who: Caller = Depends(caller)) -> list[SubscriptionView]:
    store = _store(context)
    return [_view(store, sub) for sub in store.list()]


@router.post("/subscriptions", status_code=status.HTTP_201_CREATED, response_model=SubscriptionView,
             summary="Ask a question on a schedule (cron, or every so many seconds)")
def create(body: SubscriptionCreate, context: ApiContext = Depends(get_context),
           who: Caller = Depends(caller)) -> SubscriptionView:
    check_apps_installed(body.apps, context.installed_apps())
    if body.webhook is not None:
        check_webhook_target(str(body.webhook), context.settings)
    notifier = NotifierSpec(kind="webhook", url=body.webhook) if body.webhook else NotifierSpec()
    cron = None if body.every_s is not None else (body.cron or "0 8 * * *")
    sub = Subscription.create(body.text, cron, interval_s=body.every_s, apps=body.apps,
                              mode=body.mode, browsing_limit=body.limit, notifier=notifier)
    store = _store(context)
    create_subscription(store, sub)
    return _view(store, sub)


@router.post("/subscriptions/{subscription_id}/pause", response_model=SubscriptionView,
             summary="Stop scheduling its runs (history kept)")
def pause(subscription_id: SubscriptionId, context: ApiContext = Depends(get_context),
          who: Caller = Depends(caller)) -> SubscriptionView:
    store = _store(context)
    _existing(store, subscription_id)
    return _view(store, pause_subscription(store, subscription_id, True))


@router.post("/subscriptions/{subscription_id}/resume", response_model=SubscriptionView,
             summary="Schedule it again")
def resume(subscription_id: SubscriptionId, context: ApiContext = Depends(get_context),
           who: Caller = Depends(caller)) -> SubscriptionView:
    store = _store(context)
    _existing(store, subscription_id)
    return _view(store, pause_subscription(store, subscription_id, False))


@router.delete("/subscriptions/{subscription_id}", status_code=status.HTTP_204_NO_CONTENT,
               summary="Delete it, its schedule and its kept reports")
def delete(subscription_id: SubscriptionId, context: ApiContext = Depends(get_context),
           who: Caller = Depends(caller)) -> None:
    store = _store(context)
    _existing(store, subscription_id)
    remove_subscription(store, subscription_id)
