"""LLM1 and its rule-based fallback produce the same kind of Plan."""

from __future__ import annotations

import json

import pytest

from core.config import LLMEndpoint
from core.models import InstalledApp, PageMode, Query
from droidretriever.testing import (
    Answer,
    OpenAIStub,
    RecordingOpenAIServer,
    ScriptedReply,
    ServedModel,
)
from inference.llm import LLMClient
from inference.llm_roles.decomposer import decompose, decompose_with_model
from inference.rules import decompose_by_rules
from inference.rules.decomposer import choose_page_mode, extract_search_terms

INSTALLED = [
    InstalledApp(label=label, package=package)
    for label, package in [
        ("美团", "com.sankuai.meituan"),
        ("饿了么", "me.ele"),
        ("McDonald's", "com.mcdonalds.app"),
        ("小红书", "com.xingin.xhs"),
        ("Taobao", "com.taobao.taobao"),
        ("JD", "com.jingdong.app.mall"),
        ("Settings", "com.android.settings"),
    ]
]


def plan_summary(query: str, **options: object) -> list[tuple[str, str | None, PageMode]]:
    plan = decompose_by_rules(Query.model_validate({"text": query, **options}), INSTALLED)
    return [(s.package, s.search_term, s.page_mode) for s in plan.subtasks]


def test_rules_big_mac_across_two_apps_named_in_english() -> None:
    assert plan_summary("Is a Big Mac cheaper on Meituan or Ele.me?") == [
        ("com.sankuai.meituan", "Big Mac", PageMode.FOCUSED),
        ("me.ele", "Big Mac", PageMode.FOCUSED),
    ]


def test_rules_product_comparison_and_chinese_question() -> None:
    assert plan_summary("Compare the VIVO X100 Ultra price on Taobao and JD") == [
        ("com.taobao.taobao", "VIVO X100 Ultra", PageMode.FOCUSED),
        ("com.jingdong.app.mall", "VIVO X100 Ultra", PageMode.FOCUSED),
    ]
    assert plan_summary("美团和饿了么上巨无霸哪个便宜") == [
        ("com.sankuai.meituan", "巨无霸", PageMode.FOCUSED),
        ("me.ele", "巨无霸", PageMode.FOCUSED),
    ]


def test_rules_page_mode_cues_and_aliases() -> None:
    assert plan_summary("What do people on Xiaohongshu say about Mission: Impossible films?") == [
        ("com.xingin.xhs", "Mission Impossible films", PageMode.MULTI_PAGE)
    ]
    assert plan_summary("在小红书上看看大家对《碟中谍》的评价") == [("com.xingin.xhs", "碟中谍", PageMode.MULTI_PAGE)]
    assert plan_summary('list all "burger" restaurants on Meituan') == [
        ("com.sankuai.meituan", "burger", PageMode.LIST_VIEW)
    ]


def test_rules_drop_possessives_and_contractions_but_keep_names_with_them() -> None:
    assert plan_summary("What is Meituan's Big Mac price?") == [
        ("com.sankuai.meituan", "Big Mac", PageMode.FOCUSED)
    ]
    assert plan_summary("What's the Big Mac price on Meituan?") == [
        ("com.sankuai.meituan", "Big Mac", PageMode.FOCUSED)
    ]
    assert extract_search_terms("What's McDonald's Big Mac price?") == ("McDonald's Big Mac",)


def test_rules_permissions_question_goes_to_settings() -> None:
    assert plan_summary("Which permissions has Meituan been granted?") == [
        ("com.android.settings", "美团", PageMode.FOCUSED)
    ]


@pytest.mark.parametrize("question", [
    "How do I turn off personalised ads on Taobao?",
    "How to disable order notifications in JD?",
    "怎么关闭美团的个性化推荐？",
])
def test_rules_switching_a_setting_navigates_instead_of_searching(question: str) -> None:
    # Before, the setting's words were searched for in the app's catalogue of posts or products.
    plan = decompose_by_rules(Query(text=question), INSTALLED)
    assert len(plan.subtasks) == 1 and plan.subtasks[0].search_term is None, plan.subtasks
    assert any("switch a setting" in n for n in plan.notes)
    assert plan_summary("How to change a flight booked on Taobao?")[0][1] is not None  # an order, searched


@pytest.mark.parametrize("question", [
    "How much space does JD take up on my phone?",
    "京东在手机上占用了多少空间？",
    "京东的缓存有多大？",
])
def test_rules_an_apps_own_storage_is_asked_of_settings(question: str) -> None:
    # What an app takes on the phone is on its info page in Settings, not in the app.
    plan = decompose_by_rules(Query(text=question), INSTALLED)
    assert [(s.package, s.search_term) for s in plan.subtasks] == [("com.android.settings", "JD")]
    assert any("an app's storage: answered in Settings" in n for n in plan.notes)


