"""Where a live screen is on a map, the map's shortest ways, and a sub-task's guide over it."""

from __future__ import annotations

from core.models import PageMode, Screen, SubTask
from inference.maps import MapGuide, locate_screen, screen_shape, shortest_path
from tests.inference.maps.maps import settings_map
from tests.inference.screens import button, element, screen_of


def _subtask(goal: str, term: str | None = None, mode: PageMode = PageMode.FOCUSED) -> SubTask:
    return SubTask(id="s1", app_label="Settings", package="com.example.settings", goal=goal,
                   search_term=term, page_mode=mode)


def _live_home(*, scrolled: bool = False) -> Screen:
    entries = ["Battery", "Apps", "About phone", "账单"]
    if scrolled:
        entries = entries[1:]
    return screen_of(element("t", "Settings", top=80), *(button(f"b{i}", e, 300 + 120 * i) for i, e in enumerate(entries)),
                     package="com.example.settings")


def test_the_shortest_path_goes_along_what_opened_each_screen() -> None:
    app_map = settings_map()
    path = shortest_path(app_map, "home", {"info"})
    assert path is not None and [(h.screen, h.element(app_map).label) for h in path] == [
        ("home", "Apps"), ("apps", "Maps | 1.1 GB")]
    assert shortest_path(app_map, "home", {"home"}) == ()
    assert shortest_path(app_map, "about", {"info"}) is None  # nothing leads back from the About page


def test_a_path_never_goes_through_a_wall() -> None:
    app_map = settings_map()
    assert shortest_path(app_map, "home", {"pay"}) is not None  # the wall itself is a screen
    walled = app_map.model_copy(update={"screens": {**app_map.screens, "bills": app_map.screens["bills"].model_copy(
        update={"wall": "login"})}})
    assert shortest_path(walled, "home", {"pay"}) is None


def test_a_live_screen_is_located_by_its_shape_or_by_most_of_its_controls() -> None:
    app_map = settings_map()
    live = _live_home()
    exact = app_map.model_copy(update={"screens": {**app_map.screens, screen_shape(live).id: app_map.screens["home"].model_copy(
        update={"id": screen_shape(live).id})}})
    located = locate_screen(exact, live)
    assert located is not None and located.title == "Settings"
    scrolled = locate_screen(app_map, _live_home(scrolled=True))
    assert scrolled is not None and scrolled.id == "home"  # controls it showed further down, too
    assert locate_screen(app_map, screen_of(button("x", "Checkout", 300), package="com.example.settings")) is None


def test_the_guide_routes_a_question_to_the_page_that_shows_its_words() -> None:
    guide = MapGuide(settings_map(), _subtask("What is the Android version of my phone?"), ignore=("Settings",))
    assert [t.id for t in guide.targets] == ["about"]
    move = guide.next_move(_live_home())
    assert move is not None and move.element.label == "About phone" and not move.choice and not move.search


def test_with_a_search_term_the_guide_leaves_the_answer_to_the_search_unless_the_app_names_a_page_by_it() -> None:
    searched = MapGuide(settings_map(), _subtask("What is my Android version?", "Android version"))
    assert searched.searches and searched.targets == []  # a page shows the words, but only as text
    named = MapGuide(settings_map(), _subtask("What does About phone say?", "About phone"))
    assert not named.searches and [t.id for t in named.targets][:1] == ["about"]  # an entry names it
    searched.term_found_nothing()  # every form of the term found nothing: the map's pages instead
    assert not searched.searches and [t.id for t in searched.targets][:1] == ["about"]


def test_a_hop_that_led_elsewhere_is_avoided_and_the_route_planned_again() -> None:
    guide = MapGuide(settings_map(), _subtask("What is the Android version of my phone?"))
    move = guide.next_move(_live_home())
    assert move is not None
    guide.note_arrival(move, _live_home())  # the tap changed nothing: the map's hop failed
    assert guide.next_move(_live_home()) is None  # no other way to the About page on this map


def test_a_live_target_must_show_the_question_words() -> None:
    app_map = settings_map()
    guide = MapGuide(app_map, _subtask("What is the Android version of my phone?"))
    about = screen_of(element("t", "About phone", top=80), element("a", "Android version", top=300),
                      element("v", "14", top=360), package="com.example.settings")
    located = app_map.model_copy(update={"screens": {**app_map.screens, screen_shape(about).id: app_map.screens["about"].model_copy(
        update={"id": screen_shape(about).id})}})
    guide = MapGuide(located, _subtask("What is the Android version of my phone?"))
    blank = about.model_copy(update={"elements": about.elements[:1]})
    assert not guide.is_target(blank)  # the page, but showing nothing asked (yet)
    assert guide.is_target(about)  # scrolled on: what the page showed so far answers
