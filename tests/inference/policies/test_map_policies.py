"""The app map's policies: following the map's route, and trying an unfamiliar screen's elements."""

from __future__ import annotations

from core.models import Back, OpenApp, PageMode, PageType, Scroll, SubTask, Tap
from inference.maps import MapGuide
from inference.policies import MapRoutePolicy, PolicyContext, TakenAction, UnfamiliarScreenPolicy
from tests.inference.maps.maps import settings_map
from tests.inference.screens import button, element, perceived, screen_of

PACKAGE = "com.example.settings"


def _subtask(goal: str, term: str | None = None) -> SubTask:
    return SubTask(id="s1", app_label="Settings", package=PACKAGE, goal=goal, search_term=term,
                   page_mode=PageMode.FOCUSED)


def _context(subtask: SubTask, *elements: object, history: tuple[TakenAction, ...] = (),
             fingerprint: str = "home") -> PolicyContext:
    screen = screen_of(*elements, package=PACKAGE, fingerprint=fingerprint)  # type: ignore[arg-type]
    return PolicyContext(subtask=subtask, perception=perceived(screen), page_type=PageType.OTHER, step=1,
                         history=history)


def _home(*labels: str) -> list[object]:
    return [element("t", "Settings", top=80), *(button(f"b{i}", label, 300 + 120 * i)
                                                 for i, label in enumerate(labels))]


def test_the_map_policy_taps_the_next_entry_of_the_route_to_the_target() -> None:
    subtask = _subtask("What is the Android version of my phone?")
    policy = MapRoutePolicy(MapGuide(settings_map(), subtask))
    decision = policy.decide(_context(subtask, *_home("Battery", "Apps", "About phone", "账单")))
    assert decision is not None and isinstance(decision.action, Tap) and decision.action.target == "b2"
    assert decision.policy == "map"


def test_the_map_policy_scrolls_to_an_entry_the_map_saw_further_down() -> None:
    app_map = settings_map()
    home = app_map.screens["home"]
    lowered = [e.model_copy(update={"scrolls": 1}) if e.label == "About phone" else e for e in home.elements]
    app_map = app_map.model_copy(update={"screens": {**app_map.screens, "home": home.model_copy(
        update={"elements": tuple(lowered)})}})
    subtask = _subtask("What is the Android version of my phone?")
    policy = MapRoutePolicy(MapGuide(app_map, subtask))
    decision = policy.decide(_context(subtask, *_home("Battery", "Apps", "账单")))
    assert decision is not None and isinstance(decision.action, Scroll)


def test_the_map_policy_leaves_searches_to_the_skills_and_passes_off_the_map() -> None:
    searching = _subtask("How much storage does Maps use?", "Maps")
    assert MapRoutePolicy(MapGuide(settings_map(), searching)).decide(
        _context(searching, *_home("Battery", "Apps", "About phone", "账单"))) is None
    subtask = _subtask("What is the Android version of my phone?")
    assert MapRoutePolicy(MapGuide(settings_map(), subtask)).decide(
        _context(subtask, button("x", "Checkout", 300))) is None


def test_an_unfamiliar_screen_is_tried_best_first_and_left_by_back_when_done() -> None:
    subtask = _subtask("Where are the terms of use?")
    policy = UnfamiliarScreenPolicy()
    first = (TakenAction(action=OpenApp(package=PACKAGE), instruction="open", policy="skills", fingerprint="launcher"),
             TakenAction(action=Tap(target="x"), instruction="tap", policy="explore", fingerprint="home"))
    elements = [button("a", "Weather", 300), button("b", "Terms of use", 420), button("c", "News", 540)]
    chosen = [policy.decide(_context(subtask, *elements, history=first, fingerprint="about"))
              for _ in range(3)]
    assert [d.action.target for d in chosen if d is not None and isinstance(d.action, Tap)] == ["b", "a", "c"]
    assert isinstance(policy.decide(_context(subtask, *elements, history=first, fingerprint="about")).action, Back)  # type: ignore[union-attr]
    # On the try's first page, with everything tried, there is nothing to go back to: the try ends.
    assert policy.decide(_context(subtask, *elements, history=first[:1], fingerprint="home2")) is None
    fresh = UnfamiliarScreenPolicy().decide(_context(subtask, *elements, history=first[:1], fingerprint="home2"))
    assert fresh is not None and isinstance(fresh.action, Tap)


def test_nothing_the_person_does_is_chosen_unless_the_goal_names_that_act() -> None:
    elements = [button("a", "Sign in", 300), button("b", "Pay now", 420), button("c", "Help", 540)]
    browsing = UnfamiliarScreenPolicy().decide(_context(_subtask("Find the help pages"), *elements))
    assert browsing is not None and browsing.action.target == "c"  # type: ignore[union-attr]
    signing = UnfamiliarScreenPolicy().decide(_context(_subtask("Sign in to the app"), *elements))
    assert signing is not None and signing.action.target == "a"  # type: ignore[union-attr]
