"""A phone dies while a person has it in hand, in a real headless Chromium (Debian's).

Gmail is logged out on both virtual phones, and the farm runs its monitor as ``farm up`` does
(``python -m deploy.farm.monitor``, reading the farm manifest). "What is my latest email in
Gmail?" stops at the sign-in screen; the person takes the phone over from the farm's pause
queue, and its worker is SIGKILLed. Within seconds the run page says the phone went down; while
it is down the queue does not offer it and the Farm page shows it as down (a label, not a broken
image). The run goes on on a phone with Gmail: the other one (the sub-flow gave the dead phone
up), or the same one once the monitor has started its worker again, without `droidretriever
up`; the page says which, the person signs in there, and the run ends with its cited report.
"""

from __future__ import annotations

import os
import secrets
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from deploy.farm import (
    FarmManifest,
    is_running,
    read_manifest,
    start_process,
    stop_process,
    write_manifest,
)
from tests.api.conftest import log_gmail_out
from tests.api.test_dashboard import _click_on_phone, browser  # noqa: F401  (the fixture)
from tests.support.api import ApiStack, read_events
from tests.support.farm import wait_until

pytestmark = [pytest.mark.services, pytest.mark.slow]

TOLD_WITHIN_S = 12.0  # two heartbeat TTLs (2 s each in tests), the sub-flow's look, the page's stream


@pytest.fixture()
def repairing_farm(api_stack: ApiStack) -> Iterator[ApiStack]:
    """The stack's phones under a farm manifest, watched by the monitor ``farm up`` starts."""
    farm, state_dir = api_stack.farm, api_stack.settings.state_dir
    write_manifest(state_dir, FarmManifest(
        mode="sim", adb_host="127.0.0.1", adb_port=farm.sim.port, serials=tuple(farm.sim.serials),
        processes=tuple(farm.procs.workers.values())))
    monitor = start_process(state_dir, "monitor", ["python", "-m", "deploy.farm.monitor"],
                            env=api_stack.env)
    try:
        yield api_stack
    finally:
        stop_process(monitor)
        manifest = read_manifest(state_dir)
        for record in manifest.processes if manifest else ():
            serial = record.argv[list(record.argv).index("--serial") + 1]
            farm.procs.workers[serial] = record  # restarted ones are stopped with the stack
        write_manifest(state_dir, None)
        for serial in farm.sim.serials:
            if not is_running(farm.procs.workers[serial]):
                farm.procs.start_worker(serial)
        wait_until(lambda: all(farm.registry.status(s).heartbeat_alive for s in farm.sim.serials),
                   120, "every phone's worker to beat")


def _sign_in(page: Page, stack: ApiStack, serial: str) -> None:
    """Sign in on the phone in hand by clicking the live screen and typing, then back to auto."""
    expect(page.locator("#takeover")).to_be_visible(timeout=20_000)
    _click_on_phone(page, stack, serial, "Email")
    page.locator("#takeover-text").fill(f"dr-{secrets.token_hex(3)}@example.com")
    page.locator("#takeover-type").click()
    _click_on_phone(page, stack, serial, "password")
    page.locator("#takeover-text").fill(f"pw-{secrets.token_hex(5)}")
    page.locator("#takeover-type").click()
    page.wait_for_timeout(600)
    _click_on_phone(page, stack, serial, "Next")
    page.wait_for_timeout(1500)
    page.locator("#do-resume").click()
    expect(page.locator("#takeover")).to_be_hidden()


def _run_pauses(stack: ApiStack, run_id: str) -> list[dict[str, Any]]:
    with stack.client() as program:
        return [p["entry"] for p in program.get("/pauses").json() if p["entry"]["run_id"] == run_id]


def test_a_phone_dying_mid_takeover_is_said_and_the_run_finishes_elsewhere(
        repairing_farm: ApiStack, browser: BrowserContext) -> None:  # noqa: F811
    stack = repairing_farm
    log_gmail_out(stack)
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(stack.login_link())
    expect(page.locator("#question")).to_be_visible()
    page.locator("#question").fill("What is my latest email in Gmail?")
    page.locator("#ask").click()
    page.wait_for_url("**/#/runs/run-*")
    run_id = page.url.rsplit("/", 1)[-1].split("?")[0]
    expect(page.locator("#pause-banner")).to_contain_text("Gmail needs you", timeout=120_000)
    victim = wait_until(lambda: _run_pauses(stack, run_id), 30, "the pause in the queue")[0]["serial"]
    page.locator("#pause-banner #do-take-over").click()
    expect(page.locator("#takeover")).to_be_visible(timeout=20_000)
    _click_on_phone(page, stack, victim, "Email")  # the person is signing in when the phone dies

    killed = stack.farm.procs.workers[victim]
    killed_at = time.monotonic()
    os.kill(killed.pid, signal.SIGKILL)
    notice = page.locator("#phone-lost li.lost")
    expect(notice.first).to_contain_text(f"{victim} is down", timeout=int(TOLD_WITHIN_S * 1000))
    told_s = time.monotonic() - killed_at
    # While it is down (until the monitor has its worker beating again) nothing offers it.
    offered = [p["serial"] for p in _run_pauses(stack, run_id)]
    assert victim not in offered or stack.farm.registry.status(victim).heartbeat_alive, offered

    # The Farm page in a second tab: the dead phone is down, and nothing offers to take it over.
    farm_page = browser.new_page()
    farm_page.goto(f"{stack.base}/#/farm")
    card = farm_page.locator(f"#phones article.phone[data-serial='{victim}']")
    if not stack.farm.registry.status(victim).heartbeat_alive:
        expect(card.locator(".down-label")).to_contain_text("phone down", timeout=10_000)
        expect(card.locator("img")).to_be_hidden()
        expect(farm_page.locator(f"#pause-queue li.pause[data-serial='{victim}']")).to_have_count(0)

    # The run goes on: on the other phone (its sub-task again, from the start), or on the same
    # one once its worker is back; the page says which, and the person signs in there.
    moved = page.locator("#phone-lost li.moved")
    expect(moved.first).to_contain_text(" on ", timeout=60_000)
    expect(page.locator("#pause-banner")).to_contain_text("Gmail needs you", timeout=120_000)
    again = wait_until(lambda: _run_pauses(stack, run_id), 30, "the pause to take over")[0]
    # One notice names the phone it went on (a later one may say the dead phone is back as well).
    assert any(again["serial"] in text for text in moved.all_inner_texts()) or again["serial"] == victim
    expect(farm_page.locator(f"#pause-queue li.pause[data-serial='{again['serial']}']")).to_have_count(
        1, timeout=20_000)
    page.locator("#pause-banner #do-take-over").click()
    _sign_in(page, stack, again["serial"])

    expect(page.locator("#run-status")).to_contain_text("completed", timeout=180_000)
    report = page.frame_locator("#report-frame")
    expect(report.locator("header .apps li")).to_have_text(["Gmail: completed"], timeout=30_000)
    expect(page.locator("#citations figure img").first).to_be_visible()
    # The farm repaired the dead worker by itself.
    wait_until(lambda: stack.farm.registry.status(victim).heartbeat_alive, 60,
               "the monitor to start the dead worker again")
    assert not errors, errors
    assert told_s < TOLD_WITHIN_S
    with stack.client() as program:
        kinds = [e["kind"] for e in read_events(program, run_id)]
    assert kinds.index("phone_lost") < kinds.index("subtask_moved") < kinds.index("run_finished")
