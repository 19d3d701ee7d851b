"""The skills policy on hand-built screens: search in several languages, pop-ups, results to open."""

from __future__ import annotations

import pytest

from core.models import (
    Back,
    Input,
    OpenApp,
    PageMode,
    Screen,
    Scroll,
    SubTask,
    Tap,
    UIElement,
)
from inference.policies import PolicyContext, SkillsPolicy, TakenAction, item_signature
from inference.policies.base import Decision
from inference.policies.skills import is_forbidden
from inference.rules import detect_page_type, find_list_items
from inference.rules.segment import shorter_terms
from tests.inference.screens import button, element, perceived, results_screen, screen_of

PKG = "com.example.app"
SKILLS = SkillsPolicy()


def subtask(term: str | None = "Big Mac", mode: PageMode = PageMode.FOCUSED, goal: str = "How much is a Big Mac?") -> SubTask:
    return SubTask(id="t1", app_label="Example", package=PKG, goal=goal, search_term=term, page_mode=mode)


def context(screen: Screen, task: SubTask | None = None, *, history: tuple[TakenAction, ...] = (),
            visited: frozenset[str] = frozenset(), repeats: int = 0) -> PolicyContext:
    return PolicyContext(subtask=task or subtask(), perception=perceived(screen), page_type=detect_page_type(screen),
                         step=len(history), history=history, visited=visited, repeats=repeats)


def decide(screen: Screen, task: SubTask | None = None, *, history: tuple[TakenAction, ...] = (),
           visited: frozenset[str] = frozenset(), repeats: int = 0) -> Decision:
    decision = SKILLS.decide(context(screen, task, history=history, visited=visited, repeats=repeats))
    assert decision is not None, "the skills should be confident on this screen"
    assert decision.policy == "skills"
    return decision


SEARCHED = (TakenAction(action=Input(text="Big Mac", target="search", submit=True),
                        instruction="Enter [Big Mac] in [Search]", policy="skills", skill="type_search"),)


def home(*extra: UIElement) -> Screen:
    """An app's home: a feed of cards (not a results list) and whatever ``extra`` adds."""
    feed = [element(f"card{i}", f"Today's pick {i}: noodles", top=900 + 220 * i, height=200, left=40,
                    width=400 + 60 * i) for i in range(3)]
    return screen_of(*extra, *feed, package=PKG)


# ------------------------------------------------------------------ search, in the apps' languages


@pytest.mark.parametrize("hint", ["Search restaurants", "搜索商家、商品名称", "검색어를 입력하세요", "検索キーワード"])
def test_a_search_field_is_typed_into_whatever_its_language(hint: str) -> None:
    field = element("field", hint, top=200, height=110, class_name="android.widget.EditText", editable=True,
                    clickable=True, resource_id=f"{PKG}:id/query")
    decision = decide(home(field, element("other", "Nickname", top=600, height=110, editable=True)))
    assert decision.skill == "type_search"
    assert decision.action == Input(text="Big Mac", target="field", submit=True, reason="search for the term")


def _with_entries(*labels: str, field: bool = True) -> Screen:
    """A home with a row of short category entries above a search field (or a search icon only)."""
    search = (element("field", "搜索目的地、酒店、景点", top=600, height=110, class_name="android.widget.EditText",
                      editable=True, clickable=True, resource_id=f"{PKG}:id/query") if field
              else element("icon", top=90, height=150, width=150, clickable=True, content_desc="Search"))
    entries = [element(f"entry{i}", label, top=300, height=120, left=20 + 200 * i, width=180, clickable=True)
               for i, label in enumerate(labels)]
    return home(search, *entries)


