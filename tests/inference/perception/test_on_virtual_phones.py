"""Perception on the virtual phones: what the copilot sees through adbutils, end to end.

Every screen is observed as a driver does it (``screencap -p`` + ``uiautomator dump``
over the simulator's ADB server) and perceived by the real :class:`Perceiver`. Only the
three example apps of the sim's format document are installed (settings, mcdonalds,
meituan), so the catalog other engineers are still writing cannot move these tests.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator

import adbutils
import pytest
from pydantic import BaseModel, ConfigDict

from core.config import PerceptionSettings
from core.models import Bounds, ElementSource
from device_farm.sim import SimServer
from droidretriever.testing import observe_with_adbutils
from inference.perception import (
    CachedOcrEngine,
    Observation,
    Perceiver,
    Perception,
    RapidOcrEngine,
    Redactor,
    describe_screen,
    ground_instruction,
)
from tests.support.example_apps import example_catalog

_MEITUAN = "com.sankuai.meituan"
_DIALOG_IDS = ('resource-id="android:id/parentPanel"', "permissioncontroller:id/grant_dialog")
_TOUR = ("launcher", "meituan_home", "search_results", "store", "permissions")


class Tour(BaseModel):
    """Observations of one walk through the phone, keyed by screen name."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    screens: dict[str, Observation]
    # The same screens observed again after a change that must not matter.
    home_revisited: Observation  # opened a store page and came back (re-rendered)
    home_scrolled: Observation  # scrolled down ...
    home_scrolled_back: Observation  # ... and back up
    store_later: Observation  # the store page ten minutes later: the status-bar clock moved


def tap(device: adbutils.AdbDevice, perception: Perception, instruction: str) -> None:
    """Tap what a "Tap [label]" instruction grounds to on the perceived screen."""
    target = ground_instruction(perception.screen.elements, instruction)
    device.click(target.point.x, target.point.y)


def dismiss_dialogs(device: adbutils.AdbDevice) -> None:
    """Close launch pop-ups (ads, permission prompts) the seed may show."""
    for _ in range(3):
        if not any(marker in device.dump_hierarchy() for marker in _DIALOG_IDS):
            return
        device.keyevent("BACK")


def type_text(device: adbutils.AdbDevice, text: str) -> None:
    """Type into the focused field through ADB Keyboard's broadcast (Unicode-safe)."""
    device.shell(["am", "broadcast", "-a", "ADB_INPUT_TEXT", "--es", "msg", text])


def node_bounds(xml: str, text: str) -> Bounds:
    """The bounds of the dump's node whose text is exactly ``text``."""
    for node in ET.fromstring(xml.encode()).iter("node"):
        if node.get("text") == text:
            return Bounds.parse(node.get("bounds", ""))
    raise LookupError(f"no node reads {text!r} in this dump")


@pytest.fixture(scope="module")
def sim() -> Iterator[SimServer]:
    with SimServer(phones=1, port=0, seed=7, catalog=example_catalog()) as server:
        yield server


@pytest.fixture()
def device(sim: SimServer) -> adbutils.AdbDevice:
    """The phone, back at its boot state."""
    sim.control.reset("boot")
    return adbutils.AdbClient("127.0.0.1", sim.port).device(sim.serials[0])


@pytest.fixture(scope="module")
def perceiver() -> Perceiver:
    return Perceiver(PerceptionSettings(ocr_backend="none"))


@pytest.fixture(scope="module")
def tour(sim: SimServer, perceiver: Perceiver) -> Tour:
    """Launcher -> Meituan home (scroll, a store and back) -> search "汉堡" -> a store;
    Settings -> Apps ->
    Meituan -> Permissions, navigated by grounding instructions on perceived screens."""
    sim.control.reset("boot")
    device = adbutils.AdbClient("127.0.0.1", sim.port).device(sim.serials[0])
    screens: dict[str, Observation] = {"launcher": observe_with_adbutils(device, 0)}
    tap(device, perceiver.perceive(screens["launcher"]), "Tap [Meituan]")
    dismiss_dialogs(device)
    screens["meituan_home"] = home = observe_with_adbutils(device, 1)
    device.swipe(540, 1700, 540, 1000, 0.5)
    scrolled = observe_with_adbutils(device, 2)
    device.swipe(540, 1000, 540, 1700, 0.5)
    scrolled_back = observe_with_adbutils(device, 3)
    tap(device, perceiver.perceive(home), "Tap [和府捞面 (徐汇店)]")
    device.keyevent("BACK")
    revisited = observe_with_adbutils(device, 4)
    tap(device, perceiver.perceive(home), "Tap [搜索商家、商品名称]")
    type_text(device, "汉堡")
    device.keyevent("ENTER")
    screens["search_results"] = results = observe_with_adbutils(device, 5)
    tap(device, perceiver.perceive(results), "Tap [汉堡王 (美罗城店)]")
    screens["store"] = observe_with_adbutils(device, 6)
    sim.control.advance_clock(600)
    store_later = observe_with_adbutils(device, 7)
    device.app_start("com.android.settings")
    settings = observe_with_adbutils(device, 8)
    tap(device, perceiver.perceive(settings), "Tap [Apps]")
    tap(device, perceiver.perceive(observe_with_adbutils(device, 9)), "Tap [Meituan]")
    tap(device, perceiver.perceive(observe_with_adbutils(device, 10)), "Tap [Permissions]")
    screens["permissions"] = observe_with_adbutils(device, 11)
    return Tour(
        screens=screens, home_revisited=revisited, home_scrolled=scrolled,
        home_scrolled_back=scrolled_back, store_later=store_later,
    )


