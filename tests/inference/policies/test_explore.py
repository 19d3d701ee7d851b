"""The no-model explorer: the lexicon maps goals to concepts, entries are ranked, dead ends backtracked."""

from __future__ import annotations

import pytest

from core.models import Back, Input, PageMode, PageType, Screen, SubTask, Tap, UIElement
from inference.policies import ExplorePolicy, PolicyContext, TakenAction, rank_results
from inference.rules import (
    detect_page_type,
    evaluate_by_rules,
    find_goal_concepts,
    find_list_items,
    load_lexicon,
    match_concept,
)
from tests.inference.screens import element, perceived, screen_of

PKG = "com.example.app"


def task(goal: str, term: str | None = None, mode: PageMode = PageMode.FOCUSED) -> SubTask:
    return SubTask(id="t1", app_label="Example", package=PKG, goal=goal, search_term=term, page_mode=mode)


def context(screen: Screen, subtask: SubTask, *, history: tuple[TakenAction, ...] = ()) -> PolicyContext:
    return PolicyContext(subtask=subtask, perception=perceived(screen), page_type=detect_page_type(screen),
                         step=len(history), history=history)


def entry(
    eid: str, label: str, top: int, *, left: int = 0, width: int = 1080, selected: bool = False
) -> UIElement:
    return element(eid, label, top=top, height=120, left=left, width=width, clickable=True,
                   class_name="android.widget.Button", selected=selected)


def title(text: str) -> UIElement:
    return element("title", text, top=60, height=80)


def tapped_label(decision_target: str | None, screen: Screen) -> str:
    found = screen.element(decision_target or "")
    return found.label if found is not None else ""


# ----------------------------------------------------------------- lexicon


@pytest.mark.parametrize(("goal", "concept"), [
    ("List community guidelines on Bilibili.", "guidelines"),
    ("Check which permissions have been authorized to Meituan.", "permissions"),
    ("Find out how many Eason songs I've saved on QQ Music.", "liked"),
    ("List all default currency settlement units on SHEIN.", "currency"),
    ("查看我的购物车", "cart"),
])
def test_a_goal_names_its_concepts_in_english_or_its_own_language(goal: str, concept: str) -> None:
    assert concept in find_goal_concepts(goal).named


@pytest.mark.parametrize(("goal", "label", "concept"), [
    # Money matters apps share, asked in English and shown in Chinese (or the other way round).
    ("What is the cancellation and refund policy for my hotel booking?", "退订规则", "refund"),
    ("Which subscriptions take money from my card by direct debit?", "自动扣款", "autopay"),
    ("列出我的话费充值记录", "Top-up history", "top_ups"),
    ("환불 규정 알려줘", "Refund policy", "refund"),
])
def test_money_pages_are_concepts_across_languages(goal: str, label: str, concept: str) -> None:
    assert concept in find_goal_concepts(goal).named
    assert match_concept(label, load_lexicon().concepts[concept]) > 0


def test_a_phrase_wins_over_its_words_and_hubs_lead_to_concepts() -> None:
    goal = find_goal_concepts("Check showtimes the day after tomorrow of F1: The Movie.")
    assert "day_after_tomorrow" in goal.named and "tomorrow" not in goal.named
    assert "F1" in goal.entities
    assert find_goal_concepts("List all default currency settlement units.").via == {"settings": 1, "me": 2, "navigation": 2}


@pytest.mark.parametrize(("label", "concept"), [
    ("社区公约", "guidelines"), ("설정", "settings"), ("お知らせ", "notifications"), ("장바구니", "cart"),
    ("Settings", "settings"), ("我的", "me"), ("マイページ", "me"),
])
def test_screen_labels_in_four_languages_stand_for_concepts(label: str, concept: str) -> None:
    assert match_concept(label, load_lexicon().concepts[concept]) > 0


def test_a_label_joining_alternatives_stands_for_each_of_them() -> None:
    concepts = load_lexicon().concepts
    assert match_concept("免密支付/自动扣款", concepts["autopay"]) == 1.0  # no lexicon entry spells the pair
    assert match_concept("Settings | Help", concepts["settings"]) == 1.0
    assert match_concept("免密支付 自动扣款 说明", concepts["autopay"]) < 1.0  # words around, not alternatives


def test_short_latin_labels_do_not_match_by_accident() -> None:
    me = load_lexicon().concepts["me"]
    assert match_concept("Menu", me) == 0
    assert match_concept("Me", me) == 1.0


# ----------------------------------------------------------------- explorer

