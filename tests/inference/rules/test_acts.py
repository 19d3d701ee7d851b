"""Requests to act ("top up my phone by 50 yuan", "帮我下单") told apart from questions about acts
("How much did I pay last month?", "我的订单到哪了"), in four languages, and planned as requests."""

from __future__ import annotations

import pytest

from core.models import ActKind, InstalledApp, PageMode, Query, RiskCategory
from inference.llm_roles.decomposer import DecompositionAnswer, plan_from_answer
from inference.rules import decompose_by_rules, evaluate_by_rules
from inference.rules.acts import find_act_button, find_act_request, names_act
from suites import load_suite
from tests.inference.screens import button, element, screen_of

CHINA_MOBILE = InstalledApp(package="com.greenpoint.android.mc10086.activity", label="China Mobile")
ALIPAY = InstalledApp(package="com.eg.android.AlipayGphone", label="Alipay")
MEITUAN = InstalledApp(package="com.sankuai.meituan", label="Meituan")


@pytest.mark.parametrize(("text", "kind"), [
    # English
    ("top up my phone by 50 yuan", ActKind.TOP_UP),
    ("Please recharge my phone with 100 yuan", ActKind.TOP_UP),
    ("book a table for two", ActKind.BOOK),
    ("I'd like to book a hotel in Shanghai for tonight", ActKind.BOOK),
    ("send 100 to Alice", ActKind.SEND),
    ("Can you order me a Big Mac on Meituan?", ActKind.ORDER),
    ("Buy the cheapest 27-inch monitor on JD", ActKind.ORDER),
    ("Pay my electricity bill", ActKind.PAY),
    ("Transfer 500 yuan to Bob", ActKind.TRANSFER),
    ("Post a photo of my cat", ActKind.POST),
    ("Delete my last post", ActKind.DELETE),
    ("On Meituan, order a latte", ActKind.ORDER),
    # Chinese
    ("给我的手机充值50元", ActKind.TOP_UP),
    ("帮我下单", ActKind.ORDER),
    ("帮我在美团上点一份巨无霸", ActKind.ORDER),
    ("能帮我充值50元吗？", ActKind.TOP_UP),
    ("用支付宝给妈妈转账100元", ActKind.TRANSFER),
    ("帮我订一张明天去杭州的火车票", ActKind.BOOK),
    ("帮我删除这条微博", ActKind.DELETE),
    ("发一条微博说我到家了", ActKind.POST),
    ("帮我缴费", ActKind.PAY),
    # Korean
    ("5만원 충전해 주세요", ActKind.TOP_UP),
    ("엄마한테 10만원 송금해줘", ActKind.TRANSFER),
    ("식당 예약하고 싶어요", ActKind.BOOK),
    ("커피 사줘", ActKind.ORDER),
    # Japanese
    ("50円チャージして", ActKind.TOP_UP),
    ("レストランを予約してください", ActKind.BOOK),
    ("お母さんに1万円送金して", ActKind.TRANSFER),
    ("最後の投稿を削除して", ActKind.DELETE),
])
def test_a_request_to_act_is_recognised_with_its_kind(text: str, kind: ActKind) -> None:
    found = find_act_request(text, [CHINA_MOBILE, ALIPAY, MEITUAN])
    assert found is not None and found.kind is kind, found
    assert found.words and found.words.casefold() in text.casefold()


@pytest.mark.parametrize("text", [
    # English: questions about acts, noun phrases, past forms, how-to
    "how much did I pay last month?",
    "what did I order?",
    "which restaurants can I book?",
    "How do I top up?",
    "Did I pay the bill?",
    "Order history on Taobao",
    "Book reviews on Douban",
    "Ordering a Big Mac from McDonald's, Meituan or Ele.me?",
    "I want to buy a laptop under 5000 yuan, which one is best?",
    "When is my next payment due?",
    # Chinese: question words, records, states, past acts, a look first, the app's name
    "我的订单到哪了",
    "我上个月充值了多少",
    "帮我查一下充值记录",
    "已支付的订单",
    "付款码在哪",
    "我买的是哪天的车",
    "支付宝里我开通了哪个共享单车的自动扣款？",
    "上次充值成功了吗",
    # Korean
    "이번 달 얼마 결제했어?",
    "예약할 수 있는 식당은?",
    # Japanese
    "先月いくら払った？",
    "何を注文した？",
])
def test_a_question_about_acts_is_a_question(text: str) -> None:
    assert find_act_request(text, [CHINA_MOBILE, ALIPAY, MEITUAN]) is None


