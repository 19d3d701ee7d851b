"""Subscriptions: a scheduled deployment; a price change across a simulated day is notified once."""

from __future__ import annotations

from prefect.client.orchestration import get_client

from device_farm.sim import load_catalog
from device_farm.sim.template import apply_variation
from flows.notifiers import NotifierSpec
from flows.runtime import open_services
from flows.subscriptions import (
    Subscription,
    SubscriptionStore,
    check_subscription,
    deployment_name,
    schedule_subscription,
)
from tests.flows.conftest import FlowFarm
from tests.support.webhook import Webhook

MCDONALDS = "com.mcdonalds.gma.cn"


def big_mac_price(day: int, seed: int = 7) -> float:
    """The Big Mac's price on the simulated McDonald's app on ``day``."""
    app = load_catalog().apps[MCDONALDS]
    menu = [dict(r) for r in app.data["menu"]]
    varied = apply_variation(menu, app.variation, "menu", seed, day)
    price = next(r["price"] for r in varied if r["id"] == "bigmac")
    if not isinstance(price, (int, float, str)):
        raise TypeError(f"the catalog's Big Mac price is not a number: {price!r}")
    return float(price)


def test_subscription_reports_a_price_change_once(flow_farm: FlowFarm, webhook: Webhook) -> None:
    day = next(d for d in range(1, 30) if big_mac_price(d) != big_mac_price(0))
    sub = Subscription.create("How much is a Big Mac at McDonald's?", "0 8 * * *",
                              apps=("McDonald's",),
                              notifier=NotifierSpec.model_validate({"kind": "webhook",
                                                                    "url": webhook.url}))
    SubscriptionStore(open_services(flow_farm.settings).store).save(sub)
    deployment_id = schedule_subscription(sub)
    with get_client(sync_client=True) as client:
        deployment = client.read_deployment(deployment_id)
    assert deployment.name == deployment_name(sub.id)
    assert [s.schedule.cron for s in deployment.schedules] == ["0 8 * * *"]  # type: ignore[union-attr]

    first = check_subscription(sub.id)
    assert first.facts >= 1 and not first.notified
    flow_farm.sim.control.set_day(day)  # every phone: a simulated day later
    try:
        second = check_subscription(sub.id)
        third = check_subscription(sub.id)
    finally:
        flow_farm.sim.control.set_day(0)

    assert second.changed and second.notified
    new_price = f"{big_mac_price(day):.1f}"
    assert new_price in second.summary, second.summary
    assert not third.changed and not third.notified, third.summary
    assert len(webhook.received) == 1
    assert webhook.received[0]["run_id"] == second.run_id
    kept = SubscriptionStore(open_services(flow_farm.settings).store)
    assert kept.read_latest_facts(sub.id) is not None