HOME = screen_of(
    title("Example"),
    element("search", "Search videos", top=200, height=100, editable=True, clickable=True,
            class_name="android.widget.EditText"),
    element("feed0", "A trailer everyone is sharing | 2.1M views", top=500, height=400, clickable=True),
    entry("tab_home", "首页", 2050, selected=True, width=360),
    entry("tab_feed", "动态", 2050, left=360, width=360),
    entry("tab_me", "我的", 2050, left=720, width=360),
    fingerprint="home",
)
ME_PAGE = screen_of(
    title("我的"),
    entry("history", "历史记录", 400),
    entry("guidelines", "社区公约", 600),
    entry("logout", "退出登录", 800),
    fingerprint="me",
)


def test_a_hub_leads_to_personal_pages_and_the_named_entry_is_tapped_there() -> None:
    goal = task("List community guidelines on Example.")
    explorer = ExplorePolicy()
    first = explorer.decide(context(HOME, goal))
    assert first is not None and isinstance(first.action, Tap)
    assert tapped_label(first.action.target, HOME) == "我的"
    moved = (TakenAction(action=first.action, instruction="Tap [我的]", policy="explore", fingerprint="home"),)
    second = explorer.decide(context(ME_PAGE, goal, history=moved))
    assert second is not None and isinstance(second.action, Tap)
    assert tapped_label(second.action.target, ME_PAGE) == "社区公约"
    assert [(e.fingerprint, e.tapped, e.next_fingerprint) for e in explorer.edges] == [
        ("home", "我的", "me"), ("me", "社区公约", ""),
    ]


def test_an_app_without_search_is_explored_even_when_the_plan_has_a_search_term() -> None:
    station = screen_of(title("中国铁路12306"), entry("member", "铁路会员", 1200, width=360),
                        entry("refund", "退改签说明", 1200, left=360, width=360), fingerprint="station")
    goal = task("What are the member rights on Example?", term="member rights")
    decision = ExplorePolicy().decide(context(station, goal))
    assert decision is not None and tapped_label(getattr(decision.action, "target", None), station) == "铁路会员"
    with_search = screen_of(*station.elements,
                            element("q", "", top=250, class_name="android.widget.EditText", editable=True,
                                    resource_id="app:id/search"), fingerprint="station-search")
    assert ExplorePolicy().decide(context(with_search, goal)) is None  # the skills search first


def test_an_exhausted_branch_goes_back_and_risky_entries_are_never_tapped() -> None:
    goal = task("Show my account deletion settings.")
    dead_end = screen_of(title("我的"), entry("logout", "退出登录", 400), entry("delete", "Delete account", 600),
                         fingerprint="dead")
    explorer = ExplorePolicy()
    first = explorer.decide(context(HOME, goal))
    assert first is not None and tapped_label(getattr(first.action, "target", None), HOME) == "我的"
    history = (TakenAction(action=first.action, instruction="Tap [我的]", policy="explore"),)
    decision = explorer.decide(context(dead_end, goal, history=history))
    assert decision is not None and isinstance(decision.action, Back)
    assert explorer.edges[-1].tapped == "back"


def test_nothing_to_explore_before_the_search_is_typed() -> None:
    assert ExplorePolicy().decide(context(HOME, task("Reviews of Big Mac", term="Big Mac"))) is None


# ----------------------------------------------------------------- choosing a result


def results(*cards: str) -> Screen:
    items = [
        element(f"item{i}", card, top=300 + i * 300, height=280, clickable=True,
                class_name="android.widget.LinearLayout", resource_id=f"{PKG}:id/result")
        for i, card in enumerate(cards)
    ]
    return screen_of(title("搜索结果"), *items)


def test_the_result_naming_the_term_and_the_goal_is_chosen_not_the_first_or_an_ad() -> None:
    screen = results(
        "【广告】碟中谍 同款墨镜 限时特价",
        "碟中谍主题曲 交响乐团现场版 | 45.8万播放",
        "【碟中谍8】之后还会有续集吗？聊聊这个系列的未来 | UP 电影最TOP | 186.4万播放",
    )
    goal = task("Find out how fans feel about the possibility of more Mission: Impossible films.", term="碟中谍")
    searched = (TakenAction(action=Input(text="碟中谍", target="search", submit=True),
                            instruction="Enter [碟中谍]", policy="skills"),)
    ranked = rank_results(context(screen, goal, history=searched), find_list_items(screen))
    assert ranked[0].id == "item2"
    assert ranked[-1].id == "item0"  # the ad


# ----------------------------------------------------------------- completion by heading