@pytest.mark.parametrize(("term", "labels", "field", "tapped"), [
    ("酒店", ("机票", "酒店", "火车票"), False, "entry1"),  # the category, where only an icon searches
    ("热映", ("正在热映", "即将上映"), True, "entry0"),  # a tab a little longer than the term
    ("Spaces", ("Home", "Spaces", "Following"), True, "entry1"),
])
def test_the_apps_own_entry_for_the_term_is_opened_instead_of_searching(
        term: str, labels: tuple[str, ...], field: bool, tapped: str) -> None:
    decision = decide(_with_entries(*labels, field=field), subtask(term))
    assert decision.skill == "open_entry"
    assert isinstance(decision.action, Tap) and decision.action.target == tapped


def test_an_entry_that_only_contains_the_term_or_a_second_try_searches() -> None:
    # "上海迪士尼度假区门票" is another thing than "上海"; "Spaces near me" is not the entry "Spaces".
    assert decide(_with_entries("上海迪士尼度假区门票"), subtask("上海")).skill == "type_search"
    assert decide(_with_entries("Spaces near me"), subtask("Spaces")).skill == "type_search"
    screen = _with_entries("正在热映")
    later = SKILLS.decide(PolicyContext(subtask=subtask("热映"), perception=perceived(screen),
                                        page_type=detect_page_type(screen), step=0, attempt=2))
    assert later is not None and later.skill == "type_search"
    opened = (TakenAction(action=Tap(target="entry0"), instruction="Tap [正在热映]", policy="skills",
                          skill="open_entry"),)
    assert decide(screen, subtask("热映"), history=opened).skill == "type_search"


@pytest.mark.parametrize("label", ["Search", "搜索", "검색", "検索"])
def test_a_search_entry_is_tapped_to_reach_the_field(label: str) -> None:
    entry = element("entry", label, top=200, height=110, width=300, clickable=True, class_name="android.widget.TextView")
    decision = decide(home(element("title", "Welcome back", top=120, height=60), entry))
    assert decision.skill == "open_search" and isinstance(decision.action, Tap) and decision.action.target == "entry"


def test_a_search_icon_with_only_a_content_description_is_found() -> None:
    icon = element("icon", top=160, height=120, left=940, width=120, clickable=True,
                   class_name="android.widget.ImageView", content_desc="Search")
    decision = decide(home(element("title", "Discover", top=160, height=120, width=800), icon))
    assert decision.skill == "open_search" and decision.action == Tap(target="icon", reason="open the search page")


def test_no_search_twice_and_no_search_without_a_term() -> None:
    field = element("field", "搜索", top=200, height=110, editable=True)
    # Searched already in this try: the search skill stands down (and nothing else applies here).
    assert SKILLS.decide(context(home(field), history=SEARCHED)) is None
    # A search the phone did not take does not count: it is typed again.
    swallowed = (SEARCHED[0].model_copy(update={"applied": False}),)
    assert decide(home(field), history=swallowed).skill == "type_search"
    direct = subtask(term=None, goal="Which permissions does the app have?")
    assert SKILLS.decide(context(home(field), direct)) is None


def test_a_search_that_found_nothing_is_typed_again_shorter_never_the_same_words() -> None:
    field = element("field", "Search", top=200, height=110, editable=True, clickable=True)
    long_term = subtask(term="Big Mac Extra Value Meal combo")
    typed = (TakenAction(action=Input(text="Big Mac Extra Value Meal combo", target="field", submit=True),
                         instruction="Enter [...] in [Search]", policy="skills", skill="type_search"),)
    empty = frozenset({"Big Mac Extra Value Meal combo"})
    again = SKILLS.decide(PolicyContext(subtask=long_term, perception=perceived(home(field)),
                                        page_type=detect_page_type(home(field)), step=1, history=typed,
                                        empty_searches=empty))
    assert again is not None and isinstance(again.action, Input)
    assert again.action.text == "Big Mac Extra Value Meal"  # the leading name, not the same words
    # Every shorter form found nothing too: the search stands down and the explorer takes over.
    exhausted = empty | {"Big Mac Extra Value Meal", "Big Mac", "Big"}
    assert SKILLS.decide(PolicyContext(subtask=long_term, perception=perceived(home(field)),
                                       page_type=detect_page_type(home(field)), step=1, history=typed,
                                       empty_searches=exhausted)) is None


