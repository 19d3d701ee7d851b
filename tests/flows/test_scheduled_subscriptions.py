"""Subscriptions fired by the real scheduler: the stack's Prefect server creates the runs, the
stack's ``subscriptions`` service executes them; nothing here calls the flow.

A subscription every 30 s: the first firing keeps the facts, the simulated day then changes the
Big Mac's price, the second firing notifies the change to a local webhook, the third (nothing
changed) notifies nothing. The Prefect server's log must hold no ERROR line (with SQLAlchemy 2.1
its scheduler failed on every loop and no run was ever created).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from prefect.settings import PREFECT_API_URL, temporary_settings
from typer.testing import CliRunner

from core.config import Settings, load_settings
from deploy.local import (
    PostgresService,
    PrefectService,
    SubscriptionsService,
    ensure_stack_secrets,
)
from droidretriever.cli import app
from droidretriever.testing import free_port
from flows.runtime import open_services
from flows.subscriptions import SubscriptionCheck, SubscriptionStore, read_schedule_state
from tests.flows.conftest import FlowFarm
from tests.flows.test_subscriptions import big_mac_price
from tests.support.webhook import Webhook

pytestmark = [pytest.mark.services, pytest.mark.slow]

INTERVAL_S = 30  # a check takes about 10 s on the virtual phones: firings never overlap


@pytest.fixture
def stack_settings(flow_farm: FlowFarm, tmp_path: Path,
                   monkeypatch: pytest.MonkeyPatch) -> Iterator[Settings]:
    """The stack's own PostgreSQL, Prefect server and subscriptions service, beside the test farm."""
    monkeypatch.setenv("DROIDRETRIEVER_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DROIDRETRIEVER_PREFECT__API_URL", f"http://127.0.0.1:{free_port()}/api")
    monkeypatch.setenv("DROIDRETRIEVER_PREFECT__DATABASE_PORT", str(free_port()))
    settings = ensure_stack_secrets(load_settings())
    services = [PostgresService(settings), PrefectService(settings), SubscriptionsService(settings)]
    try:
        for service in services:
            service.start()
            service.wait_healthy(120)
        yield settings
    finally:
        for service in reversed(services):
            service.stop()


def _wait_for_checks(store: SubscriptionStore, sub_id: str, count: int,
                     timeout_s: float) -> list[SubscriptionCheck]:
    """The subscription's checks, oldest first, once there are ``count``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        checks = store.list_checks(sub_id)
        if len(checks) >= count:
            return checks[::-1]
        time.sleep(0.5)
    raise AssertionError(f"{count} scheduled run(s) of {sub_id} did not finish in {timeout_s:.0f} s"
                         f" (finished: {len(store.list_checks(sub_id))})")


def test_the_scheduler_fires_a_subscription_that_notifies_a_change_once(
        flow_farm: FlowFarm, stack_settings: Settings, webhook: Webhook) -> None:
    day = next(d for d in range(1, 30) if big_mac_price(d) != big_mac_price(0))
    subscribed = CliRunner().invoke(app, [
        "subscribe", "How much is a Big Mac at McDonald's?", "--every", f"{INTERVAL_S}s",
        "--apps", "McDonald's", "--webhook", webhook.url])
    assert subscribed.exit_code == 0, subscribed.output
    assert "the subscriptions service is not running" not in subscribed.output
    sub_id = subscribed.output.split()[1].rstrip(":")
    store = SubscriptionStore(open_services(stack_settings).store)

    first = _wait_for_checks(store, sub_id, 1, timeout_s=INTERVAL_S + 90)[0]
    flow_farm.sim.control.set_day(day)  # every phone: a simulated day later
    try:
        checks = _wait_for_checks(store, sub_id, 3, timeout_s=3 * INTERVAL_S + 60)
    finally:
        flow_farm.sim.control.set_day(0)

    assert checks[0] == first and not first.changed and not first.notified
    second, third = checks[1], checks[2]
    assert second.changed and second.notified, second.summary
    assert f"{big_mac_price(day):.1f}" in second.summary, second.summary
    assert not third.changed and not third.notified, third.summary
    assert [h["run_id"] for h in webhook.received] == [second.run_id]

    # Each check was a flow run the scheduler created, in the stack's Prefect server.
    with temporary_settings({PREFECT_API_URL: str(stack_settings.prefect.api_url)}):
        schedule = read_schedule_state(sub_id)
    assert schedule is not None and schedule.next_run is not None
    completed = {r.flow_run_id for r in schedule.recent if r.state == "Completed"}
    assert {c.flow_run_id for c in checks[:3]} <= completed

    shown = CliRunner().invoke(app, ["subscriptions", "show", sub_id])
    assert shown.exit_code == 0, shown.output
    assert "next run:" in shown.output and "Completed" in shown.output
    assert "(notified)" in shown.output

    prefect_log = PrefectService(stack_settings).log_path.read_text(errors="replace")
    errors = [line for line in prefect_log.splitlines() if "ERROR" in line]
    assert not errors, "\n".join(errors[:5])