def test_a_page_headed_by_the_goals_concept_is_the_target_whatever_its_structure() -> None:
    goal = task("List community guidelines on Example.")
    page = screen_of(title("社区公约"), element("rule1", "尊重原创，拒绝搬运和抄袭。", top=300, height=80))
    evaluation = evaluate_by_rules(goal, page)
    assert evaluation.complete, evaluation.reason


def test_the_apps_first_page_and_a_hub_are_not_the_target() -> None:
    goal = task("List community guidelines on Example.")
    assert not evaluate_by_rules(goal, HOME).complete
    assert not evaluate_by_rules(goal, ME_PAGE).complete  # it only leads there


def test_an_entry_the_goal_names_makes_a_page_a_step() -> None:
    goal = task("Check the driving time to Shanghai using Example.", term="上海")
    place = screen_of(title("上海市"), element("desc", "中国上海市 · 城市 · 1432公里 " * 10, top=300, height=400),
                      entry("route", "路线", 1000), entry("up", "Navigate up", 60, width=100))
    evaluation = evaluate_by_rules(goal, place)
    assert not evaluation.complete and "路线" in evaluation.reason


def test_a_list_headed_by_one_concept_whose_items_name_another_is_opened_not_captured() -> None:
    goal = task("Check the features of the latest added monitor in my cart.")
    cart = results("抽纸 24包 | ¥59.90", "27英寸 2K 电竞显示器 | ¥1299.00", "游戏鼠标 | ¥259.00")
    cart = cart.model_copy(update={"elements": (title("购物车"), *cart.elements[1:])})
    assert detect_page_type(cart) is PageType.RESULTS_LIST
    evaluation = evaluate_by_rules(goal, cart)
    assert not evaluation.complete and "显示器" in evaluation.reason


# ----------------------------------------------------------------- brands in every script

BIG_MAC = "Ordering a Big Mac from McDonald's, Meituan or Ele.me?"


def test_a_brand_the_goal_spells_is_found_in_every_script_except_in_its_own_app() -> None:
    in_delivery_app = find_goal_concepts(BIG_MAC, "巨无霸", "Ele.me").entities
    assert {"麦当劳", "マクドナルド", "맥도날드", "Big Mac"} <= set(in_delivery_app)
    assert not {"mcdonalds", "big_mac"} & set(find_goal_concepts(BIG_MAC).named)  # names, not UI concepts
    # In McDonald's own app its name is on every page: it says nothing about where to go.
    assert "麦当劳" not in find_goal_concepts(BIG_MAC, None, "McDonald's").entities


def test_the_store_the_goal_names_in_another_script_is_opened_first() -> None:
    screen = results(
        "汉堡王 (美罗城店) | 评分4.5 · 月售6100 | 皇堡第二个1元",
        "麦当劳 (漕溪北路店) | 评分4.7 · 月售2856 | 满25减4",
    )
    goal = task(BIG_MAC, term="巨无霸")
    searched = (TakenAction(action=Input(text="巨无霸", target="search", submit=True),
                            instruction="Enter [巨无霸]", policy="skills"),)
    ranked = rank_results(context(screen, goal, history=searched), find_list_items(screen))
    assert ranked[0].id == "item1"


# ----------------------------------------------------------------- a list's own title

LIKED_PLAYLISTS = "Check my liked playlists on Example, and suggest music styles I'd probably like."


def profile(*sections: tuple[str, tuple[str, ...]]) -> Screen:
    """A profile page: a hub title, a liked-songs entry, then lists each under its own title."""
    parts: list[UIElement] = [title("我的"), entry("liked", "我喜欢", 200)]
    top = 360
    for s, (heading, cards) in enumerate(sections):
        parts.append(element(f"h{s}", heading, top=top, height=60))
        top += 70
        for i, card in enumerate(cards):
            parts.append(element(f"c{s}_{i}", card, top=top, height=160, clickable=True,
                                 class_name="android.widget.LinearLayout"))
            top += 180
    return screen_of(*parts)


def test_a_list_titled_with_all_the_goal_asks_for_is_the_target_of_a_list_view() -> None:
    goal = task(LIKED_PLAYLISTS, mode=PageMode.LIST_VIEW)
    page = profile(("自建歌单", ("私人雷达 | 30 首", "跑步 | 52 首")),
                   ("收藏歌单", ("港乐黄金年代 | 100 首 · by 港乐", "华语 R&B | 60 首 · by QQ音乐")))
    evaluation = evaluate_by_rules(goal, page)
    assert evaluation.complete, evaluation.reason
    assert "title of a list" in evaluation.reason


