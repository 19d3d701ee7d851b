"""The whole path in a real headless Chromium (Debian's, nothing downloaded): a person asks,
watches, answers a login pause by remote control, and reads the cited report, all in the page.

Gmail is logged out on the virtual phones. The page is opened from a one-time login link; the
question is asked on the ask page; the checklist and the exploration map fill; the login pause
rings (a notification and a chime made in the page) and shows in the farm's pause queue, whose
"Take over" opens the run with the phone in the person's hands; the person signs in by clicking
the live screen and typing; back to auto, the copilot goes on from the inbox, previewing each
action (its box on the live screen, the confirm window's countdown); a citation of the report
opens its highlighted evidence. Each stage is saved as a screenshot under ``artifacts/dashboard/``.

The page's Notification is replaced by a recording double (headless Chromium shows none) and its
oscillators are counted; nothing else is faked.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect, sync_playwright

from droidretriever.testing.browser import CHROMIUM
from droidretriever.testing.browser import CHROMIUM_ARGS as BROWSER_ARGS
from tests.api.conftest import GMAIL, log_gmail_out
from tests.inference.test_asr import speak
from tests.support.api import ApiStack
from tests.support.phone import find_on_screen

pytestmark = [pytest.mark.services, pytest.mark.slow]

CHROMIUM_ARGS = [*BROWSER_ARGS, "--autoplay-policy=no-user-gesture-required"]  # the chime plays
ARTIFACTS = Path(os.environ.get("DROIDRETRIEVER_ARTIFACTS", "artifacts")) / "dashboard"

# Test doubles installed before the page's scripts: a Notification that records what it was
# asked to show, and a count of the oscillators the chime starts.
RECORDERS = """
window.__notified = [];
window.__tones = [];
window.Notification = class RecordingNotification {
  constructor(title, options) { window.__notified.push({ title, body: (options || {}).body || "" }); }
  static get permission() { return "granted"; }
  static requestPermission() { return Promise.resolve("granted"); }
};
const start = OscillatorNode.prototype.start;
OscillatorNode.prototype.start = function (...args) { window.__tones.push(this.frequency.value); return start.apply(this, args); };
"""


@pytest.fixture()
def browser(tmp_path: Path) -> Iterator[BrowserContext]:
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True,
            viewport={"width": 1600, "height": 1000})
        context.add_init_script(RECORDERS)
        try:
            yield context
        finally:
            context.close()


def _shot(page: Page, name: str, *, full: bool = False) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=full)


def _click_on_phone(page: Page, stack: ApiStack, serial: str, label: str) -> None:
    """Click the live screen where the phone shows ``label`` (as a person aims at what they see)."""
    point, (width, height) = find_on_screen(
        serial, stack.farm.sim.port, lambda e: label.casefold() in (e.label or "").casefold(), label)
    screen = page.locator("canvas.screen")
    box = screen.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] * point.x / width, box["y"] + box["height"] * point.y / height)
    page.wait_for_timeout(400)


def test_ask_watch_take_over_a_login_pause_and_read_the_cited_report(
    api_stack: ApiStack, browser: BrowserContext,
) -> None:
    sim = api_stack.farm.sim
    log_gmail_out(api_stack)
    email, secret = f"dr-{secrets.token_hex(3)}@example.com", f"pw-{secrets.token_hex(5)}"
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(api_stack.login_link())
        expect(page.locator("#question")).to_be_visible()  # the dashboard's script is running
        page.locator("#alerts").click()  # a person's click: the page may ring and notify
        expect(page.locator("#alerts")).to_have_text("◉ alerts on")
        page.locator("#question").fill("What is my latest email in Gmail?")
        _shot(page, "01-ask")
        page.locator("#ask").click()

        # The run's page: the plan's checklist and the exploration map fill as the copilot goes.
        page.wait_for_url("**/#/runs/run-*")
        expect(page.locator("#checklist li.item")).to_have_count(1, timeout=60_000)
        expect(page.locator("#checklist li.item strong")).to_have_text("Gmail")
        expect(page.locator(".map .shot").first).to_be_visible(timeout=60_000)

        # The login wall: a notification and a chime, the banner, and the farm's pause queue.
        expect(page.locator("#pause-banner")).to_contain_text("Gmail needs you", timeout=120_000)
        expect(page.locator("#checklist li.item")).to_have_attribute("data-status", "needs_user")
        _shot(page, "02-login-pause")
        notified = page.evaluate("window.__notified")
        assert [n["title"] for n in notified] == ["Gmail needs you"], notified
        assert "password" in notified[0]["body"]
        assert len(page.evaluate("window.__tones")) >= 2  # the two notes of the chime
        page.locator("nav a[data-page=farm]").click()
        queue = page.locator("#pause-queue li.pause")
        expect(queue).to_have_count(1)
        expect(queue).to_contain_text("Gmail")
        expect(page.locator("#pause-badge")).to_have_text("1")
        phones = page.locator("#phones article.phone")
        expect(phones).to_have_count(2)
        expect(phones.filter(has_text="paused for user")).to_have_count(1)
        expect(phones.filter(has_text="in front: Gmail")).to_have_count(1)
        expect(phones.locator("img[src^='blob:']")).to_have_count(2)  # live frames, not stills
        _shot(page, "03-pause-queue")
        queue.get_by_role("link", name="Take over").click()

        # Takeover: the person signs in by clicking the live screen and typing.
        expect(page.locator("#takeover")).to_be_visible(timeout=20_000)
        serial = page.evaluate("window.droidretriever.live.serial")
        expect(page.locator("#live-stats")).to_contain_text("frames/s")
        _click_on_phone(page, api_stack, serial, "Email")
        page.locator("#takeover-text").fill(email)
        page.locator("#takeover-type").click()
        _click_on_phone(page, api_stack, serial, "password")
        page.locator("#takeover-text").fill(secret)
        page.locator("#takeover-type").click()
        page.wait_for_timeout(800)
        _shot(page, "04-takeover")
        _click_on_phone(page, api_stack, serial, "Next")
        expect(page.locator(".map .shot.intervened")).to_have_count(5, timeout=20_000)
        taps = page.evaluate("window.droidretriever.live.metrics.taps")
        assert len(taps) >= 3 and all(0 < t < 5000 for t in taps), taps

        # Back to auto: each planned action shows its box and the confirm window before it runs.
        page.locator("#do-resume").click()
        expect(page.locator("#takeover")).to_be_hidden()
        preview = page.locator(".screen-banner")
        expect(page.locator(".preview-box")).to_be_visible(timeout=60_000)
        expect(preview).to_contain_text("next: ")
        expect(preview.locator(".countdown")).to_contain_text(" s")
        _shot(page, "05-preview")

        # The report at the bottom; a citation opens its highlighted evidence.
        expect(page.locator("#run-status")).to_contain_text("completed", timeout=180_000)
        expect(page.locator("#checklist li.item")).to_have_attribute("data-status", "completed")
        expect(page.locator(".map .shot.captured").first).to_be_visible()
        report = page.frame_locator("#report-frame")
        expect(report.locator("header .apps li")).to_have_text(["Gmail: completed"], timeout=30_000)
        expect(page.locator("#citations figure img").first).to_be_visible()
        _shot(page, "06-map-and-phone")
        page.locator("#report").scroll_into_view_if_needed()
        cite = report.locator("a.cite").first
        target = cite.get_attribute("href")
        assert target is not None and target.startswith("#hl-")
        cite.click()
        expect(report.locator(target)).to_be_visible()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.locator("#report").screenshot(path=str(ARTIFACTS / "07-cited-report.png"))
        _shot(page, "08-run-page", full=True)
        log = page.locator("#event-log").inner_text()
        assert email not in log and secret not in log
        assert not errors, errors
    finally:
        for serial in sim.serials:
            sim.control.set_logged_in(serial, GMAIL, True)


def test_a_spoken_question_is_heard_corrected_and_asked(api_stack: ApiStack, tmp_path: Path) -> None:
    """Chromium's fake microphone plays an espeak recording; the page records it as WAV, shows
    what the offline engine heard (and says it is rough), the person corrects it and asks."""
    recording = tmp_path / "question.wav"
    speak("Which permissions does Meituan have?", recording)
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, headless=True,
            args=[*CHROMIUM_ARGS, "--use-fake-ui-for-media-stream",
                  "--use-fake-device-for-media-stream", f"--use-file-for-fake-audio-capture={recording}"])
        context.grant_permissions(["microphone"], origin=api_stack.base)
        page = context.new_page()
        page.on("dialog", lambda dialog: dialog.accept())
        try:
            page.goto(api_stack.login_link())
            expect(page.locator("#question")).to_be_visible()
            page.locator("#record").click()
            expect(page.locator("#record")).to_have_text("■ stop")
            page.wait_for_timeout(3500)
            page.locator("#record").click()
            heard = page.locator("#heard")
            expect(heard).to_contain_text("Heard:", timeout=60_000)
            expect(heard).to_contain_text("pocketsphinx")
            expect(heard.locator(".pill")).to_have_text("offline engine: low accuracy")
            said = page.locator("#heard-text").inner_text()
            assert said and page.locator("#question").input_value() == said
            page.locator("#question").fill("Which permissions does Meituan have?")
            page.locator("#ask").click()
            page.wait_for_url("**/#/runs/run-*")
            expect(page.locator("#run-heard")).to_contain_text(said)
            expect(page.locator("#run-heard")).to_contain_text(
                "corrected to “Which permissions does Meituan have?”")
            _shot(page, "09-heard-and-corrected")
            page.locator("#do-stop").click(timeout=60_000)  # no need to run it through
            expect(page.locator("#run-status")).to_contain_text("stopped", timeout=120_000)
            # The run is in the list of runs, and a subscription can be made from a question.
            page.locator("nav a[data-page=runs]").click()
            expect(page.locator("table.runs tbody tr").first).to_contain_text(
                "Which permissions does Meituan have?")
            page.locator("nav a[data-page=subscriptions]").click()
            page.locator("#sub-question").fill("Big Mac price on Ele.me")
            page.locator("form.row button[type=submit]").click()
            row = page.locator("tbody tr", has_text="Big Mac price on Ele.me")
            expect(row).to_contain_text("every 1 h")
            row.get_by_role("button", name="pause").click()
            expect(row).to_contain_text("paused")
            row.get_by_role("button", name="delete").click()
            expect(row).to_have_count(0)
        finally:
            context.close()
