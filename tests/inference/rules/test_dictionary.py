"""CC-CEDICT both ways: a question's words find a screen's words in the other language."""

from __future__ import annotations

import pytest

from inference.rules import Dictionary, DictionaryEntry, load_dictionary


@pytest.fixture(scope="module")
def dictionary() -> Dictionary:
    return load_dictionary()


@pytest.mark.parametrize(("chinese", "english"), [
    ("设置", "set up"),  # CC-CEDICT: 设置 "to set up; to install" (its "setting" is 设定)
    ("设定", "setting"),
    ("版本", "version"),
    ("订单", "order"),
    ("价格", "price"),
    ("地址", "address"),
    ("电池", "battery"),
    ("历史", "history"),
    ("票", "ticket"),
    ("手机", "mobile phone"),  # a gloss of two words stays one search word
])
def test_english_for_common_ui_words(dictionary: Dictionary, chinese: str, english: str) -> None:
    assert english in dictionary.english_for(chinese)


@pytest.mark.parametrize(("english", "chinese"), [
    ("version", "版本"),
    ("price", "价格"),
    ("address", "地址"),
    ("battery", "电池"),
    ("history", "历史"),
    ("mobile phone", "手机"),
])
def test_chinese_for_puts_the_usual_word_first(dictionary: Dictionary, english: str,
                                               chinese: str) -> None:
    assert dictionary.chinese_for(english)[0] == chinese


@pytest.mark.parametrize(("english", "chinese"), [
    ("order", "订单"),  # among 命令, 秩序, ...: "order" has many meanings
    ("ticket", "票"),
    ("set up", "设置"),
    ("settings", "设定"),  # no gloss says "settings": its singular does
    ("Batteries", "电池"),  # case and plural
    ("login", "登录"),  # CC-CEDICT writes "to log in"
    ("to search", "搜索"),
])
def test_chinese_for_finds_the_word_among_the_best(dictionary: Dictionary, english: str,
                                                   chinese: str) -> None:
    found = dictionary.chinese_for(english)
    assert chinese in found
    assert len(found) <= 8


def test_exact_glosses_rank_before_words_inside_glosses(dictionary: Dictionary) -> None:
    found = dictionary.chinese_for("ticket")
    assert "票价" not in found[:3]  # "ticket price" has the word; 票, 门票, 车票 are "ticket"
    assert {"门票", "车票"} <= set(found)


def test_traditional_input_gives_the_same_words(dictionary: Dictionary) -> None:
    assert dictionary.english_for("價格") == dictionary.english_for("价格")
    assert dictionary.english_for("設置") == dictionary.english_for("设置")
    assert "battery" in dictionary.english_for("電池")


def test_a_phrase_that_is_no_entry_is_cut_into_words(dictionary: Dictionary) -> None:
    glosses = dictionary.english_for("安卓版本")
    assert "android" in glosses
    assert "version" in glosses


def test_grammar_words_of_a_phrase_give_nothing(dictionary: Dictionary) -> None:
    glosses = dictionary.english_for("我的订单")
    assert "order" in glosses
    assert not {"i", "me", "my", "of"} & set(glosses)


@pytest.mark.parametrize("word", ["", "   ", "qwertyuiop", "龘龘龘龘"])
def test_unknown_words_give_nothing(dictionary: Dictionary, word: str) -> None:
    assert dictionary.english_for(word) == ()
    assert dictionary.chinese_for(word) == ()


@pytest.mark.parametrize("chinese", ["价格", "历史", "票", "单", "手机", "猫", "电池", "搜索"])
def test_glosses_are_clean_search_words(dictionary: Dictionary, chinese: str) -> None:
    glosses = dictionary.english_for(chinese)
    assert glosses
    for gloss in glosses:
        assert gloss == gloss.lower().strip()
        assert not any(mark in gloss for mark in ("cl:", "[", "(", "surname", "variant of"))
        assert not gloss.startswith("to ")
        assert len(gloss.split()) <= 4


def test_the_index_holds_no_measure_words_or_pointers(dictionary: Dictionary) -> None:
    assert dictionary.chinese_for("CL:") == ()
    assert dictionary.chinese_for("surname") == ()
    assert dictionary.chinese_for("variant of") == ()


def test_translate_terms_goes_each_way(dictionary: Dictionary) -> None:
    found = dictionary.translate_terms(["价格", "battery", "qwertyuiop"])
    assert "price" in found["价格"]
    assert found["battery"][0] == "电池"
    assert found["qwertyuiop"] == ()


def test_ranking_on_a_small_dictionary() -> None:
    small = Dictionary([
        DictionaryEntry("票價", "票价", ("ticket price", "fare")),
        DictionaryEntry("罰單", "罚单", ("fine", "ticket")),
        DictionaryEntry("票", "票", ("ticket", "ballot")),
    ], frequency={"票": 2000, "罚单": 50})
    assert small.chinese_for("ticket") == ("票", "罚单", "票价")  # exact, first sense first
    assert small.chinese_for("tickets", limit=1) == ("票",)
    assert small.english_for("票價") == ("ticket price", "fare")


def test_the_dictionary_is_loaded_once() -> None:
    assert load_dictionary() is load_dictionary()