def test_the_tour_reaches_every_screen(tour: Tour) -> None:
    activities = {name: obs.activity for name, obs in tour.screens.items()}
    assert activities == {
        "launcher": ".Launcher",
        "meituan_home": "com.meituan.android.pt.homepage.activity.MainActivity",
        "search_results": "com.meituan.android.search.SearchResultActivity",
        "store": "com.sankuai.waimai.business.restaurant.WMRestaurantActivity",
        "permissions": ".permission.AppPermissionsActivity",
    }
    assert all(obs.screenshot_png.startswith(b"\x89PNG") for obs in tour.screens.values())


def test_element_ids_are_stable_across_re_renders(tour: Tour, perceiver: Perceiver) -> None:
    home = perceiver.perceive(tour.screens["meituan_home"]).screen
    revisited = perceiver.perceive(tour.home_revisited).screen
    assert tour.home_revisited.hierarchy_xml == tour.screens["meituan_home"].hierarchy_xml
    assert [(e.id, e.label, e.bounds) for e in revisited.elements] == [
        (e.id, e.label, e.bounds) for e in home.elements
    ]
    store = perceiver.perceive(tour.screens["store"]).screen
    later = perceiver.perceive(tour.store_later).screen
    assert tour.store_later.screenshot_png != tour.screens["store"].screenshot_png  # clock moved
    assert [e.id for e in later.elements] == [e.id for e in store.elements]


def test_element_ids_survive_a_scroll_and_back(tour: Tour, perceiver: Perceiver) -> None:
    home = perceiver.perceive(tour.screens["meituan_home"]).screen
    scrolled = perceiver.perceive(tour.home_scrolled).screen
    back = perceiver.perceive(tour.home_scrolled_back).screen
    before = {e.id: e.bounds for e in home.elements}
    # The scroll really moved the page: some element left or moved.
    assert {e.id: e.bounds for e in scrolled.elements} != before
    assert {e.id: e.bounds for e in back.elements} == before
    assert describe_screen(back).text == describe_screen(home).text


@pytest.mark.parametrize("name", _TOUR)
def test_description_fits_the_token_budget(tour: Tour, perceiver: Perceiver, name: str) -> None:
    perception = perceiver.perceive(tour.screens[name])
    description = describe_screen(perception.screen, perception.blocks)
    assert 0 < description.tokens <= perceiver.settings.description_token_budget
    assert len(description.element_ids) == len(perception.screen.elements)
    again = perceiver.perceive(tour.screens[name])
    assert describe_screen(again.screen, again.blocks) == description


def test_fingerprint_ignores_the_clock_and_tells_pages_apart(
    tour: Tour, perceiver: Perceiver
) -> None:
    prints = {name: perceiver.perceive(tour.screens[name]).screen.fingerprint for name in _TOUR}
    assert len(set(prints.values())) == len(_TOUR), prints
    assert perceiver.perceive(tour.store_later).screen.fingerprint == prints["store"]
    assert perceiver.perceive(tour.home_revisited).screen.fingerprint == prints["meituan_home"]


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("launcher", "Meituan"),
        ("meituan_home", "外卖"),
        ("search_results", "肯德基 (衡山路店)"),
        ("store", "Whopper"),
        ("permissions", "Location"),
    ],
)
def test_grounding_a_visible_label_covers_its_node(
    tour: Tour, perceiver: Perceiver, name: str, label: str
) -> None:
    observation = tour.screens[name]
    grounding = ground_instruction(perceiver.perceive(observation).screen.elements, f"Tap [{label}]")
    node = node_bounds(observation.hierarchy_xml, label)
    assert grounding.box.intersection(node) == node.area, (grounding.box, node)
    assert grounding.score >= 0.8


