"""App maps in a real headless Chromium (Debian's, nothing downloaded): the Maps page lists a stored
map and draws it (screens by depth, arrows labelled with the element that opened them, the wall in
red, the search-only screen dashed, the template's "+N like it"; a click shows a screen's texts and
elements with their effects), and a run page whose events say which map path the navigation
followed shows that map with the targets outlined and the followed screens numbered.

The map is stored through :class:`storage.MapStore` on the stack's object store and the run's
events are published on its Redis, as a build and a run leave them. Screenshots go to
``artifacts/dashboard/`` (``docs/images/dashboard-map.png`` and ``dashboard-run-map.png`` are
copies of them).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect, sync_playwright

from core.models import Query, RunEvent, RunEventKind, RunManifest, RunStatus, new_id
from core.redis_client import open_redis
from droidretriever.testing.browser import CHROMIUM, CHROMIUM_ARGS
from inference.maps import MapTrail
from storage import ManifestStore, RunEventPublisher, open_object_store
from tasks.navigate.attempt import MAP_ROUTE_LOG
from tests.api.conftest import (
    DEALS,
    HOME,
    HOSTILE_TEXT,
    ME,
    PRODUCT,
    RESULTS,
    SHOP,
    SHOP_VERSION,
    SIGN_IN,
    store_shop_map,
)
from tests.support.api import ApiStack

pytestmark = [pytest.mark.services, pytest.mark.slow]

ARTIFACTS = Path(os.environ.get("DROIDRETRIEVER_ARTIFACTS", "artifacts")) / "dashboard"
RED = "rgb(220, 38, 38)"


@pytest.fixture()
def browser(tmp_path: Path) -> Iterator[BrowserContext]:
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True,
            viewport={"width": 1440, "height": 1000})
        try:
            yield context
        finally:
            context.close()


def _all_thumbnails_loaded(page: Page, scope: str) -> None:
    page.wait_for_function(
        """scope => { const images = [...document.querySelectorAll(`${scope} .mscreen img`)];
           return images.length > 0 && images.every((i) => i.complete && i.naturalWidth > 0); }""",
        arg=scope, timeout=20_000)


def _route_event(run_id: str, attempt: int, line: str, trail: MapTrail) -> RunEvent:
    return RunEvent(run_id=run_id, kind=RunEventKind.LOG, subtask_id="shop-1",
                    message=f"{MAP_ROUTE_LOG} try {attempt}: {line}\n{trail.model_dump_json()}")


def test_the_maps_page_draws_a_stored_map_and_a_run_page_shows_the_path_it_followed(
    api_stack: ApiStack, browser: BrowserContext,
) -> None:
    store = open_object_store(api_stack.settings)
    store_shop_map(store)
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(api_stack.login_link())
    expect(page.locator("#question")).to_be_visible()

    # The list: the app, its version, screens and walls; its name opens the map.
    page.locator("nav a[data-page=maps]").click()
    row = page.locator(f"#maps tr[data-package='{SHOP}']")
    expect(row).to_contain_text(SHOP_VERSION)
    expect(row.locator("td").nth(3)).to_have_text("6")
    expect(row.locator("td").nth(4)).to_have_text("1")
    expect(row).to_contain_text("complete")
    row.get_by_role("link", name="Shop").click()

    # The graph: six screens in three columns by depth, the first page first.
    screens = page.locator(".appmap .mscreen")
    expect(screens).to_have_count(6)
    lefts = {i: page.locator(f".mscreen[data-screen='{i}']").evaluate("e => e.offsetLeft")
             for i in (HOME, DEALS, ME, RESULTS, PRODUCT, SIGN_IN)}
    assert lefts[HOME] < lefts[DEALS] == lefts[ME] == lefts[RESULTS] < lefts[PRODUCT] == lefts[SIGN_IN], lefts
    expect(page.locator(f".mscreen[data-screen='{HOME}'] .mark.start")).to_have_text("start")
    wall = page.locator(f".mscreen[data-screen='{SIGN_IN}']")
    expect(wall.locator(".mark.wall")).to_have_text("wall: login")
    assert wall.locator(".mthumb").evaluate("e => getComputedStyle(e).borderTopColor") == RED
    searched = page.locator(f".mscreen[data-screen='{RESULTS}']")
    assert searched.locator(".mthumb").evaluate("e => getComputedStyle(e).borderTopStyle") == "dashed"
    expect(page.locator(f".mscreen[data-screen='{PRODUCT}'] .mark.like")).to_have_text("+2 like it")
    # An arrow per screen opened, labelled with the element (two items to one product page: "+1");
    # the profile's "Home" leads back and is drawn only on demand.
    labels = page.locator(".appmap .edge-label")
    expect(labels).to_have_count(5)
    expect(labels.filter(has_text="Deals")).to_have_count(1)
    expect(labels.filter(has_text=re.compile(r"^Pizza Margherita \+1$"))).to_have_count(1)
    expect(labels.filter(has_text="Orders")).to_have_count(1)
    expect(page.locator(".appmap .edge.back")).to_be_hidden()
    page.locator("#back-links").check()
    expect(page.locator(".appmap .edge.back")).to_be_visible()
    page.locator("#back-links").uncheck()
    _all_thumbnails_loaded(page, ".appmap")

    # The first page is shown in detail: its texts (markup stays text) and each element's effect.
    detail = page.locator(".appmap-detail")
    expect(detail.locator("h3")).to_have_text("Shop")
    expect(detail.locator(".mtexts")).to_contain_text(HOSTILE_TEXT)
    assert page.evaluate("window.__injected") is None
    assert page.locator(".appmap-detail .mtexts img").count() == 0
    effects = detail.locator(".melements tr")
    expect(effects.filter(has_text="Deals")).to_contain_text("opens Deals")
    expect(effects.filter(has_text="Add to cart")).to_contain_text("refused: 'Add to cart' would change")
    expect(effects.filter(has_text="Coupons")).to_contain_text("shows “No coupons today”")
    expect(effects.filter(has_text="Dark mode")).to_contain_text("switch")
    expect(effects.filter(has_text="Gift cards")).to_contain_text("untried")
    effects.filter(has_text="Me").get_by_role("button", name="opens Me").click()
    expect(detail.locator("h3")).to_have_text("Me")
    expect(detail.locator(".melements")).to_contain_text("opens Sign in")
    page.locator(f".mscreen[data-screen='{SIGN_IN}']").click()
    expect(detail.locator(".wall-note")).to_contain_text("Wall (login): the page asks for a password")
    page.locator(f".mscreen[data-screen='{DEALS}']").click()
    expect(detail).to_contain_text("12 item(s)")
    page.locator(f".mscreen[data-screen='{HOME}']").click()
    expect(detail.locator("h3")).to_have_text("Shop")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "app-map.png"))

    # A run whose second try followed the map to the orders' sign-in wall.
    run_id = new_id("run")
    ManifestStore(store).write(RunManifest(run_id=run_id, status=RunStatus.COMPLETED,
                                           query=Query(text="Where are my orders in Shop?", apps=("Shop",))))
    publisher = RunEventPublisher(open_redis(api_stack.settings.redis), store)
    publisher.publish(RunEvent(run_id=run_id, kind=RunEventKind.RUN_STARTED, message="Where are my orders in Shop?"))
    publisher.publish(_route_event(run_id, 1, "targets 'Sign in'; followed 'Shop' > 'Deals'", MapTrail(
        package=SHOP, version=SHOP_VERSION, targets=(SIGN_IN,), followed=(HOME, DEALS))))
    publisher.publish(_route_event(run_id, 2, "targets 'Sign in'; followed 'Shop' > 'Me' > 'Sign in'", MapTrail(
        package=SHOP, version=SHOP_VERSION, targets=(SIGN_IN,), followed=(HOME, ME, SIGN_IN))))
    publisher.publish(RunEvent(run_id=run_id, kind=RunEventKind.RUN_FINISHED, message="completed"))
    page.goto(f"{api_stack.base}/#/runs/{run_id}")
    panel = page.locator("#run-map")
    expect(panel).to_be_visible()
    expect(panel.locator(".tab")).to_have_text(["Shop"])
    expect(panel.locator("#run-map-line")).to_have_text("try 2: targets 'Sign in'; followed 'Shop' > 'Me' > 'Sign in'")
    followed = panel.locator(".mscreen.followed")
    expect(followed).to_have_count(3)
    for screen_id, number in ((HOME, "1"), (ME, "2"), (SIGN_IN, "3")):
        expect(panel.locator(f".mscreen[data-screen='{screen_id}'] .order")).to_have_text(number)
    expect(panel.locator(".mscreen.target")).to_have_count(1)
    expect(panel.locator(f".mscreen[data-screen='{SIGN_IN}']")).to_have_class(re.compile(r"\btarget\b"))
    expect(panel.locator(".edge.walked")).to_have_count(2)
    _all_thumbnails_loaded(page, "#run-map")
    panel.scroll_into_view_if_needed()
    panel.screenshot(path=str(ARTIFACTS / "run-map.png"))
    # The first try is one click away.
    panel.get_by_role("button", name="try 1").click()
    expect(panel.locator(".mscreen.followed")).to_have_count(2)
    expect(panel.locator(f".mscreen[data-screen='{DEALS}'] .order")).to_have_text("2")
    expect(panel.locator(".edge.walked")).to_have_count(1)
    # The event log shows the people's line, not the JSON.
    log = page.locator("#event-log").text_content() or ""
    assert "app map try 2: targets 'Sign in'" in log and '"followed"' not in log
    assert not errors, errors
