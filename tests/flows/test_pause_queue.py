"""The farm's pause queue: a paused sub-flow is in it (and reaches the pause webhook) while its
process waits, and leaves it when answered; an entry whose process has died drops out."""

from __future__ import annotations

import threading

import pytest
import redis

from core.models import RiskCategory, new_id
from flows.keys import waiting_key
from flows.models import RetrieveRequest, RunOutcome
from flows.pause_queue import PauseEntry, PauseQueue
from flows.pauses import resume_run
from flows.retrieve import run_retrieve
from flows.runtime import open_services
from tests.flows.conftest import FlowFarm
from tests.flows.login_gate import LOGIN_GATE
from tests.support.farm import wait_until
from tests.support.webhook import Webhook

MEITUAN = "com.sankuai.meituan"


def test_a_pause_is_queued_notified_and_leaves_the_queue_when_answered(
    flow_farm: FlowFarm, webhook: Webhook, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DROIDRETRIEVER_API__PAUSE_WEBHOOK", webhook.url)
    monkeypatch.setenv("DROIDRETRIEVER_API__PUBLIC_URL", "https://dashboard.example")
    for serial in flow_farm.sim.serials:
        flow_farm.sim.control.set_logged_in(serial, MEITUAN, False)
    run_id = new_id("run")
    outcome: list[RunOutcome] = []
    request = RetrieveRequest(text="我最近的美团订单有哪些", run_id=run_id, navigate_task=LOGIN_GATE)
    runner = threading.Thread(target=lambda: outcome.append(run_retrieve(request)), daemon=True)
    runner.start()
    services = open_services(flow_farm.settings)
    queue = PauseQueue(services.redis)
    start = queue.last_event_id()
    try:
        entry = wait_until(lambda: queue.for_run(run_id), 120, "the pause in the queue")[0]
        assert (entry.app_label, entry.package, entry.category) == ("Meituan", MEITUAN,
                                                                    RiskCategory.LOGIN)
        assert entry.question == "我最近的美团订单有哪些" and entry.serial in flow_farm.sim.serials
        assert entry.timeout_s == 60.0  # the flow tests' pause timeout
        notice = wait_until(lambda: [n for n in webhook.received if n["run_id"] == run_id], 10,
                            "the pause webhook")[0]
        assert notice["app"] == "Meituan" and notice["category"] == "login"
        assert notice["phone"] == entry.serial
        assert notice["dashboard"] == f"https://dashboard.example/#/runs/{run_id}"
        for serial in flow_farm.sim.serials:
            flow_farm.sim.control.set_logged_in(serial, MEITUAN, True)
        resume_run(run_id, note="logged in")
        runner.join(120)
    finally:
        for serial in flow_farm.sim.serials:
            flow_farm.sim.control.set_logged_in(serial, MEITUAN, True)
    assert outcome and not queue.for_run(run_id)
    changes = [(e.kind, e.outcome) for e in queue.read_events(start) if e.entry.run_id == run_id]
    assert changes == [("opened", ""), ("closed", "continue")]


@pytest.mark.services
def test_an_entry_whose_process_died_drops_out(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    queue = PauseQueue(client)
    alive = PauseEntry(flow_run_id=new_id("flow"), run_id="run-a", subtask_id="s", app_label="Gmail",
                       package="g", serial="p1", reason="login")
    dead = alive.model_copy(update={"flow_run_id": new_id("flow"), "run_id": "run-b"})
    client.set(waiting_key(alive.flow_run_id), "run-a", ex=30)  # its process renews this
    start = queue.last_event_id()
    queue.open(alive)
    queue.open(dead)
    assert [e.run_id for e in queue.list()] == ["run-a"]
    assert [(e.kind, e.entry.run_id, e.outcome) for e in queue.read_events(start)][-1] == (
        "closed", "run-b", "gone")
    queue.close(alive.flow_run_id, "continue")
    assert queue.list() == []
    client.close()