@pytest.mark.parametrize("question", [
    "Which Xiaomi 14 with 512GB storage is cheapest on JD?",
    "京东上哪款手机存储空间最大？",
    "京东上OPPO手机的电池容量多大？",
])
def test_rules_storage_of_a_product_is_asked_of_the_shop(question: str) -> None:
    assert {s.package for s in decompose_by_rules(Query(text=question), INSTALLED).subtasks} == {
        "com.jingdong.app.mall"}


def test_rules_respect_the_person_and_say_their_limits() -> None:
    plan = decompose_by_rules(
        Query(text="Is a Big Mac cheaper on Meituan or Ele.me?", apps=("me.ele",), mode=PageMode.LIST_VIEW),
        INSTALLED,
    )
    assert [(s.package, s.page_mode) for s in plan.subtasks] == [("me.ele", PageMode.LIST_VIEW)]
    assert plan.decomposer == "rules"
    assert any("rule-based decomposition" in n for n in plan.notes)
    assert any("not among the apps you allowed" in n for n in plan.notes)
    nothing = decompose_by_rules(Query(text="What is the meaning of life?"), INSTALLED)
    assert nothing.subtasks == () and any("no installed app fits" in n for n in nothing.notes)


def test_model_answer_in_the_papers_spelling_becomes_a_plan() -> None:
    answer = {
        "mentioned_apps": ["Meituan", "Eleme"],
        "installed_related_apps": ["Meituan", "Ele.me", "McDonalds"],
        "uninstalled_related_apps": ["none"],
        "search terms": ["Big Mac"],
        "search_mode": ["Focused"],
        "information_flow": [{"from_app": "McDonald's", "to_app": "Meituan", "info": "the store address"}],
    }
    with OpenAIStub() as stub:
        stub.enqueue(ScriptedReply(content=json.dumps(answer), prompt_tokens=410, completion_tokens=60))
        client = LLMClient(LLMEndpoint(base_url=stub.base_url, model="qwen2.5-72b"), role="decomposer")
        reply = decompose_with_model(client, Query(text="Is a Big Mac cheaper on Meituan or Ele.me?"), INSTALLED)
    plan = reply.value
    assert [s.package for s in plan.subtasks] == ["com.sankuai.meituan", "me.ele", "com.mcdonalds.app"]
    assert all(s.search_term == "Big Mac" and s.page_mode is PageMode.FOCUSED for s in plan.subtasks)
    assert [(e.source, e.target, e.info) for e in plan.edges] == [
        ("com.mcdonalds.app-1", "com.sankuai.meituan-1", "the store address")
    ]
    order = [s.package for s in plan.topological_order()]
    assert order.index("com.mcdonalds.app") < order.index("com.sankuai.meituan")
    assert plan.decomposer == "llm:qwen2.5-72b" and reply.prompt_version == "decomposer/2"
    assert reply.usage.prompt == 410
    assert "美团, 饿了么" in stub.requests[0]["messages"][1]["content"]
    assert "search terms" in stub.requests[0]["response_format"]["json_schema"]["schema"]["properties"]


@pytest.mark.parametrize("failure", [ScriptedReply(content="{}", delay_s=2.0), ScriptedReply(status=500)])
def test_model_failure_falls_back_to_rules_and_says_so(failure: ScriptedReply) -> None:
    with OpenAIStub() as stub:
        stub.enqueue(failure)
        endpoint = LLMEndpoint(base_url=stub.base_url, model="m", timeout_s=0.3, tokens_per_s=10_000)
        client = LLMClient(endpoint, role="decomposer", max_retries=0)
        outcome = decompose(Query(text="Is a Big Mac cheaper on Meituan or Ele.me?"), INSTALLED, client)
    plan = outcome.value
    assert outcome.policy == "rules" and plan.fallback is not None and plan.fallback.role == "decomposer"
    # Table row 3: one note, saying why the rules planned; never "no decomposer model configured".
    assert plan.notes[0].startswith("rule-based decomposition (the decomposer model failed: ")
    assert not any("no decomposer model configured" in n for n in plan.notes)
    assert [s.package for s in plan.subtasks] == ["com.sankuai.meituan", "me.ele"]
    assert plan.calls and all(c.usage.failed == 1 for c in plan.calls)  # the failed call is counted


def test_no_model_means_rules() -> None:
    outcome = decompose(Query(text="Big Mac on Meituan"), INSTALLED, None)
    assert outcome.policy == "rules" and outcome.usage.calls == 0