@pytest.mark.parametrize(("term", "forms"), [
    ("Black Myth Wukong boss compilation", ("Black Myth Wukong", "Black Myth", "Black")),
    ("上海迪士尼度假区", ("上海迪士尼", "上海")),
    ("Interstellar", ()),
])
def test_shorter_forms_of_a_term_narrow_to_wide(term: str, forms: tuple[str, ...]) -> None:
    assert shorter_terms(term) == (term, *forms)


def test_a_suggestion_reading_the_term_is_opened_instead_of_typing_and_counts_as_searched() -> None:
    field = element("field", "Search", top=200, height=110, editable=True, clickable=True)
    recent = element("recent", "big mac", top=400, height=120, clickable=True)
    longer = element("longer", "Big Mac meal deals", top=520, height=120, clickable=True)
    decision = decide(home(field, longer, recent))
    assert decision.skill == "pick_suggestion" and decision.action == Tap(target="recent",
                                                                         reason="open the suggestion 'Big Mac'")
    taken = TakenAction(action=decision.action, instruction="Tap [big mac]", policy="skills", skill=decision.skill)
    assert context(home(field), history=(taken,)).searched
    # No exact suggestion: the term is typed.
    assert decide(home(field, longer)).skill == "type_search"


def test_without_a_search_field_or_icon_the_navigation_menu_is_opened_once() -> None:
    menu = element("menu", top=90, height=190, width=196, clickable=True, content_desc="Open Menu",
                   class_name="android.widget.ImageButton")
    decision = decide(home(menu))
    assert decision.skill == "open_menu" and isinstance(decision.action, Tap) and decision.action.target == "menu"
    opened = TakenAction(action=decision.action, instruction="Tap [Open Menu]", policy="skills", skill="open_menu")
    follow_up = SKILLS.decide(context(home(menu), history=(opened,)))
    assert follow_up is None or follow_up.skill != "open_menu"


def test_a_repeated_page_does_not_tap_the_search_icon_again_but_scrolls() -> None:
    icon = element("icon", top=160, height=120, left=940, width=120, clickable=True, content_desc="搜索")
    decision = decide(home(icon), repeats=1)
    assert decision.skill == "scroll_repeat" and isinstance(decision.action, Scroll)


def test_a_scroll_that_moved_nothing_is_not_repeated() -> None:
    page = home().model_copy(update={"fingerprint": "f-end-of-page"})
    scrolled = TakenAction(action=Scroll(reason="look further down"), instruction="Scroll down", policy="skills",
                           skill="scroll_repeat", fingerprint=page.fingerprint)
    decision = SKILLS.decide(context(page, history=(scrolled,), repeats=2))
    assert decision is None or decision.skill != "scroll_repeat"


def test_outside_the_app_the_app_is_opened() -> None:
    launcher = screen_of(element("icon", "Example", clickable=True), package="com.android.launcher3")
    decision = decide(launcher)
    assert decision.skill == "open_app" and decision.action == OpenApp(package=PKG, reason="open Example")
    # Backed out of the app's top page: open it on its first page, not where it would resume.
    backed = TakenAction(action=Back(reason="back to the branch point"), instruction="Back", policy="explore")
    again = decide(launcher, history=(backed,))
    assert isinstance(again.action, OpenApp) and again.action.fresh


# ------------------------------------------------------------------ pop-ups


def dialog(*buttons: tuple[str, str], panel: str = "android:id/parentPanel") -> tuple[UIElement, ...]:
    parts = [element("panel", top=700, height=900, left=60, width=960, resource_id=panel),
             element("message", "Limited-time offer: 5 yuan off today", top=760, height=120, left=100, width=880)]
    for index, (element_id, label) in enumerate(buttons):
        parts.append(element(element_id, label, top=1300 + 120 * index, height=100, left=100, width=880,
                             clickable=True, class_name="android.widget.Button",
                             resource_id=f"android:id/button{index + 1}"))
    return tuple(parts)


