"""Perception where real screens broke it, each on a recorded screen: covered views, repeated labels,
the quoted text's own box, and names for unlabelled controls."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import PerceptionSettings
from core.models import Bounds
from inference.perception import Perceiver, describe_screen, ground_text, observe_droidbot_state
from inference.perception.naming import id_words, name_by_place

REUTERS_DRAWER = "state_2024-01-24_164947.json"  # Reuters' section drawer open over a story list
ETSY_DRAWER = "state_2024-01-11_225412.json"  # Etsy's drawer open over its search page


@pytest.fixture(scope="module")
def perceivers() -> tuple[Perceiver, Perceiver]:
    """Without and with the occlusion check (both without OCR: the hierarchy's texts are enough here)."""
    return (Perceiver(PerceptionSettings(ocr_backend="none", occlusion=False)),
            Perceiver(PerceptionSettings(ocr_backend="none")))


def _state(data_dir: Path, name: str) -> Path:
    path = data_dir / "droidbot-real" / "states" / name
    if not path.exists():
        pytest.skip(f"{name} is not in the recordings on this machine")
    return path


def test_views_under_an_open_drawer_are_not_described(
    data_dir: Path, perceivers: tuple[Perceiver, Perceiver],
) -> None:
    plain, occluding = perceivers
    observation = observe_droidbot_state(_state(data_dir, REUTERS_DRAWER))
    before, after = plain.perceive(observation), occluding.perceive(observation)
    drawer = {"World", "Davos 2019", "Politics", "Markets", "Breakingviews", "Commentary"}
    described = describe_screen(after.screen, after.blocks).text
    assert all(f'"{item}' in described for item in drawer)  # the drawer itself is seen
    # the story list under the drawer: its headlines were described, now they are gone
    hidden = [e for e in before.screen.elements if e.id in after.covered]
    assert len(hidden) >= 5
    assert all(e.bounds.left < 1216 for e in hidden)  # all of them under the drawer's box
    assert not any(e.label and e.label in described for e in hidden if len(e.label) > 12)
    assert after.timings.occlusion_ms > 0


def test_a_drawer_listed_first_is_still_drawn_over_its_content(
    data_dir: Path, perceivers: tuple[Perceiver, Perceiver],
) -> None:
    """DrawerLayout dumps list the drawer before the page; the page's toolbar is what is covered."""
    _, occluding = perceivers
    after = occluding.perceive(observe_droidbot_state(_state(data_dir, ETSY_DRAWER)))
    labels = {e.label for e in after.screen.elements}
    assert {"Home", "Sign In", "Settings"} <= {label.split(" | ")[0] for label in labels}
    assert "Navigate up" not in labels  # the page's up button under the drawer


def test_a_repeated_label_grounds_to_the_visible_one_and_to_its_own_text(
    data_dir: Path, perceivers: tuple[Perceiver, Perceiver],
) -> None:
    """'World' is a drawer item and, covered by the drawer, a story's section label."""
    plain, occluding = perceivers
    observation = observe_droidbot_state(_state(data_dir, REUTERS_DRAWER))
    covered_label = Bounds(left=53, top=2015, right=276, bottom=2078)
    drawer_row = Bounds(left=0, top=563, right=1216, bottom=703)
    before = ground_text(plain.perceive(observation).screen.elements, "World")
    assert before.box == covered_label  # what grounding did before: the covered one
    after_perception = occluding.perceive(observation)
    after = ground_text(after_perception.screen.elements, "World", tree=after_perception.tree)
    assert after.box == drawer_row  # the visible drawer item: its row is what a tap aims at
    # the highlight is the box of the view that carries the word (folded into the row's element)
    carrier = [n for n in after_perception.tree.nodes if n.label == "World" and n.element_id == after.element_id]
    assert carrier and after.highlight == carrier[0].bounds
    assert carrier[0].id != next(n.id for n in after_perception.tree.nodes if n.element_id == after.element_id)


def test_context_picks_between_two_visible_matches(
    data_dir: Path, perceivers: tuple[Perceiver, Perceiver],
) -> None:
    _, occluding = perceivers
    screen = occluding.perceive(observe_droidbot_state(_state(data_dir, REUTERS_DRAWER))).screen
    near_top = ground_text(screen.elements, "World", context="News Sections Davos 2019")
    assert near_top.box.top < 800


def test_unlabelled_controls_are_named_by_id_words_else_by_place() -> None:
    assert id_words("com.thomsonreuters.reuters:id/menu_actionbar_homepage_search_button") == "menu homepage search"
    assert id_words("jp.gocro.smartnews.android:id/settingButton") == "setting"
    assert id_words("com.example:id/iv_cart") == "cart"
    assert id_words("com.example:id/image_view") == ""
    from core.models import UIElement

    tabs = tuple(UIElement(id=f"t{i}", class_name="android.widget.FrameLayout", clickable=True,
                           bounds=Bounds(left=216 * i, top=1874, right=216 * (i + 1), bottom=2028))
                 for i in range(5))
    assert name_by_place(tabs[2], tabs, 1080, 2160) == "bottom bar, 3 of 5"
    corner = UIElement(id="c", class_name="android.widget.ImageButton", clickable=True,
                       bounds=Bounds(left=0, top=66, right=154, bottom=220))
    assert name_by_place(corner, (corner,), 1080, 2160) == "app bar, left"


def test_photos_are_not_read_unless_the_screen_has_no_other_text(data_dir: Path) -> None:
    """5miles listings: product photos (many colours) are blind regions OCR now skips; the flat
    picture regions are still read, and a screen with no text at all is read whole."""
    from inference.perception.hierarchy import parse_hierarchy
    from inference.perception.image import decode_thumbnail
    from inference.perception.ocr_regions import find_blind_regions, is_photo
    from tests.inference.perception.test_ocr import CountingOcr

    observation = observe_droidbot_state(_state(data_dir, "state_2023-12-31_212401.json"))
    thumbnail = decode_thumbnail(observation.screenshot_png)
    assert thumbnail is not None
    parsed = parse_hierarchy(observation.hierarchy_xml, width=observation.width, height=observation.height)
    regions = find_blind_regions(parsed, observation.width, observation.height)
    photos = [r for r in regions if is_photo(thumbnail, r)]
    flat = [r for r in regions if not is_photo(thumbnail, r)]
    assert photos and flat
    read = Perceiver(ocr=CountingOcr(())).perceive(observation).blind_regions
    assert not set(read) & set(photos)
    assert set(read) <= set(flat) and read
    blank = observation.model_copy(update={"hierarchy_xml": "<hierarchy rotation='0'></hierarchy>"})
    assert Perceiver(ocr=CountingOcr(())).perceive(blank).blind_regions == (
        Bounds(left=0, top=0, right=observation.width, bottom=observation.height),)