@pytest.mark.parametrize(
    ("question", "term"),
    [
        ("Ordering a Big Mac from McDonald's, Meituan or Ele.me?", "Big Mac"),
        ("Advise on purchasing VIVO X100 Ultra from Taobao or JD.", "VIVO X100 Ultra"),
    ],
)
def test_task_verbs_never_become_search_terms(question: str, term: str) -> None:
    """The paper's own wordings: 'Ordering' / 'Advise on purchasing' are the ask, not the thing."""
    terms = extract_search_terms(question)
    assert terms[0] == term
    assert not any(word in " ".join(terms).lower() for word in ("ordering", "advise", "purchasing"))


@pytest.mark.parametrize(("question", "terms"), [
    ("我这学期平均绩点多少？数据结构考了几分？", ("绩点", "数据结构")),  # not "学期", not "数据结构考了"
    ("上个季度的账单", ("账单",)),
    ("我看过的电影有哪些", ("电影",)),
    ("学期安排", ("学期安排",)),  # a semester's timetable names a thing: searched
])
def test_chinese_times_and_acts_never_become_search_terms(question: str, terms: tuple[str, ...]) -> None:
    """"这学期" says when, like "今天"; "考了" / "看过" are acts done. Before, "学期" and "数据结构考了"
    were searched for."""
    assert extract_search_terms(question) == terms


TOPIC_APPS = [
    InstalledApp(label=label, package=package)
    for label, package in [
        ("Meituan", "com.sankuai.meituan"), ("Cainiao", "com.cainiao.wireless"), ("DiDi", "com.sdu.didi.psnger"),
        ("12306", "com.MobileTicket"), ("Ctrip", "ctrip.android.view"), ("Maoyan", "com.sankuai.movie"),
        ("Douban", "com.douban.frodo"), ("Tencent Meeting", "com.tencent.wemeet.app"),
        ("Weibo", "com.sina.weibo"), ("Bilibili", "tv.danmaku.bili"), ("Zhihu", "com.zhihu.android"),
        ("China Mobile", "com.greenpoint.android.mc10086.activity"), ("Gmail", "com.google.android.gm"),
        ("Amap", "com.autonavi.minimap"), ("今日校园", "com.wisedu.cpdaily"),
    ]
]


@pytest.mark.parametrize(("question", "first_app"), [
    ("List delivered packages by express station.", "Cainiao"),  # not food delivery
    ("Show me taxi trips from May to August.", "DiDi"),  # not travel
    ("List available afternoon trains from A to B on Sept 12.", "12306"),
    ("Check showtimes of F1: The Movie the day after tomorrow.", "Maoyan"),
    ("Identify the top 3 movies across ranking charts.", "Douban"),
    ("Find meetings scheduled by Irene.", "Tencent Meeting"),
    ("How do fans feel about more Mission: Impossible films?", "Zhihu"),
    ("Calculate my phone credit from October to August.", "China Mobile"),
    ("What is my latest email?", "Gmail"),
    ("明天上海到北京还有一等座的车次吗？", "12306"),
    ("开车到机场要多久，多少公里？", "Amap"),
    ("How long is the drive to the airport?", "Amap"),
    ("这学期我的绩点是多少？", "今日校园"),  # no known school app: its name says it
    ("What grades did I get this semester?", "今日校园"),
    ("我明天上午有哪些会？", "Tencent Meeting"),
])
def test_rules_pick_apps_by_topic_when_none_is_named(question: str, first_app: str) -> None:
    plan = decompose_by_rules(Query(text=question), TOPIC_APPS)
    assert plan.subtasks and plan.subtasks[0].app_label == first_app, [s.app_label for s in plan.subtasks]
    assert any("reads like a" in note for note in plan.notes)  # says why it picked them


def test_a_topic_with_no_installed_app_is_not_a_pick() -> None:
    campus_only = [a for a in TOPIC_APPS if a.label != "今日校园"]
    plan = decompose_by_rules(Query(text="这学期我的绩点是多少？"), campus_only)
    assert plan.subtasks == () and not any("reads like a" in note for note in plan.notes)
    # "会员" (membership) is not a meeting.
    assert decompose_by_rules(Query(text="我有哪些会员权益？"), TOPIC_APPS).subtasks == ()


def test_rules_navigate_to_account_and_settings_pages_instead_of_searching_for_them() -> None:
    for question in ("What are McDonald's community guidelines?", "Show my total ride expenses on Taobao.",
                     "List all default currency units on JD."):
        plan = decompose_by_rules(Query(text=question), INSTALLED)
        assert [s.search_term for s in plan.subtasks] == [None], question
        assert any("navigating to it rather than searching" in note for note in plan.notes)
    # A thing named in the question is still searched for, unless it is looked for in the
    # person's own page ("my orders"): the app's search finds products, not one's orders of them.
    assert plan_summary("Show the order history of the VIVO X100 Ultra on JD") == [
        ("com.jingdong.app.mall", "VIVO X100 Ultra", PageMode.FOCUSED)
    ]
    assert plan_summary("Show my orders of the VIVO X100 Ultra on JD") == [
        ("com.jingdong.app.mall", None, PageMode.FOCUSED)
    ]