@pytest.mark.parametrize("accept, close", [
    ("Accept", "Close"), ("立即领取", "关闭"), ("同意", "以后再说"), ("확인하기", "닫기"), ("受け取る", "閉じる"),
])
def test_a_pop_up_is_closed_never_accepted(accept: str, close: str) -> None:
    field = element("field", "Search", top=200, height=110, editable=True)  # the page under it has work to do
    screen = home(field, *dialog(("yes", accept), ("no", close)))
    decision = decide(screen)
    assert decision.skill == "dismiss_dialog"
    assert decision.action == Tap(target="no", reason="close the pop-up without accepting it")


def test_a_permission_prompt_is_denied() -> None:
    controller = "com.google.android.permissioncontroller"
    prompt = (
        element("grant", top=900, height=600, left=60, width=960, resource_id=f"{controller}:id/grant_dialog"),
        element("allow", "While using the app", top=1200, height=90, clickable=True,
                resource_id=f"{controller}:id/permission_allow_button"),
        element("deny", "Don't allow", top=1320, height=90, clickable=True,
                resource_id=f"{controller}:id/permission_deny_button"),
    )
    decision = decide(home(*prompt))
    assert isinstance(decision.action, Tap) and decision.action.target == "deny"


def test_a_pop_up_with_only_an_accepting_button_is_left_with_back() -> None:
    decision = decide(home(*dialog(("agree", "Agree and continue"))))
    assert decision.skill == "dismiss_dialog" and isinstance(decision.action, Back)


def test_androids_negative_button_closes_a_pop_up_without_a_known_word() -> None:
    decision = decide(home(*dialog(("go", "Go to the event"), ("skip2", "Maybe another day"))))
    assert decision.action == Tap(target="skip2", reason="close the pop-up without accepting it")


# ------------------------------------------------------------------ results


def signatures(screen: Screen) -> list[str]:
    return [item_signature(item, screen) for item in find_list_items(screen)]


def test_the_first_unvisited_result_is_opened_and_visited_ones_are_masked() -> None:
    screen = results_screen(count=5)
    keys = signatures(screen)
    assert len(set(keys)) == 5
    first = decide(screen, history=SEARCHED)
    assert first.skill == "open_result" and first.action == Tap(target="item0", reason="open the next result not visited yet")
    assert first.item_signature == keys[0]
    third = decide(screen, history=SEARCHED, visited=frozenset(keys[:2]))
    assert isinstance(third.action, Tap) and third.action.target == "item2" and third.item_signature == keys[2]
    # Out of order: whatever is not visited yet, top first.
    skipped = decide(screen, history=SEARCHED, visited=frozenset({keys[0], keys[1], keys[3]}))
    assert isinstance(skipped.action, Tap) and skipped.action.target == "item2"


def test_after_a_search_that_found_nothing_the_home_feed_is_not_taken_for_results() -> None:
    # The search box kept the term, but a Back right after the search left its results.
    home = results_screen(term="Big Mac", count=4)
    backed = (*SEARCHED, TakenAction(action=Back(), instruction="Press Back", policy="skills"))
    decision = SKILLS.decide(context(home, history=backed))
    assert decision is None or decision.skill != "open_result"
    # Back from an opened result returns to the results: the next one is opened.
    opened = (*SEARCHED, TakenAction(action=Tap(target="item0"), instruction="Tap [item0]", policy="skills",
                                     opened_result=True), *backed[1:])
    assert decide(home, history=opened).skill == "open_result"


def test_a_visited_result_keeps_its_signature_after_a_scroll() -> None:
    screen = results_screen(count=5)
    scrolled = screen.model_copy(update={"elements": tuple(
        e.model_copy(update={"bounds": e.bounds.model_copy(update={"top": e.bounds.top - 300,
                                                                     "bottom": e.bounds.bottom - 300})})
        if e.id != "search" else e
        for e in screen.elements
    )})
    assert signatures(scrolled)[1:] == signatures(screen)[1:]


