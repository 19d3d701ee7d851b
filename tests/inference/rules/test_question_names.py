"""Question understanding without a model: app names inside Chinese text, short names, whole words."""

from __future__ import annotations

import pytest

from core.models import InstalledApp, Query
from device_farm.sim import load_catalog
from inference.rules import decompose_by_rules, find_mentioned_apps
from inference.rules.apps import load_app_aliases
from inference.rules.decomposer import extract_search_terms

# The virtual phones' launcher: the labels and packages of the real apps they imitate.
INSTALLED = tuple(InstalledApp(label=a.label, package=a.package) for a in load_catalog().apps.values())


def labels(text: str) -> list[str]:
    return [a.label for a in find_mentioned_apps(text, INSTALLED)]


@pytest.mark.parametrize(("question", "app"), [
    ("在JD上买显示器哪款最便宜？", "JD"),  # a Latin name right before Chinese
    ("DiDi上我最近的行程", "DiDi"),
    ("12306里我的订单", "12306"),
    ("Rednote上有人说过吗", "Rednote"),
    ("B站上的视频播放量", "Bilibili"),  # short names people use
    ("滴滴打车记录", "DiDi"),
    ("高德上开车去机场多久", "Amap"),
    ("猫眼今晚的场次", "Maoyan"),
    ("腾讯会议明天有什么会", "Tencent Meeting"),
])
def test_an_app_named_inside_chinese_text_is_found(question: str, app: str) -> None:
    assert labels(question) == [app]


def test_a_name_that_is_an_everyday_word_is_not_an_app() -> None:
    assert labels("I wish the red dress were cheaper") == []  # "Wish" and "RED": exact case, whole words


def test_the_aliases_are_one_data_file_of_general_knowledge() -> None:
    groups = load_app_aliases()
    assert all(len(group) >= 2 for group in groups)
    names = [name for group in groups for name in group]
    assert len(names) == len(set(names))  # a name belongs to one app


@pytest.mark.parametrize(("question", "term"), [
    ("上海迪士尼乐园的门票多少钱？", "上海迪士尼乐园"),  # "上" is a stop word, "上海" a place
    ("在淘宝上搜一下小米14的价格", "小米14"),
    ("京东上OPPO Find X7 Ultra的重量是多少？", "OPPO Find X7 Ultra"),
])
def test_chinese_search_terms_are_never_cut_inside_a_word(question: str, term: str) -> None:
    terms = extract_search_terms(question, INSTALLED)
    assert any(t.startswith(term) for t in terms), terms


def test_a_chinese_question_naming_an_app_is_planned_for_that_app() -> None:
    plan = decompose_by_rules(Query(text="在JD上27寸显示器最便宜的是哪个？"), INSTALLED)
    assert [s.app_label for s in plan.subtasks] == ["JD"]


@pytest.mark.parametrize(("question", "terms"), [
    # Question words, counts, times and particles (jieba's tags) never become terms.
    ("那家烤鸭店哪天开门，几点到几点营业？", ("烤鸭店", "开门", "营业")),
    # Dates and times of day are filters, not searches.
    ("10月3日北京到上海，晚上8点以后还有哪些航班？", ("北京", "上海", "航班")),
    ("Which concerts are on in Berlin on Oct 3 after 8 pm?", ("Berlin",)),
    # A capitalised word inside a product's name stays in it; attribute words go.
    ("Compare Samsung Galaxy Note 20 vs. Google Pixel 8 specs.", ("Samsung Galaxy Note 20", "Google Pixel 8")),
    # A possessive ends a name; a count of the answer is not searched.
    ("What's Inception's rating and who are its top 3 actors?", ("Inception",)),
    ("Which of Adele's albums sold best?", ("Adele",)),
])
def test_search_terms_keep_names_and_drop_grammar_dates_and_attributes(question: str, terms: tuple[str, ...]) -> None:
    assert extract_search_terms(question, INSTALLED) == terms


def test_a_name_spelt_with_its_possessive_stays_whole() -> None:
    # "McDonald's" is a brand of the lexicon, not the owner of something.
    assert extract_search_terms("Is a McDonald's Big Mac cheaper than a Whopper?", ()) [0].startswith("McDonald's")


@pytest.mark.parametrize("question", [
    "What is the warranty of the SSD in my JD cart?",
    "京东上我的购物车里那个显示器多少钱？",
    "What did I add to my JD shopping cart last?",
])
def test_what_is_in_the_persons_own_page_is_found_there_not_searched(question: str) -> None:
    # The app's search looks through its catalogue: the SSD in my cart is in the cart. Before,
    # "SSD" was searched in the store and the report was about products nobody put in a cart.
    plan = decompose_by_rules(Query(text=question), INSTALLED)
    assert [(s.app_label, s.search_term) for s in plan.subtasks] == [("JD", None)], plan.notes


@pytest.mark.parametrize("question", ["美团上离我最近的麦当劳在哪？", "Find cart-friendly strollers on JD"])
def test_a_possessive_that_owns_no_page_keeps_the_search(question: str) -> None:
    # "离我最近" is "nearest to me", not "my latest"; a word that only contains a page's name owns nothing.
    plan = decompose_by_rules(Query(text=question), INSTALLED)
    assert all(s.search_term for s in plan.subtasks), plan.notes
