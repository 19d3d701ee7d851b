"""Results lists by structure (mixed card heights), item times, and "the latest" item of a list."""

from __future__ import annotations

import functools

import pytest

from core.models import PageMode, PageType, Screen, SubTask, Tap, UIElement
from inference.policies import ExplorePolicy, PolicyContext, is_forbidden_tap
from inference.rules import (
    detect_page_type,
    evaluate_by_rules,
    find_list_items,
    read_item_time,
    read_time,
)
from tests.inference.screens import element, perceived, screen_of
from tests.support.droidbot import DATA_DIR, iter_states

PKG = "com.example.mail"
_CARD = "android.widget.LinearLayout"


def card(cid: str, top: int, height: int, *lines: str, **fields: object) -> UIElement:
    """A card as perception gives it: clickable, its texts merged into one label."""
    return element(cid, " | ".join(lines), top=top, height=height, left=44, width=992, clickable=True,
                   class_name=_CARD, **fields)


def heading(text: str) -> UIElement:
    return element("heading", text, top=100, height=84, left=176, width=860)


# ------------------------------------------------------------- results lists


def test_two_notes_of_different_heights_after_a_search_are_a_list() -> None:
    screen = screen_of(
        heading("奥兰多迪士尼"),
        element("ad", "推广", top=331, height=192, left=44, width=992, class_name="android.widget.ImageView"),
        card("n1", 551, 384, "奥兰多迪士尼 4 天 3 晚保姆级攻略", "去年带爸妈玩了四天，把踩过的坑都整理好了", "环球旅行的小熊 · ♥ 5120"),
        card("n2", 957, 327, "奥兰多迪士尼必吃清单", "园区里的火鸡腿 $14.5", "吃货旅行记 · ♥ 2033 · 05-29"),
    )
    assert detect_page_type(screen) is PageType.RESULTS_LIST
    assert [i.id for i in find_list_items(screen)] == ["n1", "n2"]


def test_cards_of_two_shapes_with_an_odd_banner_are_one_list() -> None:
    # Tickets (title + price) and guides (title + excerpt + meta), 204 to 384 px tall, and a
    # banner card without a meta line: heights alone would not see a list.
    screen = screen_of(
        heading("搜索结果"),
        card("t1", 425, 204, "1 日票", "¥1089 起 · 已售 2.1万"),
        card("t2", 651, 204, "4 日票 + Park Hopper", "¥3980 起 · 已售 8600"),
        card("banner", 877, 120, "限时特惠"),
        card("g1", 1020, 384, "全攻略：门票、园区、交通、住宿", "四大主题乐园怎么排？", "携程旅行家·Momo · 12.8万 浏览"),
        card("g2", 1430, 327, "哈利波特魔法世界一日游路线", "两个园区之间坐特快列车。", "主题乐园达人 · 6.2万 浏览"),
    )
    assert detect_page_type(screen) is PageType.RESULTS_LIST
    assert {"t1", "g1", "g2", "banner"} <= {i.id for i in find_list_items(screen)}


def test_a_settings_page_and_two_search_history_rows_are_not_results() -> None:
    settings = screen_of(
        heading("Settings"),
        card("s1", 300, 224, "Article font size", "Normal"),
        card("s2", 530, 420, "Offline reading", "Only over Wi-Fi", "Download news text when idle"),
        card("s3", 960, 224, "Edition", "United States"),
    )
    assert detect_page_type(settings) is PageType.SETTINGS and find_list_items(settings) == ()
    # Each history row: a keyword and a clickable "Remove" button, which is an action, not a line.
    rows = []
    for i, word in enumerate(("#acimafinance", "aa")):
        top = 1141 + i * 172
        rows += [
            element(f"row{i}", top=top, height=168, left=28, width=1384, clickable=True, class_name=_CARD),
            element(f"kw{i}", word, top=top, height=168, left=84, width=995, parent_id=f"row{i}"),
            element(f"rm{i}", "Remove", top=top, height=168, left=1135, width=249, clickable=True,
                    parent_id=f"row{i}"),
        ]
    search = screen_of(element("box", "Search 5miles", top=200, height=120, editable=True, focused=True), *rows)
    assert detect_page_type(search) is PageType.SEARCH_INPUT


@functools.cache
def _real_types() -> dict[str, PageType]:
    return {p.name: detect_page_type(s) for folder in ("droidbot-real", "droidbot-qqmusic")
            for p, s in iter_states(folder)}


@pytest.mark.skipif(not DATA_DIR.is_dir(), reason="the real recordings are not on this machine")
@pytest.mark.parametrize(("state", "expected"), [
    ("state_2023-12-31_211057.json", PageType.RESULTS_LIST),  # 5miles: product grid, cards of two heights
    ("state_2024-01-22_234628.json", PageType.RESULTS_LIST),  # Wish: products, one card cut off
    ("state_2024-01-24_184132.json", PageType.SETTINGS),  # SmartNews settings: "Edition | United States"
    ("state_2024-01-22_005449.json", PageType.SEARCH_INPUT),  # 5miles search history with Remove buttons
    ("state_2024-01-21_202204.json", PageType.OTHER),  # 5miles profile: sections that are not tappable
])
def test_real_screens_by_structure(state: str, expected: PageType) -> None:
    assert _real_types()[state] is expected