def test_every_result_on_screen_visited_scrolls_for_more() -> None:
    screen = results_screen(count=4)
    decision = decide(screen, history=SEARCHED, visited=frozenset(signatures(screen)))
    assert decision.skill == "scroll_results" and isinstance(decision.action, Scroll)


def test_a_list_view_goal_does_not_open_results_and_a_feed_before_searching_is_not_results() -> None:
    screen = results_screen(count=4)
    # The list is the target: the evaluator ends the sub-task, no skill opens an item.
    assert SKILLS.decide(context(screen, subtask(mode=PageMode.LIST_VIEW), history=SEARCHED)) is None
    before = decide(screen)  # not searched yet: the field on the page is typed into first
    assert before.skill == "type_search"


@pytest.mark.parametrize(("label", "forbidden"), [
    ("写回答", True), ("关注问题", True), ("Reply", True), ("Forward", True), ("Share", True),
    ("Follow", True), ("点赞", True), ("팔로우", True), ("送信", True),
    ("Following", False), ("Posts", False), ("Likely matches", False), ("评论", False), ("全部回答", False),
])
def test_sending_posting_and_following_are_never_tapped(label: str, forbidden: bool) -> None:
    assert is_forbidden(label) is forbidden


@pytest.mark.parametrize(("label", "forbidden"), [
    # An entry naming the settings page of paying or signing in leads there, as the risk gate reads it.
    ("支付设置", False), ("Payment settings", False), ("登录设置", False), ("결제 설정", False),
    # The acts themselves, and entries naming any other act, stay forbidden.
    ("立即支付", True), ("Pay now", True), ("登录", True), ("删除记录", True), ("Delete history", True),
])
def test_an_entry_naming_a_payment_or_sign_in_settings_page_is_a_way_there(label: str, forbidden: bool) -> None:
    assert is_forbidden(label) is forbidden


# ------------------------------------------------------------------ query forms (no search box)


def query_form(*, heading: str, fields: tuple[str, ...]) -> Screen:
    """A form filled in (stations, a date) over its submit button, and a row of other entries."""
    filled = [element(f"field{i}", text, top=300 + 100 * i) for i, text in enumerate(fields)]
    bottom = 300 + 100 * len(fields)
    return screen_of(element("title", heading, top=120, height=90), *filled,
                     button("submit", "查询车票", bottom + 40), button("member", "会员中心", bottom + 300),
                     package=PKG)


def test_a_query_form_about_the_search_is_run_as_it_is_filled_in() -> None:
    # No search box: the form's fields hold the term, or the page's heading names the goal.
    by_term = query_form(heading="订票", fields=("南京", "杭州", "出发日期 9月12日"))
    task = subtask("南京", PageMode.LIST_VIEW, goal="9月12日南京到杭州的车次有哪些？")
    decision = decide(by_term, task)
    assert isinstance(decision.action, Tap) and decision.action.target == "submit"
    assert decision.skill == "submit_query_form"
    by_heading = query_form(heading="中国铁路", fields=("南京", "杭州"))
    trains = subtask("trains", PageMode.LIST_VIEW, goal="List available afternoon trains from A to B on Sept 12.")
    assert decide(by_heading, trains).skill == "submit_query_form"
    # Once run, the search is done: a sub-task does not run it again.
    ran = (TakenAction(action=Tap(target="submit"), instruction="Tap [查询车票]", policy="skills",
                       skill="submit_query_form"),)
    assert context(by_heading, trains, history=ran).searched


def test_a_query_form_holding_someone_elses_query_is_not_run() -> None:
    # Neither the term nor a concept of the goal is on the form: its fields are another query.
    other = query_form(heading="订票", fields=("北京", "上海"))
    task = subtask("南京", PageMode.LIST_VIEW, goal="9月12日南京到杭州的车次有哪些？")
    decision = SKILLS.decide(context(other, task))
    assert decision is None or decision.skill != "submit_query_form"
