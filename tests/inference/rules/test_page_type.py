"""Page-type rules recognise dialogs drawn over an app: alerts and permission prompts, by their ids."""

from __future__ import annotations

import pytest

from core.models import PageType, Screen, UIElement
from inference.rules import detect_page_type, find_truncated_items
from inference.rules.page_type import find_nothing_found
from tests.inference.screens import element, results_screen, screen_of

PKG = "com.sankuai.meituan"


def over_results(*dialog: UIElement, package: str = PKG) -> Screen:
    """A results list (what the app shows) with ``dialog``'s elements drawn over it."""
    page = results_screen()
    return screen_of(*page.elements, *dialog, package=package)


def alert(panel_id: str, title_id: str) -> tuple[UIElement, ...]:
    return (
        element("panel", top=800, height=700, left=80, width=920, class_name="android.widget.FrameLayout",
                resource_id=panel_id),
        element("title", "Limited-time offer", top=840, height=60, left=120, width=800, resource_id=title_id),
        element("ok", "OK", top=1400, height=80, left=700, width=200, clickable=True,
                class_name="android.widget.Button", resource_id="android:id/button1"),
    )


def permission_prompt(controller: str) -> tuple[UIElement, ...]:
    return (
        element("grant", top=900, height=600, left=60, width=960, class_name="android.widget.LinearLayout",
                resource_id=f"{controller}:id/grant_dialog"),
        element("msg", "Allow Meituan to access this device's location?", top=950, height=120, left=100,
                width=880, resource_id=f"{controller}:id/permission_message"),
        element("allow", "While using the app", top=1200, height=90, left=100, width=880, clickable=True,
                class_name="android.widget.Button", resource_id=f"{controller}:id/permission_allow_button"),
        element("deny", "Don't allow", top=1320, height=90, left=100, width=880, clickable=True,
                class_name="android.widget.Button", resource_id=f"{controller}:id/permission_deny_button"),
    )


def test_the_page_under_the_pop_ups_is_a_results_list() -> None:
    assert detect_page_type(results_screen()) is PageType.RESULTS_LIST


@pytest.mark.parametrize("panel_id, title_id", [
    ("android:id/parentPanel", "com.sankuai.meituan:id/ad_title"),  # the alert's layout alone
    ("com.sankuai.meituan:id/ad_panel", "android:id/alertTitle"),  # its title alone
])
def test_an_alert_in_the_apps_window_is_a_dialog(panel_id: str, title_id: str) -> None:
    assert detect_page_type(over_results(*alert(panel_id, title_id))) is PageType.DIALOG


@pytest.mark.parametrize("controller", ["com.android.permissioncontroller", "com.google.android.permissioncontroller"])
def test_a_permission_prompt_in_the_apps_window_is_a_dialog(controller: str) -> None:
    # The prompt's elements carry the permission controller's ids while the window is the app's.
    screen = over_results(*permission_prompt(controller))
    assert screen.package == PKG
    assert detect_page_type(screen) is PageType.DIALOG


@pytest.mark.parametrize("rid", [
    "com.google.android.permissioncontroller:id/permission_allow_button",
    "com.google.android.permissioncontroller:id/permission_deny_button",
    "com.android.permissioncontroller:id/grant_dialog",
])
def test_each_permission_id_alone_is_enough(rid: str) -> None:
    button = element("only", "Choose", top=1200, height=90, clickable=True, resource_id=rid)
    assert detect_page_type(over_results(button)) is PageType.DIALOG


def test_look_alike_ids_of_the_app_itself_are_not_dialogs() -> None:
    # An app's own "permission" settings entries and a panel id of its own are page content.
    own = (
        element("perm", "Location permission", top=200, resource_id=f"{PKG}:id/permission_allow_button"),
        element("panel", top=400, height=300, resource_id=f"{PKG}:id/parentPanel"),
        element("title", "alertTitle", top=800, resource_id="android:id/title"),
    )
    assert detect_page_type(over_results(*own)) is PageType.RESULTS_LIST


def answers(*cards: str) -> Screen:
    """A question page: its answers as tappable cards, each a headline and a body."""
    parts = [element("q", "第一次去奥兰多迪士尼世界，有什么实用攻略？", top=200, height=80)]
    for i, card in enumerate(cards):
        top = 400 + i * 400
        parts.append(element(f"a{i}", top=top, height=380, clickable=True, class_name="android.widget.LinearLayout"))
        parts.extend(element(f"a{i}_{j}", line, top=top + 20 + j * 80, height=70, left=40, width=1000)
                     for j, line in enumerate(card.split(" | ")))
    return screen_of(*parts)


def test_previews_cut_short_are_found_and_whole_answers_are_not() -> None:
    page = answers("门票、园区、交通、住宿四件事 | 攻略分四部分： | …展开阅读全文",
                   "带小孩一定要买推车租赁 | 园区很大，入口处可以租推车。")
    assert [e.id for e in find_truncated_items(page)] == ["a0"]
    whole = answers("带小孩一定要买推车租赁 | 园区很大，入口处可以租推车。", "看你喜欢什么 | 带小孩选迪士尼。")
    assert find_truncated_items(whole) == ()


@pytest.mark.parametrize("cue", ["Read more", "… more", "더보기", "続きを読む", "展开全文"])
def test_read_more_cues_in_several_languages(cue: str) -> None:
    page = answers(f"A long answer | It begins here | {cue}", "Another answer | Short and whole.")
    assert [e.id for e in find_truncated_items(page)] == ["a0"]


def test_an_empty_section_of_a_details_page_is_not_an_empty_search() -> None:
    details = screen_of(
        element("t", "Wireless headphones 40h battery, noise cancelling, foldable", top=200),
        element("p", "¥899.00", top=400), element("d", "Product description: " + "light and quiet " * 8, top=500),
        element("q", "Questions from buyers", top=900), element("n", "No results", top=980),
        element("c", "Add to cart", top=2200, clickable=True), package=PKG)
    assert find_nothing_found(details) is None
    empty = screen_of(element("h", "wireless headphones", top=150, editable=True),
                      element("n", "No results for this search", top=700), package=PKG)
    assert find_nothing_found(empty) is not None


def test_an_empty_section_under_a_short_details_page_is_not_an_empty_search() -> None:
    """Less text than a long page, but the notice sits under the product's own lines."""
    details = screen_of(
        element("p", "¥1299.00", top=400), element("t", "Mechanical keyboard, 87 keys, hot-swap", top=480),
        element("s", "Keychron official store", top=560), element("h", "Specifications", top=700),
        element("k", "Switches: brown", top=780), element("w", "Weight: 0.9 kg", top=840),
        element("h2", "Details", top=960), element("n", "No results", top=1020),
        element("c", "Add to cart", top=2200, clickable=True), package=PKG)
    assert find_nothing_found(details) is None
    # An empty search with tabs above and a cart in the bottom bar is still an empty search.
    empty = screen_of(element("q", "keyboard 87", top=150, editable=True),
                      element("tab", "Sort by sales", top=300, clickable=True),
                      element("n", "Sorry, no results for this search", top=500),
                      element("cart", "Shopping cart", top=2250, clickable=True), package=PKG)
    assert find_nothing_found(empty) is not None