def test_no_question_of_the_suites_is_taken_for_a_request_to_act() -> None:
    # The paper's, the examples', the general and the dev questions all ask to find out.
    tasks = load_suite("paper", "examples", "general", "dev")
    assert len(tasks) > 100
    acting = [(t.id, t.query, found.kind.value) for t in tasks
              if (found := find_act_request(t.query)) is not None]
    assert acting == []


def test_the_plan_of_a_request_says_the_agent_does_not_act_and_opens_where_it_is_done() -> None:
    plan = decompose_by_rules(Query(text="给我的手机充值50元", apps=("China Mobile",)), [CHINA_MOBILE])
    act = plan.act_request
    assert act is not None and act.kind is ActKind.TOP_UP and act.words == "充值"
    assert "\n" not in act.notice and "does not top up" in act.notice
    assert "never pays, orders, books, sends, transfers, posts or deletes" in act.notice
    assert "pauses there for you" in act.notice
    (task,) = plan.subtasks
    assert task.act is ActKind.TOP_UP and task.page_mode is PageMode.FOCUSED
    assert task.goal.startswith("In China Mobile, open where to top up and stop there: ")


def test_a_question_plans_no_act() -> None:
    plan = decompose_by_rules(Query(text="我手机话费还剩多少？", apps=("China Mobile",)), [CHINA_MOBILE])
    assert plan.act_request is None and all(s.act is None for s in plan.subtasks)


def test_the_models_plan_of_a_request_is_one_too() -> None:
    # The decomposer model's answer goes through the same plan builder: its search and mode are
    # kept for the way there, the act is the plan's.
    answer = DecompositionAnswer.model_validate({
        "mentioned_apps": ["Meituan"], "installed_related_apps": [], "uninstalled_related_apps": [],
        "search terms": ["Big Mac"], "search_mode": "multi_page", "information_flow": []})
    plan = plan_from_answer(answer, Query(text="Order a Big Mac on Meituan"), [MEITUAN], decomposer="llm:m")
    assert plan.act_request is not None and plan.act_request.kind is ActKind.ORDER
    (task,) = plan.subtasks
    assert task.search_term == "Big Mac" and task.page_mode is PageMode.FOCUSED and task.act is ActKind.ORDER
    assert task.goal.startswith('In Meituan, search for "Big Mac", then open where to order and stop there')


@pytest.mark.parametrize(("label", "kind", "acts"), [
    ("充值", ActKind.TOP_UP, True),
    ("话费充值", ActKind.TOP_UP, True),
    ("Top up", ActKind.TOP_UP, True),
    ("충전하기", ActKind.TOP_UP, True),
    ("充值记录", ActKind.TOP_UP, False),  # a page of records
    ("自动充值", ActKind.TOP_UP, False),  # a standing arrangement
    ("Book now", ActKind.BOOK, True),
    ("Booking.com", ActKind.BOOK, False),  # a word inside another
    ("立即购买", ActKind.ORDER, True),
    ("My orders", ActKind.ORDER, False),
    ("已支付", ActKind.PAY, False),  # a state
    ("Alipay", ActKind.PAY, False),
    ("Cancel", ActKind.DELETE, False),
])
def test_the_acts_button_is_told_from_a_way_to_its_records(label: str, kind: ActKind, acts: bool) -> None:
    assert names_act(label, kind) is acts


def test_the_page_with_the_acts_button_pauses_for_the_person() -> None:
    plan = decompose_by_rules(Query(text="Top up my phone by 50 yuan", apps=("China Mobile",)), [CHINA_MOBILE])
    (task,) = plan.subtasks
    home = screen_of(element("balance", "话费余额", top=200), button("records", "充值记录", 400),
                     button("recharge", "充值", 600))
    assert find_act_button(home, ActKind.TOP_UP) == home.element("recharge")
    verdict = evaluate_by_rules(task, home)
    assert verdict.risk and verdict.risk_category is RiskCategory.PAYMENT and not verdict.complete
    assert verdict.reason.startswith('[act_page] "充值" is where to top up: the agent does not top up')
    # The records page answers no request to act, however well its heading names top-ups.
    records = screen_of(element("title", "充值记录", top=100), element("r1", "2024-10-06 · ¥50.00", top=300))
    verdict = evaluate_by_rules(task, records)
    assert not verdict.complete and not verdict.risk and verdict.reason.startswith("[act_page] ")
