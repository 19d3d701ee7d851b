"""A real stack for the API tests: Redis, SeaweedFS S3, Prefect (test harness), two virtual phones
with a worker each, the runner (``python -m flows.runner``) and the API (``python -m
droidretriever.api``) as processes, as ``droidretriever up`` runs them."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont
from playwright.sync_api import BrowserContext, sync_playwright

from core.config import RedisSettings, S3Settings, load_settings
from core.models import (
    AppMap,
    Bounds,
    Effect,
    MapElement,
    MapList,
    MapScreen,
    MapStats,
    PageType,
    WallKind,
)
from core.redis_client import open_redis
from deploy.farm import stop_processes
from droidretriever.testing import free_port
from droidretriever.testing.browser import CHROMIUM, CHROMIUM_ARGS
from droidretriever.testing.drawing import FONT_PATH
from storage import MapStore, ObjectStore
from tests.support.api import ApiStack, start_api, start_runner
from tests.support.farm import FarmProcesses, farm_env, run_farm
from tests.support.prefect import prefect_server
from tests.support.webhook import Webhook

GMAIL = "com.google.android.gm"


def log_gmail_out(stack: ApiStack) -> None:
    """Every phone as it booted (no text left in a field by an earlier test), Gmail logged out."""
    for serial in stack.farm.sim.serials:
        stack.farm.sim.control.reset("boot", serial)
        stack.farm.sim.control.set_logged_in(serial, GMAIL, False)


# A small app map as exploring a shop app would leave it: the first page, a deals list whose
# product pages share one template, a profile whose orders are behind a login wall, search
# results reached only by typing the probe term, and one element of each effect. A text line
# is markup, to show that map text reaches the page as text.
SHOP = "com.example.shop"
SHOP_VERSION = "2.1.0"
HOSTILE_TEXT = '<img src=x onerror="window.__injected=1">Free delivery'
HOME, DEALS, ME, RESULTS, PRODUCT, SIGN_IN = (
    "a1f0000000000001", "a1f0000000000002", "a1f0000000000003", "a1f0000000000004",
    "a1f0000000000005", "a1f0000000000006")


def _element(label: str, top: int, effect: Effect, leads_to: str = "", **extra: object) -> MapElement:
    return MapElement.model_validate({"label": label, "bounds": Bounds(left=40, top=top, right=1040, bottom=top + 120),
                                      "effect": effect, "leads_to": leads_to, **extra})


def shop_map() -> AppMap:
    """The map (see above)."""
    screens = [
        MapScreen(id=HOME, kind=PageType.HOME, title="Shop", depth=0, texts=("Shop", HOSTILE_TEXT, "Today's deals"),
                  elements=(
                      _element("Search pizza, sushi…", 120, Effect.OPENS, RESULTS, search=True),
                      _element("Deals", 300, Effect.OPENS, DEALS),
                      _element("Me", 2200, Effect.OPENS, ME),
                      _element("Add to cart", 600, Effect.REFUSED,
                               note="'Add to cart' would change the app's state (an order, a cart)"),
                      _element("Coupons", 800, Effect.SAME, note="No coupons today"),
                      _element("Dark mode", 1000, Effect.SWITCH),
                      _element("Gift cards", 1200, Effect.UNTRIED),
                  )),
        MapScreen(id=DEALS, kind=PageType.RESULTS_LIST, title="Deals", depth=1, path=(1,),
                  lists=(MapList(id="deals", items=12, samples=("Pizza Margherita | ¥30", "Sushi Set | ¥48")),),
                  elements=(_element("Pizza Margherita", 300, Effect.OPENS, PRODUCT, list_id="deals"),
                            _element("Sushi Set", 450, Effect.OPENS, PRODUCT, list_id="deals"))),
        MapScreen(id=ME, kind=PageType.SETTINGS, title="Me", depth=1, path=(2,), texts=("Me", "Orders", "Wallet"),
                  elements=(_element("Orders", 300, Effect.OPENS, SIGN_IN),
                            _element("Home", 2200, Effect.OPENS, HOME))),
        MapScreen(id=RESULTS, kind=PageType.RESULTS_LIST, title="Results for pizza", depth=1, path=(0,),
                  behind_search=True, texts=("3 results",)),
        MapScreen(id=PRODUCT, kind=PageType.DETAILS, title="Pizza Margherita", depth=2, path=(1, 0),
                  template=True, samples=("Sushi Set", "Ramen Bowl"), texts=("Pizza Margherita", "¥30", "Tomato, mozzarella")),
        MapScreen(id=SIGN_IN, kind=PageType.LOGIN, title="Sign in", depth=2, path=(2, 0), wall=WallKind.LOGIN,
                  wall_reason="the page asks for a password", expanded=True, texts=("Sign in", "Password")),
    ]
    return AppMap(package=SHOP, label="Shop", version=SHOP_VERSION, start=HOME, probe="pizza",
                  screens={s.id: s for s in screens}, complete=True,
                  stats=MapStats(actions=42, seconds=95.0, stopped="explored everything"), device="sim-1")


def draw_screen_png(title: str, lines: tuple[str, ...], colour: tuple[int, int, int]) -> bytes:
    """A plain phone screen: a coloured title bar and a few lines of text."""
    image = Image.new("RGB", (540, 960), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, 540, 130), fill=colour)
    draw.text((30, 45), title, font=ImageFont.truetype(FONT_PATH, 44), fill=(255, 255, 255))
    body = ImageFont.truetype(FONT_PATH, 30)
    for i, line in enumerate(lines[:8]):
        draw.rounded_rectangle((24, 170 + i * 100, 516, 250 + i * 100), radius=14, fill=(241, 245, 249))
        draw.text((44, 190 + i * 100), line[:28], font=body, fill=(30, 41, 59))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def store_shop_map(store: ObjectStore) -> AppMap:
    """Store :func:`shop_map` and a screenshot per screen through the map store, as a build does."""
    maps = MapStore(store)
    app_map = shop_map()
    colours = [(37, 99, 235), (234, 88, 12), (22, 163, 74), (100, 116, 139), (190, 24, 93), (124, 58, 237)]
    screens = {}
    for screen, colour in zip(app_map.screens.values(), colours, strict=True):
        lines = tuple(t for t in screen.texts[1:] if "<" not in t) or tuple(e.label for e in screen.elements) or ("…",)
        key = maps.save_screenshot(app_map.package, app_map.version, screen.id,
                                   draw_screen_png(screen.title, lines, colour))
        screens[screen.id] = screen.model_copy(update={"screenshot_key": key})
    app_map = app_map.model_copy(update={"screens": screens})
    maps.save(app_map)
    return app_map


CONFIRM_WINDOW_S = "3.0"  # long enough to see (and cancel) a planned action under load, short enough to run


@pytest.fixture()
def browser(tmp_path: Path) -> Iterator[BrowserContext]:
    """A headless Debian Chromium with its own profile, 1600x1000 (a test file may define its own)."""
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True,
            viewport={"width": 1600, "height": 1000})
        try:
            yield context
        finally:
            context.close()


@pytest.fixture(scope="package")
def api_prefect() -> Iterator[tuple[str, str]]:
    """A temporary Prefect server for the package, behind basic auth as the stack's: its API URL
    and the auth string (``user:password``)."""
    with prefect_server() as served:
        yield served


@pytest.fixture(scope="package")
def pause_webhook() -> Iterator[Webhook]:
    """Where the stack's pause webhook (api.pause_webhook) posts."""
    hook = Webhook()
    yield hook
    hook.close()


