"""report.html in a real headless Chromium: a citation click shows its box on the capture."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from core.models import AppStatus, Capture, Query, Report, SubTaskStatus
from droidretriever.testing import DrawnCapture
from droidretriever.testing.browser import CHROMIUM, CHROMIUM_ARGS
from tasks.synthesis.evidence import FolderStore
from tasks.synthesis.report import build_report, publish_report, synthesize_report

APPS = (
    AppStatus(app_label="Meituan", package="com.sankuai.meituan", status=SubTaskStatus.COMPLETED),
    AppStatus(app_label="Ele.me", package="me.ele", status=SubTaskStatus.COMPLETED),
    AppStatus(app_label="McDonald's", package="com.mcdonalds.gma.cn",
              status=SubTaskStatus.NEEDS_USER, reason="login required"),
    AppStatus(app_label="KFC", package="com.yek.android.kfc.activitys", status=SubTaskStatus.FAILED,
              reason="the app crashed twice"),
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    opened = context.new_page()
    yield opened
    context.close()


def open_report(page: Page, report: Report, captures: list[Capture], store: FolderStore) -> None:
    files = publish_report(report, captures, store)
    page.goto((store.root / files.html_key).resolve().as_uri())


def test_citation_click_highlights_the_box(page: Page, meituan: DrawnCapture, eleme: DrawnCapture,
                                           store: FolderStore, tmp_path: Path) -> None:
    captures = [meituan.capture, eleme.capture]
    report = synthesize_report(run_id="run-html", query=Query(text="Big Mac price on Meituan vs Ele.me"),
                               captures=captures, apps=APPS, store=store, threshold=0.8)
    open_report(page, report, captures, store)

    statuses = page.locator("header .apps li").all_inner_texts()
    assert statuses[:2] == ["Meituan: completed", "Ele.me: completed"]
    assert statuses[2] == "McDonald's: needs person: login required"
    assert statuses[3].startswith("KFC: failed")
    assert page.locator(".hl:visible").count() == 0

    # The Ele.me price cell of the comparison table: the second column of the Price row.
    link = page.locator("article table tr", has_text="Price").locator("td").nth(2).locator("a.cite")
    href = link.get_attribute("href")
    assert href is not None and href.startswith("#hl-")
    index = int(href.removeprefix("#hl-"))
    assert report.citations[index].capture_id == eleme.capture.id
    assert "¥26.0" in report.citations[index].quote
    link.click()

    highlight = page.locator(f"#hl-{index}")
    highlight.wait_for(state="visible")
    assert page.locator(".hl:visible").count() == 1
    image = page.locator(f"#cap-{eleme.capture.id} img")
    hl_box, img_box = highlight.bounding_box(), image.bounding_box()
    assert hl_box is not None and img_box is not None
    scale = img_box["width"] / eleme.capture.width
    expected = eleme.boxes["Big Mac Meal ¥26.0 Sold 2k+"]
    assert abs(hl_box["x"] - (img_box["x"] + expected.left * scale)) < 2
    assert abs(hl_box["y"] - (img_box["y"] + expected.top * scale)) < 2
    assert abs(hl_box["width"] - expected.width * scale) < 2
    assert abs(hl_box["height"] - expected.height * scale) < 2
    # Scrolled into view inside the evidence pane.
    pane = page.locator("aside").bounding_box()
    assert pane is not None
    assert pane["y"] <= hl_box["y"] and hl_box["y"] + hl_box["height"] <= pane["y"] + pane["height"]
    assert page.evaluate("location.hash") == f"#hl-{index}"

    # A citation further down the Meituan capture moves the highlight there.
    other = next(i for i, c in enumerate(report.citations) if "满30减5" in c.quote)
    page.locator(f"#ref-{other}").click()
    page.locator(f"#hl-{other}").wait_for(state="visible")
    assert page.locator(".hl:visible").count() == 1
    page.screenshot(path=str(tmp_path / "report-citation.png"))
    assert (tmp_path / "report-citation.png").stat().st_size > 10_000


def test_unverified_citations_are_shown_and_markup_is_inert(
        page: Page, meituan: DrawnCapture, store: FolderStore) -> None:
    markdown = ("# Answer\n\nBig Mac ¥25.5 [cap-meituan-1(¥25.5)], free fries [cap-meituan-1(free fries)], "
                "seen elsewhere [cap-ghost(¥1)].\n\n<img src=x onerror=\"document.title='pwned'\">\n"
                "[click](javascript:alert(1))\n")
    report = build_report(run_id="run-unv", query=Query(text="Big Mac"), markdown=markdown,
                          captures=[meituan.capture], apps=APPS[:1], synthesizer="llm:test-double",
                          threshold=0.8)
    assert [c.grounded for c in report.citations] == [True, False, False]
    open_report(page, report, [meituan.capture], store)

    assert page.title() == "Big Mac"
    assert page.locator("article img").count() == 0
    assert page.locator("a[href^='javascript']").count() == 0
    assert page.locator("a.cite.unverified").count() == 2
    page.locator("#ref-2").click()
    entry = page.locator("#unv-2")
    entry.wait_for(state="visible")
    assert "no capture with that id" in entry.inner_text()
    assert "no text on that capture matches it" in page.locator("#unv-1").inner_text()
    assert "1 of 3 citations grounded" in page.locator("header .meta").inner_text()
