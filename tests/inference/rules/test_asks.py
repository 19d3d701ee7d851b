"""What a question asks of its answer's shape, read without a model (inference/rules/asks.py)."""

from __future__ import annotations

from datetime import date

import pytest

from inference.rules.asks import AnswerFormat, Order, read_answer_request


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