def test_short_app_names_are_not_cut_out_of_words() -> None:
    rednote = [*INSTALLED, InstalledApp(label="Rednote", package="com.xingin.xhs")]  # also called "RED"
    assert extract_search_terms("List ticket redemption rights for members.", rednote) == (
        "ticket redemption rights",
    )
    assert extract_search_terms("Translate the Red Velvet notice on RED", rednote) == ("Red Velvet notice",)


@pytest.mark.parametrize(("question", "terms"), [
    ("What's the cheapest scarf in the shop? Just that one.", ("scarf",)),  # not "Just"
    ("Which bakeries are within 2 km of me?", ("bakeries",)),  # a distance is a filter
    ("Trending sneakers under $80", ("Trending sneakers",)),
    ("北京300元以内的酒店有哪些？", ("北京", "酒店")),  # the amount never joins the city
    ("到机场有多少公里？", ("机场",)),  # a bare unit is no term
    ("北京今晚的酒店，列个表：名字和价格。", ("北京", "酒店")),  # not "列个表"
    ("Hotels in Paris, as a table", ("Hotels", "Paris")),
    ("Redmi Note 13 256GB price", ("Redmi Note 13 256GB",)),  # a product's storage is its name
])
def test_amounts_and_format_words_never_become_search_terms(question: str, terms: tuple[str, ...]) -> None:
    assert extract_search_terms(question) == terms


@pytest.mark.parametrize(("question", "mode"), [
    ("Find meetings scheduled by Irene.", PageMode.LIST_VIEW),  # several things: a list
    ("Find my orders from JD", PageMode.LIST_VIEW),
    ("Find address by postcode", PageMode.FOCUSED),  # one thing
    ("Find out how fans feel about more films", PageMode.FOCUSED),
    ("Which nearby cafes are open late?", PageMode.LIST_VIEW),  # "which <plural> are"
    ("Which app has the lowest fee?", PageMode.FOCUSED),
    ("Which songs are in the Summer Hits playlist?", PageMode.FOCUSED),  # one playlist's page
])
def test_rules_read_find_with_a_plural_as_a_list(question: str, mode: PageMode) -> None:
    assert choose_page_mode(question)[0] is mode


@pytest.mark.parametrize(("question", "mode"), [
    ("携程上的酒店价格各是多少？", PageMode.LIST_VIEW),  # each of them: several records
    ("这几家店分别几点关门？", PageMode.LIST_VIEW),
    ("美团上的奶茶店，做成表格", PageMode.LIST_VIEW),
    ("What does each of them cost on JD?", PageMode.LIST_VIEW),
    ("Hotel prices in Osaka in a table, please", PageMode.LIST_VIEW),
    ("How much should I save each month?", PageMode.FOCUSED),  # a period, not records
    ("这家店几点关门？", PageMode.FOCUSED),
])
def test_rules_read_each_and_a_table_as_a_list(question: str, mode: PageMode) -> None:
    assert choose_page_mode(question)[0] is mode


@pytest.mark.parametrize("answer", [Answer.EMPTY_JSON,
                                    '{"mentioned_apps": [], "installed_related_apps": ["Uber Eats"], '
                                    '"uninstalled_related_apps": [], "search terms": ["Big Mac"], '
                                    '"search_mode": "focused", "information_flow": []}'])
def test_an_empty_or_useless_answer_is_a_failed_call_not_an_empty_plan(answer: Answer | str) -> None:
    """Table row 5: "{}" (or no installed app) gets the repair round, then the rules plan."""
    with RecordingOpenAIServer([ServedModel("planner")]) as server:
        server.script("planner", answer, answer)
        client = LLMClient(LLMEndpoint(base_url=server.base_url, model="planner"), role="decomposer")
        outcome = decompose(Query(text="Is a Big Mac cheaper on Meituan or Ele.me?"), INSTALLED, client)
        repair = server.requests[1].body["messages"][-1]["content"]
    assert len(server.requests) == 2 and server.problems == []
    assert outcome.policy == "rules" and outcome.fallback is not None
    assert [s.package for s in outcome.value.subtasks] == ["com.sankuai.meituan", "me.ele"]
    assert "installed_related_apps" in repair  # the repair round names what was missing