def test_a_list_titled_with_only_part_of_the_goal_is_not_the_target() -> None:
    goal = task(LIKED_PLAYLISTS, mode=PageMode.LIST_VIEW)
    page = profile(("为你推荐的歌单", ("晚安电台 | 播放 12万", "周末早晨 | 播放 8万", "通勤路上 | 播放 5万")))
    evaluation = evaluate_by_rules(goal, page)
    assert not evaluation.complete and "我喜欢" in evaluation.reason  # the liked entry leads on


# ----------------------------------------------------------------- charts, dead searches, readouts


@pytest.mark.parametrize("goal", [
    "Which songs top the charts on Example right now?",
    "Example 新歌榜前十名是哪些？",
    "Example의 인기 차트 1위는?",
])
def test_a_ranked_list_is_a_concept_in_every_language(goal: str) -> None:
    assert "charts" in find_goal_concepts(goal).named
    assert match_concept("排行榜", load_lexicon().concepts["charts"]) == 1.0


def test_the_apps_own_name_in_chinese_names_no_concept() -> None:
    # "中国移动" holds "国" (a country, the region concept) and "淘票票" holds "票" (tickets): a
    # character of the app's name is no word of the question. Before, both named a concept.
    assert "region" not in find_goal_concepts("中国移动里流量还剩多少？", None, "China Mobile").named
    assert "tickets" not in find_goal_concepts("淘票票上评分最高的是哪部？", None, "Taopiaopiao").named
    assert "region" in find_goal_concepts("中国移动里怎么改国家和地区？", None, "China Mobile").named


def test_a_short_word_is_not_a_long_label_one_letter_off() -> None:
    # "cart" is one letter from "chart": a question about the cart names no chart.
    assert "charts" not in find_goal_concepts("Which item in my Example cart costs the most?").named


def test_the_explorer_takes_over_where_every_form_of_the_term_found_nothing() -> None:
    # A later try starts on the home page, search box and all; the skills have no form of the
    # term left to search, so the explorer opens the entry naming what the goal asks for. Before,
    # it left the page to the skills' search and no policy acted ("no policy knew what to do").
    goal = task("Example 新歌榜前十名是哪些？", term="新歌榜")
    home = screen_of(title("Example"),
                     element("search", "", top=250, height=120, editable=True, clickable=True,
                             class_name="android.widget.EditText", content_desc="搜索歌曲、歌手"),
                     entry("daily", "每日推荐", 500, width=300), entry("charts", "排行榜", 500, left=380, width=300),
                     fingerprint="home")
    dead = PolicyContext(subtask=goal, perception=perceived(home), page_type=detect_page_type(home), step=1,
                         attempt=2, empty_searches=frozenset({"新歌榜", "新歌"}))
    decision = ExplorePolicy().decide(dead)
    assert decision is not None and isinstance(decision.action, Tap)
    assert tapped_label(decision.action.target, home) == "排行榜"
    alive = dead.model_copy(update={"empty_searches": frozenset({"新歌榜"})})
    assert ExplorePolicy().decide(alive) is None  # "新歌" is still to search: the skills go first


def test_a_readout_of_the_terms_value_is_the_target_on_any_page() -> None:
    # "How much data is left": the home page states it ("剩余流量 18.6GB"); a tappable offer's
    # price naming the same word is a way on, not the value asked for.
    goal = task("Example 里我的流量还剩多少？", term="流量")
    home = screen_of(title("Example"), element("summary", "剩余流量 18.6GB", top=300, height=80),
                     entry("me", "我的", 2100, width=300))
    evaluation = evaluate_by_rules(goal, home)
    assert evaluation.complete and "剩余流量 18.6GB" in evaluation.reason, evaluation.reason
    offer = screen_of(title("Example"), element("card", "", top=300, height=300, clickable=True),
                      element("name", "流量加油包 10GB ¥10", top=320, height=80), entry("me", "我的", 2100, width=300))
    assert not evaluate_by_rules(goal, offer).complete
    # A model number is the term, not its value: the results of a search for it are no readout.
    model = task("Example 上的 i5-14600KF 最高睿频是多少？", term="i5-14600KF")
    results = screen_of(title("i5-14600KF"), entry("filter", "综合 · 销量 · 价格", 300))
    assert not evaluate_by_rules(model, results).complete


