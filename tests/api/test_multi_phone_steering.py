"""Steering a run on two phones from the run page, in a real headless Chromium (Debian's).

"Is a Big Mac cheaper on Meituan or Ele.me?" runs one app on each virtual phone at once. The
run page lists both phones, each labelled with its app and sub-task; the person picks the
second one, pauses it, reloads the page (the status still says paused), takes it over, saves
its screen and gives it back; every command names that phone and the run finishes. On a
one-app run the planned action's countdown shows with a Cancel button that never covers the
action's target; Cancel stops the action before it is done. Screenshots go to
``artifacts/multi_phone/`` (and ``$DROIDRETRIEVER_SHOTS``, when set, for a person to look at).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, FloatRect, Page, expect

from tests.support.api import ApiStack, read_events, wait_for_event
from tests.support.farm import wait_until

# A whole two-app run with 2 s confirm windows while watched, on a loaded host: more than 300 s.
pytestmark = [pytest.mark.services, pytest.mark.slow, pytest.mark.timeout(900)]

ARTIFACTS = Path(os.environ.get("DROIDRETRIEVER_ARTIFACTS", "artifacts")) / "multi_phone"
TWO_APPS = "Is a Big Mac cheaper on Meituan or Ele.me?"
ONE_APP = "Which permissions does Meituan have?"


def _shot(page: Page, name: str) -> None:
    folders = [ARTIFACTS] + ([Path(os.environ["DROIDRETRIEVER_SHOTS"])]
                             if os.environ.get("DROIDRETRIEVER_SHOTS") else [])
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(folder / f"{name}.png"))


def _ask(page: Page, stack: ApiStack, question: str) -> str:
    page.goto(stack.login_link())
    expect(page.locator("#question")).to_be_visible()
    page.locator("#question").fill(question)
    page.locator("#ask").click()
    page.wait_for_url("**/#/runs/run-*")
    return str(page.evaluate("window.droidretriever.run.id"))


def _finish(stack: ApiStack, run_id: str) -> dict[str, Any]:
    """Stop the run if it still runs (the next test needs the phones) and wait for its end."""
    with stack.client() as program:
        if not program.get(f"/runs/{run_id}/control").json()["finished"]:
            program.post(f"/runs/{run_id}/control", json={"action": "stop"})
        wait_for_event(program, run_id, "run_finished", 240)
        return dict(program.get(f"/runs/{run_id}").json())


def _boxes_meet(a: FloatRect | None, b: FloatRect | None) -> bool:
    if a is None or b is None:
        return False
    return (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])


def _fresh_page(api_stack: ApiStack, browser: BrowserContext) -> tuple[Page, list[str]]:
    """A page on a freshly booted phone, and the script errors it raises (none expected)."""
    api_stack.farm.sim.control.reset("boot")
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return page, errors


def test_pause_take_over_and_save_on_the_second_phone_of_a_two_app_run(
    api_stack: ApiStack, browser: BrowserContext,
) -> None:
    page, errors = _fresh_page(api_stack, browser)
    run_id = _ask(page, api_stack, TWO_APPS)
    try:
        phones = page.locator("#run-phones .run-phone")
        expect(phones).to_have_count(2, timeout=120_000)
        wait_until(lambda: sorted(phones.locator("strong").all_inner_texts()) == ["Ele.me", "Meituan"],
                   30, "both phones labelled with their apps", interval_s=0.2)
        expect(page.locator("#follow-acting")).to_have_attribute("aria-pressed", "true")
        _shot(page, "multi_two_phones")

        second = phones.nth(1)
        serial = str(second.get_attribute("data-serial"))
        app = second.locator("strong").inner_text()
        second.click()
        expect(second).to_have_attribute("aria-pressed", "true")
        expect(page.locator("#follow-acting")).to_have_attribute("aria-pressed", "false")
        expect(page.locator("#live-phone")).to_contain_text(app)
        expect(page.locator("#live-phone")).to_contain_text(serial)
        assert page.evaluate("window.droidretriever.live.serial") == serial

        page.locator("#do-pause").click()
        expect(page.locator("#pause-banner")).to_contain_text(f"Paused on {app} on {serial}")
        expect(page.locator("#run-status")).to_have_text("paused")
        expect(second).to_have_attribute("data-doing", "paused")
        with api_stack.client() as program:
            steering = program.get(f"/runs/{run_id}/control").json()
        assert (steering["mode"], steering["serial"], steering["status"]) == ("paused", serial, "paused"), steering

        # A reload while paused: the pill says paused, not running, and stays so.
        page.reload()
        expect(page.locator("#run-status")).to_have_text("paused", timeout=20_000)
        page.wait_for_function("window.droidretriever && window.droidretriever.run.shown.length > 5")
        page.wait_for_timeout(2500)  # the event replay and a poll of the steering state
        expect(page.locator("#run-status")).to_have_text("paused")
        expect(page.locator("#pause-banner")).to_contain_text(f"Paused on {app} on {serial}")
        assert page.evaluate("window.droidretriever.live.serial") == serial  # the phone I steer
        _shot(page, "multi_paused_after_reload")

        page.locator("#do-take-over").click()
        expect(page.locator("#takeover")).to_be_visible(timeout=30_000)
        expect(page.locator("#pause-banner")).to_contain_text(f"You drive {app} on {serial}")
        page.locator("#do-save_screen").click()
        with api_stack.client() as program:
            saved = wait_for_event(program, run_id, "capture_saved", 60)
        _shot(page, "multi_taken_over")
        page.locator("#do-resume").click()
        expect(page.locator("#takeover")).to_be_hidden()
        with api_stack.client() as program:
            wait_for_event(program, run_id, "run_finished", 240)
    finally:
        run = _finish(api_stack, run_id)
    with api_stack.client() as program:
        events = read_events(program, run_id)
    started = {e["subtask_id"]: e["message"] for e in events if e["kind"] == "subtask_started"}
    assert started[saved["subtask_id"]].startswith(f"{app}:"), started  # saved on the second phone
    assert saved["capture"]["source"] == "user"
    controls = [e["message"] for e in events if e["kind"] == "control"]
    assert controls[:4] == [f"paused the copilot on {serial}", f"took over {serial}",
                            f"asked to save the screen of {serial}", f"back to auto on {serial}"]
    assert run["manifest"]["status"] == "completed", run["manifest"]
    assert not errors, errors


def test_the_preview_counts_down_beside_its_target_and_cancel_stops_the_action(
    api_stack: ApiStack, browser: BrowserContext,
) -> None:
    page, errors = _fresh_page(api_stack, browser)
    run_id = _ask(page, api_stack, ONE_APP)
    try:
        banner, target = page.locator(".screen-banner"), page.locator(".preview-box")
        expect(page.locator("#cancel-action")).to_be_visible(timeout=120_000)
        expect(page.locator("#preview-countdown")).to_contain_text(" s")
        assert not _boxes_meet(banner.bounding_box(), target.bounding_box() if target.is_visible() else None)
        _shot(page, "multi_preview")
        page.locator("#cancel-action").click()
        expect(page.locator("#pause-banner")).to_contain_text("Paused on", timeout=10_000)
        expect(page.locator("#run-status")).to_have_text("paused")
        page.locator("#do-resume").click()
        with api_stack.client() as program:
            wait_for_event(program, run_id, "resumed", 30)
            logs = [e["message"] for e in read_events(program, run_id) if e["kind"] == "log"]
        assert any("not done, a person steered the phone during the confirm window" in m
                   for m in logs), logs
        with api_stack.client() as program:
            wait_for_event(program, run_id, "run_finished", 240)
        # Wherever a target is, low, high or the whole screen, the banner is not on it: placed from
        # the page's script once the run has ended (no event of it clears a preview any more) and
        # measured after the box's .15 s move.
        page.wait_for_function("() => window.droidretriever.live.canvas.height >= 1000", timeout=60_000)
        for box in ({"left": 40, "top": 2000, "right": 1040, "bottom": 2300},
                    {"left": 40, "top": 40, "right": 1040, "bottom": 300},
                    {"left": 0, "top": 0, "right": 1080, "bottom": 2340}):
            placed = page.evaluate("""async box => {
                const live = window.droidretriever.live;
                live.showPreview({instruction: "Tap [x]", box, window_s: 60}, () => {});
                await new Promise((done) => setTimeout(done, 500));
                const rect = (el) => { const r = el.getBoundingClientRect();
                                       return {x: r.x, y: r.y, width: r.width, height: r.height}; };
                const cancel = live.banner.querySelector("#cancel-action");
                return {banner: rect(live.banner), target: rect(live.box),
                        shown: !live.banner.hidden && !live.box.hidden,
                        cancel: cancel !== null && cancel.getClientRects().length > 0};
            }""", box)
            assert placed["shown"] and placed["cancel"], (box, placed)
            assert placed["target"]["width"] > 0 and placed["banner"]["width"] > 0, (box, placed)
            assert not _boxes_meet(placed["banner"], placed["target"]), (box, placed)
    finally:
        _finish(api_stack, run_id)
    assert not errors, errors
