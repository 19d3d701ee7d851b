"""Matching a question to an app map's screens, across Chinese and English."""

from __future__ import annotations

from inference.maps import MapQuery, coverage, rank_screens, reads_term
from tests.inference.maps.maps import settings_map


def _best(question: str, term: str | None = None) -> str:
    ranked = rank_screens(settings_map(), MapQuery.for_goal(question, term, ignore=("Settings",)))
    assert ranked, question
    return ranked[0][0].id


def test_a_page_that_shows_the_words_asked_is_the_best_screen() -> None:
    assert _best("What is the Android version of my phone?") == "about"


def test_an_english_question_finds_a_chinese_page_through_the_dictionary() -> None:
    assert _best("Show me my bills") == "bills"


def test_a_chinese_question_finds_an_english_page_through_the_dictionary() -> None:
    assert _best("手机的安卓版本是多少？") == "about"


def test_what_tapping_an_entry_showed_in_place_counts_for_its_screen() -> None:
    assert _best("How much battery is left?") == "home"


def test_coverage_is_the_share_of_the_question_words_a_page_shows() -> None:
    query = MapQuery.for_goal("What is the Android version?", None)
    assert coverage(query, ["Android version", "14"]) == 1.0
    assert coverage(query, ["Device name", "Pixel 7"]) == 0.0


def test_a_question_with_no_word_in_common_with_the_app_matches_nothing() -> None:
    assert rank_screens(settings_map(), MapQuery.for_goal("xylophone quartet", None)) == []


def test_a_term_is_read_as_a_whole_word_in_latin_and_inside_chinese_text() -> None:
    assert reads_term("Android version 14", "version")
    assert not reads_term("Conversion rates", "version")
    assert reads_term("本月账单明细", "账单")
