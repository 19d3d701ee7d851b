"""A stopped run tells the truth, in a real headless Chromium (Debian's): a person pauses the
copilot from the run's page, saves the screen, stops the run; the status says ``stopped``, the
report opens with its partial banner, names the app as stopped (never completed) and lists what
the person did, with time and phone; the "Prefect run" link opens Prefect's login first."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.support.api import ApiStack

pytestmark = [pytest.mark.services, pytest.mark.slow]

ARTIFACTS = Path(os.environ.get("DROIDRETRIEVER_ARTIFACTS", "artifacts")) / "dashboard"


def _shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


@pytest.mark.timeout(900)  # the stack starts first; on a busy 2-core host that takes minutes
def test_a_stopped_run_is_stopped_and_its_report_is_partial_and_names_the_person(
        api_stack: ApiStack, browser: BrowserContext) -> None:
    sim = api_stack.farm.sim
    for serial in sim.serials:
        sim.control.reset("boot", serial)
        sim.control.slow_screenshot(serial, 1.5)  # the copilot is mid-way when the person acts
    page = browser.new_page()
    page.on("dialog", lambda dialog: dialog.accept())  # "Stop the run and report ...?"
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(api_stack.login_link())
        page.locator("#question").fill("Which permissions does Meituan have?")
        page.locator("#ask").click()
        page.wait_for_url("**/#/runs/run-*")
        # Pause is offered once a sub-task runs on a phone.
        page.locator("#do-pause").click(timeout=240_000)
        expect(page.locator("#do-resume")).to_be_visible(timeout=20_000)
        page.locator("#do-stop").click()
        expect(page.locator("#run-status")).to_contain_text("stopped", timeout=120_000)
        _shot(page, "10-stopped-run")

        report = page.frame_locator("#report-frame")
        expect(report.locator("#partial")).to_contain_text("Partial report", timeout=30_000)
        expect(report.locator("#partial")).to_contain_text("a person stopped the run")
        statuses = report.locator("header .apps li").all_inner_texts()
        assert statuses and not any(s.endswith(": completed") for s in statuses), statuses
        people = report.locator("#people li")
        expect(people.filter(has_text="paused the copilot on emulator-")).to_have_count(1)
        expect(people.filter(has_text="asked to stop and report")).to_have_count(1)
        first = people.first.inner_text()
        assert " UTC · emulator-" in first and "browser " in first, first  # time, phone, who
        page.locator("#report").scroll_into_view_if_needed()
        page.locator("#report").screenshot(path=str(ARTIFACTS / "11-partial-report.png"))

        # The Prefect link goes through Prefect's login, then to this run.
        link = page.get_by_role("link", name="Prefect run").get_attribute("href")
        assert link is not None
        parts = urlsplit(link)
        assert parts.path == "/login", link
        assert parse_qs(parts.query)["redirect"][0].startswith("/runs/flow-run/"), link
        assert not errors, errors
    finally:
        for serial in sim.serials:
            sim.control.clear_faults(serial)