def test_a_row_that_opens_nothing_is_read_on_the_page_that_lists_it() -> None:
    # The bills page names the goal ("账单": expenses); a row names more of it ("高德打车": a ride).
    # A row tappable neither itself nor inside a card opens nothing, so the bills page is the
    # answer; a card that opens its own page still leads on. Before, both were a step.
    goal = task("Example 上最近一次打车花了多少钱？")
    rows, texts = [], []
    for n, (name, amount) in enumerate([("瑞幸咖啡", "-13.90"), ("高德打车", "-18.60"), ("盒马鲜生", "-126.50")]):
        top = 300 + 200 * n
        rows.append(element(f"row{n}", top=top, height=180, class_name="android.widget.LinearLayout"))
        texts += [element(f"name{n}", name, top=top + 10, height=70, left=40, width=600),
                  element(f"amount{n}", amount, top=top + 90, height=70, left=40, width=600)]
    bills = screen_of(title("账单"), *rows, *texts)
    evaluation = evaluate_by_rules(goal, bills)
    assert evaluation.complete, evaluation.reason
    cards = screen_of(title("账单"), *(r.model_copy(update={"clickable": True}) for r in rows), *texts)
    assert not evaluate_by_rules(goal, cards).complete


# ----------------------------------------------------------------- switching a setting

PROFILE_TAB_HOME = screen_of(
    title("Example"),
    element("feed0", "Why do cats purr? | 12 answers", top=500, height=400, clickable=True),
    entry("tab_home", "Home", 2050, selected=True, width=360),
    entry("tab_spaces", "Groups", 2050, left=360, width=360),
    entry("tab_you", "You", 2050, left=720, width=360),
    fingerprint="home-you",
)


def test_a_setting_question_names_the_settings_pages_and_not_a_guide() -> None:
    for goal in ("How do I turn off read receipts on Example?", "如何关闭Example的个性化推荐",
                 "How to disable private messages?"):
        concepts = find_goal_concepts(goal)
        assert concepts.via.get("settings") == 1 and concepts.via.get("privacy") == 1, goal
        assert "guides" not in concepts.named, goal  # "how to" asks where, not for a guide
        assert concepts.via.get("me") == 2, goal  # the profile tab leads to the settings
    assert "settings" not in find_goal_concepts("How to change my train ticket?").via
    assert "guides" in find_goal_concepts("Travel tips: how to visit Kyoto").named


def test_on_the_first_page_with_nothing_named_the_profile_tab_is_tried() -> None:
    """Before, nothing named the goal on the app's first page and the try ended there."""
    goal = task("How to disable private messages on Example?")
    decision = ExplorePolicy().decide(context(PROFILE_TAB_HOME, goal))
    assert decision is not None and tapped_label(getattr(decision.action, "target", None), PROFILE_TAB_HOME) == "You"
    plain = task("Show my notifications on Example")
    decision = ExplorePolicy().decide(context(PROFILE_TAB_HOME, plain))
    assert decision is not None and tapped_label(getattr(decision.action, "target", None), PROFILE_TAB_HOME) == "You"
    # Deeper in, a page with nothing on the way goes back; it does not wander into the profile.
    inner = screen_of(title("A question"), entry("tab_you", "You", 2050, left=720, width=360), fingerprint="inner")
    moved = (TakenAction(action=Tap(target="feed0", reason="open"), instruction="Tap", policy="explore",
                         fingerprint="home-you"),)
    explorer = ExplorePolicy()
    explorer.decide(context(PROFILE_TAB_HOME, plain))
    assert isinstance(getattr(explorer.decide(context(inner, plain, history=moved)), "action", None), Back)


def test_the_settings_page_naming_the_setting_is_the_answer() -> None:
    goal = task("How to disable private messages on Example?")
    privacy = screen_of(
        title("Privacy"),
        element("header", "Inbox Preferences", top=300),
        element("who", "Who can send you messages?", top=420),
        element("anyone", "Anyone", top=540, clickable=True, checkable=True, class_name="android.widget.CheckBox"),
        element("no_one", "No one", top=660, clickable=True, checkable=True, class_name="android.widget.CheckBox"),
        entry("blocked", "Blocked users", 800),
        entry("download", "Download your data", 950),
        entry("deactivate", "Deactivate account", 1100),
        entry("delete", "Delete account", 1250),
        fingerprint="privacy",
    )
    verdict = evaluate_by_rules(goal, privacy)
    assert verdict.complete and not verdict.risk, verdict.reason
    settings = screen_of(title("Settings"), entry("account", "Account", 300), entry("privacy", "Privacy", 450),
                         entry("notify", "Notifications", 600), fingerprint="settings")
    assert not evaluate_by_rules(goal, settings).complete
    decision = ExplorePolicy().decide(context(settings, goal))
    assert decision is not None and tapped_label(getattr(decision.action, "target", None), settings) == "Privacy"
