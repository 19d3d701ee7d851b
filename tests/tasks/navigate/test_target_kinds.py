"""Target pages recognised by their kind, not the question's literal words, on the virtual phones."""

from __future__ import annotations

import redis

from core.config import BudgetSettings
from core.models import (
    InstalledApp,
    Query,
    Scroll,
    SubTask,
    SubTaskResult,
    SubTaskStatus,
    Tap,
    new_id,
)
from device_farm.adb_driver import AdbDriver
from device_farm.sim import SimServer
from inference.memory import RouteMemory
from inference.perception import Perceiver
from inference.rules import find_goal_concepts
from inference.rules.decomposer import decompose_by_rules
from storage import FakeObjectStore, RunEventPublisher
from tasks.control import RedisControlChannel
from tasks.navigate import Copilot, NavigateRequest, ObjectStoreBlobs, navigate_subtask
from tests.tasks.navigate.conftest import Rig

AMAP = InstalledApp(package="com.autonavi.minimap", label="Amap")


def test_a_route_page_is_the_target_of_a_travel_time_question(rig: Rig) -> None:
    # An English question, a Chinese app: the place's name cannot be read on the route page,
    # whose list title ("驾车方案") names what the question asks for.
    plan = decompose_by_rules(Query(text="How long is the drive to Shanghai with Amap?"), [AMAP])
    (task,) = plan.subtasks
    assert task.search_term == "Shanghai"
    result = navigate_subtask(rig.copilot, NavigateRequest(run_id=new_id("run"), subtask=task))
    assert result.status is SubTaskStatus.COMPLETED, result.reason
    texts = " ".join(e.label for e in result.captures[0].elements)
    assert "驾车方案" in texts and "小时" in texts  # the plans with their driving times
    assert not any(s.action is not None and s.action.kind == "back" for s in result.trace.steps)


def test_a_chinese_driving_question_leads_on_to_the_route_page(
        catalog_phone: tuple[SimServer, AdbDriver], perceiver: Perceiver, redis_url: str) -> None:
    # "开车" is Chinese for driving: the place's page, which shows its distance, is a step and its
    # "路线" entry leads on to the plans with their driving times. Before, the place's page was
    # taken for the answer (the goal named no concept of a route).
    task, result = ask_in_app(catalog_phone, perceiver, redis_url, "用高德开车去上海要多长时间？", app=AMAP)
    assert task.search_term == "上海"
    assert result.status is SubTaskStatus.COMPLETED, result.reason
    texts = " ".join(e.label for c in result.captures for e in c.elements)
    assert "驾车方案" in texts and "小时" in texts, texts[:300]


def test_a_route_page_with_one_plan_is_the_target_by_its_title(
        catalog_phone: tuple[SimServer, AdbDriver], perceiver: Perceiver, redis_url: str) -> None:
    # A route with a single plan has too little text to read as a details page; its title
    # ("驾车方案") names what the question asks for, so it is the answer. Before, the copilot
    # left it ("not the target page") and the sub-task failed.
    task, result = ask_in_app(catalog_phone, perceiver, redis_url, "用高德开车去上海虹桥站要多长时间？",
                              app=AMAP)
    assert task.search_term == "上海虹桥站"
    assert result.status is SubTaskStatus.COMPLETED, result.reason
    assert "15小时02分" in " ".join(e.label for c in result.captures for e in c.elements)


DOUBAN = InstalledApp(package="com.douban.frodo", label="Douban")


def test_the_apps_own_tab_for_the_term_is_opened_instead_of_a_search(
        catalog_phone: tuple[SimServer, AdbDriver], perceiver: Perceiver, redis_url: str) -> None:
    # "热映" is what the app's tab "正在热映" reads: opened as a person would, its list is the
    # answer. Before, "热映" was typed into the app's search first.
    task, result = ask_in_app(catalog_phone, perceiver, redis_url, "豆瓣上热映的有哪些？", app=DOUBAN)
    assert task.search_term == "热映"
    assert result.status is SubTaskStatus.COMPLETED, result.reason
    steps = [s.action for s in result.trace.steps if s.action is not None]
    assert any(isinstance(a, Tap) and "正在热映" in a.reason for a in steps), [a.reason for a in steps]
    assert not any(a.kind == "input" for a in steps)