def test_ocr_reads_captions_drawn_only_in_images(tour: Tour) -> None:
    """The sim paints store logos into image pixels with no XML text: only OCR sees them."""
    reader = Perceiver(ocr=CachedOcrEngine(RapidOcrEngine()))
    results = reader.perceive(tour.screens["search_results"])
    store = reader.perceive(tour.screens["store"])
    for perception, captions in ((results, ("BK", "KFC", "TST")), (store, ("BK",))):
        assert perception.blind_regions, "logo images without text are blind regions"
        ocr = [e for e in perception.screen.elements if e.source is ElementSource.OCR]
        assert all(any(r.contains(e.bounds.center) for r in perception.blind_regions) for e in ocr)
        read = {e.text.replace(" ", "").upper() for e in ocr}
        assert set(captions) <= read, read
        xml = tour.screens["store"].hierarchy_xml + tour.screens["search_results"].hierarchy_xml
        assert 'text="KFC"' not in xml and 'text="BK"' not in xml
    # Hierarchy-only perception of the same screen sees none of it.
    blind = Perceiver(PerceptionSettings(ocr_backend="none")).perceive(tour.screens["store"])
    assert all(e.source is ElementSource.HIERARCHY for e in blind.screen.elements)


def test_redaction_removes_secrets_typed_on_the_phone(
    device: adbutils.AdbDevice, perceiver: Perceiver
) -> None:
    """Plant a phone number and a code in McDonald's log-in form, an e-mail in Settings search."""
    device.app_start("com.mcdonalds.gma.cn")
    dismiss_dialogs(device)
    tap(device, perceiver.perceive(observe_with_adbutils(device, 0)), "Tap [Me]")  # logged out: log-in page
    login = perceiver.perceive(observe_with_adbutils(device, 1))
    tap(device, login, "Tap [Phone number]")
    type_text(device, "13812345678")
    # A password field carries no text at all, not even its hint: tap it by its flag.
    code_field = next(e for e in login.screen.elements if e.password)
    device.click(code_field.bounds.center.x, code_field.bounds.center.y)
    type_text(device, "246810")
    filled = observe_with_adbutils(device, 2)
    assert "13812345678" in filled.hierarchy_xml  # the secret is really on screen
    device.app_start("com.android.settings")
    tap(device, perceiver.perceive(observe_with_adbutils(device, 3)), "Tap [Search settings]")
    type_text(device, "alice@example.com")
    device.keyevent("ENTER")
    searched = observe_with_adbutils(device, 4)
    assert "alice@example.com" in searched.hierarchy_xml

    redactor = Redactor()
    for observation, secret, mask in (
        (filled, "13812345678", "[phone]"), (searched, "alice@example.com", "[email]"),
    ):
        perception = perceiver.perceive(observation)
        text = describe_screen(perception.screen, perception.blocks, redactor=redactor).text
        assert secret not in text and mask in text
        assert secret in describe_screen(perception.screen, perception.blocks).text  # local model
    code = next(e for e in perceiver.perceive(filled).screen.elements if e.password)
    assert code.text == ""  # never the value, not even its bullets
    assert "246810" not in filled.hierarchy_xml

    # Stored screenshots can be blurred where the personal data is.
    perception = perceiver.perceive(filled)
    blurred = redactor.blur_screenshot(filled.screenshot_png, perception.screen.elements)
    assert blurred != filled.screenshot_png


def test_redaction_masks_the_checkout_delivery_address(
    device: adbutils.AdbDevice, perceiver: Perceiver
) -> None:
    device.app_start(_MEITUAN)
    dismiss_dialogs(device)
    home = perceiver.perceive(observe_with_adbutils(device, 0))
    tap(device, home, "Tap [外卖]")
    tap(device, perceiver.perceive(observe_with_adbutils(device, 1)), "Tap [汉堡王 (美罗城店)]")
    tap(device, perceiver.perceive(observe_with_adbutils(device, 2)), "Tap [Whopper]")
    tap(device, perceiver.perceive(observe_with_adbutils(device, 3)), "Tap [去结算]")
    checkout = perceiver.perceive(observe_with_adbutils(device, 4))
    plain = describe_screen(checkout.screen, checkout.blocks).text
    assert "漕溪北路 88 号" in plain  # the planted address is on screen
    masked = describe_screen(checkout.screen, checkout.blocks, redactor=Redactor()).text
    assert "漕溪北路" not in masked and "[address]" in masked


def test_fuzzy_grounding_finds_a_label_with_a_typo(tour: Tour, perceiver: Perceiver) -> None:
    screen = perceiver.perceive(tour.screens["permissions"]).screen
    grounding = ground_instruction(screen.elements, "Tap [Locaton]")
    assert grounding.matched_text == "Location"
