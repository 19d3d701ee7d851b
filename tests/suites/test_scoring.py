"""Honest scoring: a point counts only as a cited answer, the right record, once."""

from __future__ import annotations

import pytest

from core.models import LineSpan
from suites import SuiteError, score_report
from suites.quantities import QuantityKind, read_quantities, read_quantity
from suites.scoring import PointMatcher, iter_claims, normalise_text


@pytest.mark.parametrize(("point", "claim"), [
    ("15小时12分", "The drive takes 15 h 12 min by the fastest route."),
    ("15 h 12 min", "驾车约 15小时12分"),
    ("¥25.5", "Big Mac: 25.50元 on Meituan"),
    ("25.50元", "| price | ¥25.5 |"),
    ("¥3,286.50", "本期应还 3286.5 元"),
    ("3.1M", "Red Velvet has 310万 members"),
    ("5.9 亿美元", "global gross about US$590,000,000"),
    ("1432公里", "distance 1,432 km"),
    ("9.4分", "豆瓣评分 9.4"),
    ("US$35.00", "minimum payment $35"),
    ("1.8kg", "weighs 1800 g"),
    ("约28分钟送达", "| Delivery time | 28分钟 |"),  # one value with a unit among words
    ("过路费¥712", "tolls: 712元"),
])
def test_a_value_matches_however_it_is_written(point: str, claim: str) -> None:
    assert PointMatcher(point).matches(claim)


@pytest.mark.parametrize(("point", "claim"), [
    ("¥25.5", "¥125.5"),  # another number
    ("¥25.5", "US$25.5"),  # another currency
    ("15小时12分", "15小时41分"),
    ("9.4分", "9.4 km"),  # another kind
    ("G7371", "G73711"),
    ("25.5", "¥2.55"),
    ("月售3200", "3200"),  # a bare number among words is compared as text
    ("约28分钟送达", "28 km"),
])
def test_a_different_value_does_not_match(point: str, claim: str) -> None:
    assert not PointMatcher(point).matches(claim)


def test_text_points_compare_without_spaces_case_emphasis_or_number_spelling() -> None:
    assert normalise_text("**6 月 28 日** 在首尔") == normalise_text("6月28日在首尔")
    assert PointMatcher("Two all-beef patties").matches("**two ALL-beef** patties, special sauce")
    assert PointMatcher("月售3200").matches("月售 3,200")
    assert PointMatcher("实付 ¥68.00").matches("实付 ¥68")
    assert not PointMatcher("满30减5").matches("满30减6")


def test_tolerance_in_the_points_unit_or_relative() -> None:
    assert PointMatcher("15小时12分", "±1小时").matches("about 16 hours")
    assert not PointMatcher("15小时12分", "±1小时").matches("about 17 hours")
    assert PointMatcher("¥100", "5%").matches("¥104.9")
    assert not PointMatcher("¥100", "5%").matches("¥106")
    with pytest.raises(SuiteError, match="not in the unit"):
        PointMatcher("15小时12分", "1km")
    with pytest.raises(SuiteError, match="cannot apply"):
        PointMatcher("满30减5", "1")


def test_quantities_in_chinese_and_english() -> None:
    kinds = [(q.kind, q.value, q.currency) for q in read_quantities(
        "约28分钟送达 · 配送费¥5.0 · 距离1.2km · 好评率98% · 月售3200")]
    assert kinds == [(QuantityKind.DURATION, 28, ""), (QuantityKind.MONEY, 5.0, "CNY"),
                     (QuantityKind.DISTANCE, 1200.0, ""), (QuantityKind.PERCENT, 98, ""),
                     (QuantityKind.COUNT, 3200, "")]
    # Times, dates, versions and model numbers are not quantities.
    assert read_quantities("2024-05-06 17:26 · G7371 · i5-8400 · v6.8.14") == []
    assert read_quantity("约221g") is None  # a value with words around it is compared as text
    assert read_quantity("¥68.00") is not None


def test_only_cited_claims_outside_page_dumps_count() -> None:
    markdown = "\n".join([
        "# Which trains leave before 9?",  # 0: a heading without a citation
        "> **Extractive summary** G7301 appears in the banner",  # 1: not cited
        "- **G7301** [c1(G7301)] 06:12 → 07:25 [c1(06:12 → 07:25)]",  # 2: a claim
        "G7311 leaves at 07:05.",  # 3: uncited: not a claim
        "What the captured pages say:",  # 4
        "- D3061 [c2(D3061)]",  # 5: a page dump
        "| G1503 | 08:20 [c2(08:20)] |",  # 6: a table row, a claim
    ])
    score = score_report(markdown, ["G7301", "06:12", "G7311", "D3061"], ["G1503"],
                         page_dumps=[LineSpan(start=5, end=6)])
    assert score.found == ("G7301", "06:12")
    assert score.missed == ("G7311", "D3061")
    assert score.wrong == ("G1503",)
    assert score.coverage == 0.5 and score.accuracy == pytest.approx(2 / 3)
    assert not score.fully_answered


def test_a_point_in_a_citations_quote_is_not_stated() -> None:
    score = score_report("- **Big Mac** [c1(Big Mac | ¥25.5)]", ["¥25.5"])
    assert score.found == () and score.claims == 1 and score.redundant_claims == 1


def test_sentences_are_claims_and_a_trailing_citation_belongs_to_its_sentence() -> None:
    claims = iter_claims("The cheapest is Ele.me at ¥22.9. [c1(¥22.9)] Meituan asks ¥25.5 [c2(¥25.5)]。"
                         "McDonald's was not checked.")
    assert [c.text for c in claims] == ["The cheapest is Ele.me at ¥22.9 .", "Meituan asks ¥25.5 。"]


def test_duplicates_count_once_and_repeated_points_need_their_own_claims() -> None:
    twice = "- G7301 ¥117.5 [c1(x)]\n- G7301 ¥117.5 [c1(x)]"
    assert score_report(twice, ["G7301"]).found == ("G7301",)
    # Two trains at the same fare: each needs a claim of its own.
    one_row = "- G7301 ¥117.5 [c1(x)]"
    assert score_report(one_row, ["¥117.5", "¥117.5"]).found == ("¥117.5",)
    assert score_report(twice, ["¥117.5", "¥117.5"]).found == ("¥117.5", "¥117.5")


def test_redundancy_is_the_share_of_claims_tied_to_no_point() -> None:
    markdown = "- 喜茶 多肉葡萄 ¥28.0 [c1(¥28.0)]\n- 奶茶 ¥35.0 [c1(¥35.0)]\n- 芝芝莓莓 [c1(芝芝莓莓)]"
    score = score_report(markdown, ["¥28.0"], ["¥35.0"])
    assert score.claims == 3 and score.redundant_claims == 1  # the wrong value is not irrelevant
    assert score.redundancy == pytest.approx(1 / 3) and score.accuracy == 0.5


def test_a_report_without_claims_has_no_accuracy_or_redundancy() -> None:
    score = score_report("# Nothing\n\nNo screen was captured in this app.", ["¥28.0"])
    assert score.coverage == 0 and score.accuracy is None and score.redundancy is None
    with pytest.raises(SuiteError, match="at least one scoring point"):
        score_report("x", [])