QQ_MUSIC = InstalledApp(package="com.tencent.qqmusic", label="QQ Music")


def test_a_chart_the_search_does_not_find_is_reached_through_the_apps_ranking_entry(
        catalog_phone: tuple[SimServer, AdbDriver], perceiver: Perceiver, redis_url: str) -> None:
    # A music app's search finds songs, not charts: every form of "新歌榜" finds nothing, and the
    # explorer opens "排行榜" (a ranked list, as "…榜" is), whose page is the answer. Before, no
    # concept named a chart and the sub-task failed ("no policy knew what to do").
    task, result = ask_in_app(catalog_phone, perceiver, redis_url, "QQ音乐新歌榜前十名是哪些？", app=QQ_MUSIC)
    assert task.search_term == "新歌榜"
    assert result.status is SubTaskStatus.COMPLETED, result.reason
    taps = [s.action for s in result.trace.steps if isinstance(s.action, Tap)]
    assert any("排行榜" in t.reason for t in taps), [t.reason for t in taps]
    assert "小美满" in " ".join(e.label for e in result.captures[-1].elements)


def test_a_value_the_home_page_states_is_the_answer_where_it_is(
        catalog_phone: tuple[SimServer, AdbDriver], perceiver: Perceiver, redis_url: str) -> None:
    # "How much credit is left": the app's first page states it ("话费余额 ¥63.50"). Before, the
    # home page was never a target; the explorer went through "我的" and back, and the sub-task
    # failed with nothing captured.
    task, result = ask_in_app(catalog_phone, perceiver, redis_url, "我的话费余额还有多少？", app=CHINA_MOBILE)
    assert task.search_term is None  # a balance: a page of the app, not something to search
    assert result.status is SubTaskStatus.COMPLETED, result.reason
    assert "话费余额 ¥63.50" in " ".join(e.label for e in result.captures[0].elements)
    assert not any(isinstance(s.action, Tap) and "我的" in s.action.reason for s in result.trace.steps)


def test_the_plans_own_goal_wording_names_no_concept() -> None:
    plan = decompose_by_rules(Query(text="How long is the drive to Shanghai with Amap?"), [AMAP])
    goal = find_goal_concepts(plan.subtasks[0].goal, "Shanghai", "Amap")
    assert set(goal.targets) == {"route"}


RAILWAY = InstalledApp(package="com.MobileTicket", label="12306")


def test_an_apps_query_form_is_run_and_its_results_in_chinese_are_the_target(
        catalog_phone: tuple[SimServer, AdbDriver], perceiver: Perceiver, redis_url: str) -> None:
    # No search box, a form filled in (from, to, date) over "查询车票"; an English question whose
    # term ("trains") cannot be read on the Chinese results: the results of the form it ran are
    # the list asked for. Before, the explorer opened "铁路会员" (a page headed "railway").
    task, result = ask_in_app(catalog_phone, perceiver, redis_url,
                             "List available afternoon trains from A to B on Sept 12.")
    assert task.search_term == "trains"
    assert result.status is SubTaskStatus.COMPLETED, result.reason
    taps = [s.action for s in result.trace.steps if isinstance(s.action, Tap)]
    assert [t.reason for t in taps] == ["run the app's query form as it is filled in ('查询车票')"]
    texts = " ".join(e.label for e in result.captures[0].elements)
    assert "G7371" in texts and "13:05" in texts  # the trains of the form's route and date


