"""A screen's shape: the same page with other content is one map screen; another page is not."""

from __future__ import annotations

from core.models import Screen
from inference.maps import screen_shape, shape_similarity, text_lines
from tests.inference.screens import button, element, results_screen, screen_of


def _page(title: str, *entries: str) -> Screen:
    heading = element("title", title, top=80, height=60)
    return screen_of(heading, *(button(f"b{i}", label, 300 + 120 * i) for i, label in enumerate(entries)))


def test_a_results_list_has_one_shape_whatever_its_items_say() -> None:
    pizza, sushi = screen_shape(results_screen("pizza")), screen_shape(results_screen("sushi", count=4))
    assert pizza.id == sushi.id
    assert pizza.form == sushi.form


def test_pages_with_other_controls_are_other_screens() -> None:
    settings = screen_shape(_page("Settings", "Apps", "Battery", "About phone"))
    apps = screen_shape(_page("Apps", "All apps", "Default apps"))
    assert settings.id != apps.id
    assert shape_similarity(settings, apps) < 0.5


def test_a_template_page_keeps_its_form_when_its_title_changes() -> None:
    first = screen_shape(_page("Golden Arches Cafe", "Menu", "Reviews"))
    second = screen_shape(_page("Noodle House", "Menu", "Reviews"))
    assert first.id != second.id  # two pages of one template: two looks, one form
    assert first.form == second.form


def test_a_title_with_a_count_or_date_is_content_not_the_page() -> None:
    monday = screen_shape(_page("3 unread", "Inbox", "Sent"))
    tuesday = screen_shape(_page("5 unread", "Inbox", "Sent"))
    assert monday.id == tuesday.id


def test_text_lines_read_top_to_bottom_once_and_skip_what_is_asked() -> None:
    screen = screen_of(element("a", "Android version", top=400), element("b", "14", top=480),
                       element("c", "Android version", top=600), element("d", "Model | Pixel 7", top=700))
    assert text_lines(screen) == ["Android version", "14", "Model", "Pixel 7"]
    assert text_lines(screen, skip={"b"}) == ["Android version", "Model", "Pixel 7"]