# Package scope: the phones' workers consume the session's Redis, so they must be gone before
# other packages' tests start their own workers on it.
@pytest.fixture(scope="package")
def api_stack(redis_url: str, s3_settings: S3Settings, api_prefect: tuple[str, str],
              pause_webhook: Webhook, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiStack]:
    if s3_settings.access_key is None or s3_settings.secret_key is None:
        raise RuntimeError("the session's S3 settings have no keys")
    prefect_url, prefect_auth = api_prefect
    open_redis(RedisSettings(url=redis_url)).flushdb()
    state_dir = tmp_path_factory.mktemp("api-state")
    port = free_port()
    env = {
        **farm_env(redis_url, state_dir),
        "DROIDRETRIEVER_S3__ENDPOINT": str(s3_settings.endpoint),
        "DROIDRETRIEVER_S3__BUCKET": "dr-api-stack",  # its own: other packages count their runs
        "DROIDRETRIEVER_S3__ACCESS_KEY": s3_settings.access_key,
        "DROIDRETRIEVER_S3__SECRET_KEY": s3_settings.secret_key.get_secret_value(),
        "DROIDRETRIEVER_PREFECT__API_URL": prefect_url,
        "DROIDRETRIEVER_PREFECT__AUTH_STRING": prefect_auth,
        "PREFECT_API_URL": prefect_url,
        "PREFECT_API_AUTH_STRING": prefect_auth,  # for processes that talk to Prefect directly
        "PREFECT_SERVER_ALLOW_EPHEMERAL_MODE": "false",
        "DROIDRETRIEVER_API__PORT": str(port),
        "DROIDRETRIEVER_BUDGETS__PAUSE_TIMEOUT_S": "240",
        "DROIDRETRIEVER_BUDGETS__CONFIRM_WINDOW_S": CONFIRM_WINDOW_S,
        "DROIDRETRIEVER_API__CONCURRENT_RUNS": "2",
        "DROIDRETRIEVER_API__PAUSE_WEBHOOK": pause_webhook.url,
    }
    patch = pytest.MonkeyPatch()
    for key, value in env.items():
        patch.setenv(key, value)
    settings = load_settings()
    process_env = {**os.environ, **env}
    try:
        with run_farm(FarmProcesses, state_dir, process_env, settings, phones=2,
                      monitor=False) as farm:
            runner = start_runner(state_dir, process_env)
            api = start_api(state_dir, process_env, settings.api.base_url)
            try:
                yield ApiStack(base=settings.api.base_url, settings=settings, env=process_env,
                               farm=farm, api=api, runner=runner)
            finally:
                stop_processes([api, runner], timeout_s=30)
    finally:
        patch.undo()