def test_a_section_further_down_a_hub_page_titled_by_the_goal_is_its_target(
        catalog_phone: tuple[SimServer, AdbDriver], perceiver: Perceiver, redis_url: str) -> None:
    # The points shop is a section under the member page's rights, below the fold: the explorer
    # looks further down the member page before going back, and the section's title ("积分商城")
    # names what the question asks for. Before, it backed out of the member page, again and again.
    task, result = ask_in_app(catalog_phone, perceiver, redis_url, "12306 积分商城能换些什么，各要多少积分？")
    assert task.search_term is None
    assert result.status is SubTaskStatus.COMPLETED, result.reason
    assert any(isinstance(s.action, Scroll) for s in result.trace.steps)
    texts = " ".join(e.label for e in result.captures[-1].elements)
    assert "积分商城" in texts and "2000 积分" in texts


def test_a_remembered_route_of_another_question_is_not_taken_for_the_target(
        catalog_phone: tuple[SimServer, AdbDriver], perceiver: Perceiver, redis_url: str) -> None:
    # Both questions name 12306, so the refund policy's route is recalled for the points shop.
    # Without an evaluator model its end was taken as the target; a page naming nothing the
    # goal asks for is now judged not it: the route is forgotten and the copilot explores afresh.
    store = FakeObjectStore()
    _, first = ask_in_app(catalog_phone, perceiver, redis_url, "Check the ticket refund policy on 12306.", store)
    assert first.status is SubTaskStatus.COMPLETED and first.captures[0].title == "退改签说明"
    _, second = ask_in_app(catalog_phone, perceiver, redis_url, "12306 积分商城能换些什么，各要多少积分？", store)
    assert second.status is SubTaskStatus.COMPLETED, second.reason
    assert all(c.title != "退改签说明" for c in second.captures)
    assert "2000 积分" in " ".join(e.label for e in second.captures[-1].elements)


CHINA_MOBILE = InstalledApp(package="com.greenpoint.android.mc10086.activity", label="China Mobile")


def test_a_remembered_route_ending_where_neither_the_term_nor_the_goal_shows_is_forgotten(
        catalog_phone: tuple[SimServer, AdbDriver], perceiver: Perceiver, redis_url: str) -> None:
    # The top-up records' route is recalled for a question about a bill, which searches
    # "phone bill higher": the records page shows neither that term nor a bill.
    store = FakeObjectStore()
    _, first = ask_in_app(catalog_phone, perceiver, redis_url,
                         "Calculate phone credit from Oct to Aug with monthly average.", store, CHINA_MOBILE)
    assert first.status is SubTaskStatus.COMPLETED and first.captures[0].title == "充值记录"
    task, second = ask_in_app(catalog_phone, perceiver, redis_url, "Why was my May phone bill higher than usual?",
                             store, CHINA_MOBILE)
    assert task.search_term is not None
    assert second.status is SubTaskStatus.COMPLETED, second.reason
    assert all(c.title != "充值记录" for c in second.captures)
    assert "¥139.50" in " ".join(e.label for c in second.captures for e in c.elements)  # May's bill


def ask_in_app(catalog_phone: tuple[SimServer, AdbDriver], perceiver: Perceiver, redis_url: str,
              question: str, store: FakeObjectStore | None = None,
              app: InstalledApp = RAILWAY) -> tuple[SubTask, SubTaskResult]:
    """The rules' one sub-task for ``question`` in ``app`` (12306), navigated from a fresh phone by
    a copilot with no models (rules, skills, explorer); its route memory kept in ``store`` when given."""
    server, driver = catalog_phone
    server.control.reset("boot")
    (task,) = decompose_by_rules(Query(text=question), [app]).subtasks
    client = redis.Redis.from_url(redis_url)
    store = store if store is not None else FakeObjectStore()
    copilot = Copilot(driver=driver, perceiver=perceiver, store=store, budgets=BudgetSettings(),
                      events=RunEventPublisher(client, store), control=RedisControlChannel(client),
                      memory=RouteMemory(ObjectStoreBlobs(store)), pause_poll_s=0.1)
    try:
        return task, navigate_subtask(copilot, NavigateRequest(run_id=new_id("run"), subtask=task))
    finally:
        client.close()
