"""What a question asks of its answer's shape, read without a model (inference/rules/answer_shape.py)."""

from __future__ import annotations

from datetime import date

import pytest

from inference.rules.answer_shape import AnswerFormat, Order, read_answer_request, record_state


@pytest.mark.parametrize(("question", "fmt"), [
    ("List the orders as a table", AnswerFormat.TABLE),
    ("把结果做成表格", AnswerFormat.TABLE),
    ("帮我列个表：名字和价格", AnswerFormat.TABLE),
    ("Make a table of the fares", AnswerFormat.TABLE),
    ("列表里有哪些歌？", AnswerFormat.LIST),  # 列表 is "a list", not a table
    ("Which songs are trending? Only the names", AnswerFormat.NAMES),
    ("只要名字", AnswerFormat.NAMES),
    ("Tell me in one sentence", AnswerFormat.SENTENCE),
    ("Show my orders", AnswerFormat.LIST),
])
def test_format_requests_in_english_and_chinese(question: str, fmt: AnswerFormat) -> None:
    assert read_answer_request(question).format is fmt


def test_order_and_count() -> None:
    cheapest = read_answer_request("just the cheapest one")
    assert (cheapest.order, cheapest.limit) == (Order.CHEAPEST, 1)
    several = read_answer_request("the 3 cheapest hotels")
    assert (several.order, several.limit) == (Order.CHEAPEST, 3)
    chinese = read_answer_request("价格最低的3个")
    assert (chinese.order, chinese.limit) == (Order.CHEAPEST, 3)
    assert read_answer_request("top 5 films").limit == 5
    assert read_answer_request("热榜前三").limit == 3
    assert not read_answer_request("What is on the page?").shaped


def test_the_last_time_is_one_record_the_newest() -> None:
    for question in ("最近一次打车花了多少钱？", "What did I pay the last time I took a taxi?"):
        newest = read_answer_request(question)
        assert (newest.order, newest.limit) == (Order.NEWEST, 1), question
    assert read_answer_request("上周的订单").order is Order.AS_SHOWN  # a date filter, not one record


def test_number_ranges_with_units() -> None:
    under = read_answer_request("headphones under $100").price
    assert under is not None and (under.low, under.high) == (None, 100.0)
    assert under.holds(99.5) and not under.holds(120)
    between = read_answer_request("trips costing 15-20 yuan").price
    assert between is not None and (between.low, between.high) == (15.0, 20.0)
    chinese = read_answer_request("500元以下的耳机").price
    assert chinese is not None and chinese.high == 500.0


def test_times_of_day_and_dates_relative_to_the_phone() -> None:
    evening = read_answer_request("rides in the evening").time_of_day
    assert evening is not None and evening.holds(21 * 60) and not evening.holds(9 * 60)
    after = read_answer_request("trains after 18:00").time_of_day
    assert after is not None and after.holds(18 * 60 + 5) and not after.holds(17 * 60)
    last_month = read_answer_request("orders last month").dates
    assert last_month is not None
    assert last_month.span(date(2025, 6, 23)) == (date(2025, 5, 1), date(2025, 5, 31))
    months = read_answer_request("trips from May to August").dates
    assert months is not None and months.months() == (5, 8)
    assert read_answer_request("5月到8月的账单").dates is not None


def test_what_costs_the_most_or_least_is_one_record() -> None:
    dearest = read_answer_request("Which item in my cart costs the most?")
    assert (dearest.order, dearest.limit) == (Order.DEAREST, 1)
    assert read_answer_request("What costs least here?").order is Order.CHEAPEST


def test_counts_of_what_the_records_show_with_magnitudes() -> None:
    cases = {
        "Which channels have more than a million subscribers?": (1e6, None, "subscribers"),
        "podcasts with over 10k listens": (1e4, None, "listens"),
        "posts with fewer than 500 comments": (None, 500.0, "comments"),
        "粉丝超过100万的博主有哪些": (1e6, None, "粉丝"),
        "播放量过百万的视频": (1e6, None, "播放"),
        "超过1万人评价的餐厅": (1e4, None, "评价"),
        "10万粉丝以上的账号": (1e5, None, "粉丝"),
    }
    for question, (low, high, unit) in cases.items():
        count = read_answer_request(question).count
        assert count is not None and (count.low, count.high, count.unit) == (low, high, unit), question
    fans = read_answer_request("粉丝超过100万的博主").count
    assert fans is not None and "followers" in fans.counted  # either language names them
    plain = read_answer_request("accounts with more than 1000 followers")
    assert plain.price is None and plain.count is not None  # a count, not a price
    assert read_answer_request("more than 2 hours").count is None  # a duration counts nothing
    assert read_answer_request("headphones under $100").count is None


def test_one_record_by_its_place_on_a_list() -> None:
    cases = {"Which film is number 7 on the chart?": 7, "the 3rd song on my playlist": 3, "#2 on the list": 2,
             "排名第三的电影是什么": 3, "榜单第7名是哪本书": 7, "第十二名": 12, "the second cheapest hotel": 2}
    for question, position in cases.items():
        assert read_answer_request(question).position == position, question
    for question in ("trains on the 12th", "第二学期的成绩", "my phone number", "the second half of May"):
        assert read_answer_request(question).position is None, question
    second = read_answer_request("the second cheapest hotel")
    assert second.order is Order.CHEAPEST and second.shaped


def test_a_state_the_records_show() -> None:
    cases = {"Which permissions were denied?": "denied", "哪些权限被拒绝了": "denied",
             "还在路上的快递有哪些": "in transit", "parcels out for delivery": "in transit",
             "哪些订单还没付款": "unpaid", "Which apps are allowed to use the camera?": "allowed"}
    for question, state in cases.items():
        asked = read_answer_request(question).state
        assert asked is not None and asked.state == state, question
    assert read_answer_request("How much did I pay for my last ride?").state is None
    # A record's state is its longest state word: "Not allowed" is denied, not allowed.
    assert record_state("Microphone | Not allowed") == "denied"
    assert record_state("Location | Allowed only while in use") == "allowed"
    assert record_state("包裹 · 已签收") == "signed for"
    # A parcel delivered to a station waits there: "delivered" names no one state.
    assert read_answer_request("List delivered packages by express station.").state is None
    assert record_state("Camera") is None


def test_the_most_often_listed_across_lists() -> None:
    top = read_answer_request("Identify the top 3 most frequent films across the charts.")
    assert (top.order, top.limit) == (Order.MOST_FREQUENT, 3)
    one = read_answer_request("各个榜单里出现次数最多的歌手是谁？")
    assert (one.order, one.limit) == (Order.MOST_FREQUENT, 1)
    assert read_answer_request("the most recent order").order is not Order.MOST_FREQUENT