# ------------------------------------------------------------- item times


@pytest.mark.parametrize(("text", "newer_than"), [
    ("10:24", "昨天"),
    ("Yesterday 18:02", "Mon"),
    ("3 小时前", "6月23日"),
    ("06-23 08:42", "06-22 19:26"),
    ("6月23日", "2024-12-30"),  # a date without its year is this year's
    ("3:05 PM", "下午 2:55"),
])
def test_times_and_dates_order_newest_last(text: str, newer_than: str) -> None:
    newer, older = read_time(text), read_time(newer_than)
    assert newer is not None and older is not None and newer.key > older.key


@pytest.mark.parametrize("text", ["2万+人付款", "赞同 2105", "¥24.5", "4.8", "13:99", "1205 个回答"])
def test_counts_prices_and_ratings_are_not_times(text: str) -> None:
    assert read_time(text) is None


def test_an_items_stamp_is_its_time_line_not_a_date_in_its_summary() -> None:
    stamp = read_item_time(["招商银行信用卡", "到期还款日 7 月 12 日", "06-21 10:15"])
    assert stamp is not None and (stamp.month, stamp.day) == (6, 21)
    assert read_item_time(["吃货旅行记 · ♥ 2033 · 05-29"]) is not None


# ------------------------------------------------------------- the latest item


def latest_task(mode: PageMode = PageMode.FOCUSED) -> SubTask:
    return SubTask(id="t1", app_label="Mail", package=PKG, goal="Check my latest email.", page_mode=mode)


def inbox(*mails: tuple[str, str, str]) -> Screen:
    cards = [card(f"m{i}", 500 + i * 330, 322, sender, subject, f"{subject}：详情请查看邮件正文内容。", when)
             for i, (sender, subject, when) in enumerate(mails)]
    return screen_of(heading("收件箱"), *cards, package=PKG)


def explore(screen: Screen, subtask: SubTask) -> str:
    context = PolicyContext(subtask=subtask, perception=perceived(screen), page_type=detect_page_type(screen), step=1)
    decision = ExplorePolicy().decide(context)
    assert decision is not None and isinstance(decision.action, Tap)
    found = screen.element(decision.action.target or "")
    return found.label.split(" | ")[1] if found is not None else ""


def test_the_inbox_is_a_step_for_the_latest_mail_and_a_mail_about_a_login_is_opened() -> None:
    screen = inbox(("网易帐号中心", "网易帐号登录确认", "06-23 08:42"),
                   ("中国铁路12306", "网上购票系统-用户支付通知", "06-22 19:26"),
                   ("招商银行信用卡", "您的 6 月电子账单已出", "06-21 10:15"))
    evaluation = evaluate_by_rules(latest_task(), screen)
    assert not evaluation.complete and "latest item" in evaluation.reason
    assert evaluate_by_rules(latest_task(PageMode.LIST_VIEW), screen).complete  # the list itself
    assert explore(screen, latest_task()) == "网易帐号登录确认"


def test_the_newest_by_its_time_is_opened_when_a_list_is_oldest_first() -> None:
    screen = inbox(("王磊", "周报模板更新", "06-21 08:55"), ("李娜", "会议纪要", "昨天"), ("张伟", "午饭吃什么", "10:24"))
    assert explore(screen, latest_task()) == "午饭吃什么"


def test_a_pay_button_is_still_never_tapped_a_content_card_may_be() -> None:
    pay = element("pay", "立即支付 | ¥24.5", top=2000, height=140, clickable=True)
    mail = card("mail", 500, 322, "网易帐号中心", "网易帐号登录确认", "您的帐号在新设备上登录", "06-23 08:42")
    screen = screen_of(pay, mail)
    assert is_forbidden_tap(pay, screen) and not is_forbidden_tap(mail, screen)


def test_a_list_headed_by_what_holds_the_goal_is_reached_when_its_records_name_it() -> None:
    # "Which memberships renew by themselves?" (the lexicon: automatic payments hold renewals):
    # the automatic payments page, whose records name renewals and memberships, is the list
    # wanted. Before, the explorer backed out of it ("no concept of the goal heads the page").
    goal = SubTask(id="t", app_label="Pay", package=PKG, goal="In Pay: 开通了自动续费的会员有哪些？",
                   search_term=None, page_mode=PageMode.LIST_VIEW)
    records = [card(f"r{n}", 400 + 220 * n, 200, name, f"自动扣款 · 连续包月 ¥{15 + n}/月", f"开通时间 2022-0{n + 1}-01")
               for n, name in enumerate(("影视VIP会员", "动画会员", "单车骑行卡"))]
    page = screen_of(heading("自动扣款"), *records, package=PKG)
    evaluation = evaluate_by_rules(goal, page)
    assert evaluation.complete, evaluation.reason
    assert "holds what the goal asks for" in evaluation.reason
    # A hub of short entries naming the goal is a way on, not the list.
    hub = screen_of(heading("自动扣款"), *(card(f"e{n}", 400 + 150 * n, 120, label)
                                          for n, label in enumerate(("会员自动续费", "会员中心", "帮助"))),
                    package=PKG)
    assert not evaluate_by_rules(goal, hub).complete
