"""CORE-style exposure: a large screen is cut to the blocks the task needs before the navigator sees it."""

from __future__ import annotations

import json

from core.config import LLMEndpoint, PerceptionSettings
from core.models import Bounds, PageMode, PageType, SubTask, Tap, UIElement
from droidretriever.testing import OpenAIStub
from inference.llm import LLMClient
from inference.perception import BlockPartition, Perception, Redactor, ViewTree, describe_screen
from inference.perception.blocks import LayoutBlock
from inference.policies import (
    LLMNavigatorPolicy,
    PolicyContext,
    compact_history,
    describe_for_navigator,
    goal_text,
    goal_words,
    shown_history,
)
from tests.inference.screens import element, screen_of

TASK = SubTask(id="t1", app_label="Meituan", package="com.example.app", goal="How much is a Big Mac?",
               search_term="Big Mac", page_mode=PageMode.FOCUSED)


def block(index: int, members: list[UIElement]) -> LayoutBlock:
    top = min(e.bounds.top for e in members)
    bottom = max(e.bounds.bottom for e in members)
    return LayoutBlock(id=f"b{index}", index=index, anchor=f"n{index}", element_ids=tuple(e.id for e in members),
                       bounds=Bounds(left=0, top=top, right=1080, bottom=bottom))


def feed_screen(feed_items: int) -> Perception:
    """Top bar, search field, a long feed of stories, a result naming the term, a tab bar."""
    top = [element("up", top=80, height=100, width=120, clickable=True, class_name="android.widget.ImageButton",
                   content_desc="Navigate up"), element("title", "Today", top=80, height=100, left=140, width=600)]
    search = [element("field", "搜索商家、商品名称", top=200, height=110, editable=True,
                      class_name="android.widget.EditText")]
    feed = [element(f"story{i}", f"Story {i}: a long paragraph about weekend plans, rain and new cafes nearby",
                    top=330 + 40 * i, height=38) for i in range(feed_items)]
    result = [element("card", "McDonald's | Big Mac ¥25.5 | 月售3200", top=1900, height=120, clickable=True)]
    tabs = [element(f"tab{i}", label, top=2200, height=100, left=270 * i, width=270, clickable=True)
            for i, label in enumerate(("首页", "订单", "消息", "我的"))]
    groups = [top, search, feed, result, tabs]
    screen = screen_of(*(e for g in groups for e in g))
    partition = BlockPartition(level=1, blocks=tuple(block(i, g) for i, g in enumerate(groups)))
    return Perception(screen=screen, tree=ViewTree(nodes=(), ancestors={}), blocks=partition)


def test_a_small_screen_is_shown_whole() -> None:
    perception = feed_screen(feed_items=2)
    view = describe_for_navigator(perception, TASK)
    assert view == describe_screen(perception.screen, perception.blocks)
    assert "blocks shown" not in view.text


def test_a_large_screen_shows_the_blocks_about_the_task_within_the_budget() -> None:
    perception = feed_screen(feed_items=40)
    whole = describe_screen(perception.screen, perception.blocks)
    assert whole.tokens > 600
    view = describe_for_navigator(perception, TASK)
    assert view.tokens <= 600 < whole.tokens
    shown = set(view.element_ids)
    assert {"field", "card", "up", "tab0", "tab3"} <= shown  # search, the term, navigation
    assert not any(i.startswith("story") for i in shown)  # the feed stays on the phone
    assert view.text.splitlines()[0].endswith(f"elements of {len(perception.screen.elements)} (4 of 5 blocks shown)")
    # Numbers are in reading order of what is shown, and map back to the elements.
    assert view.element_id(1) == "up" and view.element_id(len(view.element_ids)) == "tab3"
    assert view.text.index("搜索商家") < view.text.index("Big Mac") < view.text.index("我的")


def test_a_tight_budget_keeps_the_best_block_and_what_still_fits() -> None:
    perception = feed_screen(feed_items=40)
    view = describe_for_navigator(perception, TASK, budget=60)
    assert "card" in view.element_ids  # names the search term: ranked first
    assert not any(i.startswith("story") for i in view.element_ids)


def test_each_round_adds_the_next_blocks_and_keeps_what_was_shown() -> None:
    """CORE's multi-round accumulation: "more" shows another budget's worth, best first."""
    perception = feed_screen(feed_items=40)
    first = describe_for_navigator(perception, TASK, budget=60)
    second = describe_for_navigator(perception, TASK, budget=60, rounds=2)
    assert set(first.element_ids) < set(second.element_ids)
    assert first.left_out > second.left_out > 0
    whole = describe_screen(perception.screen, perception.blocks)
    last = describe_for_navigator(perception, TASK, budget=60, rounds=len(perception.blocks.blocks))
    assert last == whole and last.left_out == 0 and "blocks shown" not in last.text


def test_the_navigator_asks_for_more_and_acts_on_what_it_was_then_shown() -> None:
    perception = feed_screen(feed_items=40)
    settings = PerceptionSettings(ocr_backend="none", description_token_budget=100)
    views = [describe_for_navigator(perception, TASK, budget=100, rounds=r)
             for r in range(1, len(perception.blocks.blocks) + 1)]
    rounds = next(r for r, v in enumerate(views, start=1) if "story0" in v.element_ids)
    assert rounds > 1  # the feed ranks last: not in the first round
    number = views[rounds - 1].element_ids.index("story0") + 1
    with OpenAIStub() as stub:
        stub.enqueue(*[json.dumps({"reason": "no story is shown", "action": "more"})] * (rounds - 1),
                     json.dumps({"reason": "the first story", "action": "tap", "element_id": str(number)}))
        client = LLMClient(LLMEndpoint(base_url=stub.base_url, model="nav"), role="navigator")
        policy = LLMNavigatorPolicy(client, perception=settings)
        decision = policy.decide(PolicyContext(subtask=TASK, perception=perception,
                                               page_type=PageType.OTHER, step=1))
        screens = [r["messages"][1]["content"] for r in stub.requests]
    assert decision is not None and decision.action == Tap(target="story0", reason="the first story")
    assert decision.usage.calls == rounds == len(screens)
    assert "Story 0" not in screens[0] and "Story 0" in screens[-1]
    assert screens[-1].count("\n") > screens[0].count("\n")  # what the first round showed is kept


def test_goal_words_and_the_task_line() -> None:
    assert goal_words(TASK)[:2] == ("Big Mac", "much")
    assert goal_text(TASK) == "How much is a Big Mac? (search for: Big Mac) [page mode: focused; app: Meituan]"


def test_past_actions_are_short_lines() -> None:
    lines = compact_history(["Tap [麦当劳 (漕溪北路店) | 月售3200 | 约28分钟送达 | 评分 4.8]",
                             "Enter [Big Mac] in [搜索商家、商品名称] and submit", "Press Back"])
    assert lines[0] == "Tap [麦当劳 (漕溪北路店) | 月售3200 | …]"  # 24 characters kept
    assert lines[1:] == ["Enter [Big Mac] in [搜索商家、商品名称] and submit", "Press Back"]


def test_past_actions_for_a_cloud_model_are_masked_before_they_are_clipped() -> None:
    """Issue 31: a tapped entry's label holds a number; clipped first, its first digits would stay."""
    redactor = Redactor()
    instructions = ["Tap [李娜 | 13912345678]", "Tap [Wang Wei, office | +1 415 555 0177]",
                    "Enter [jane.roe@example.org] in [Search] and submit"]
    lines = shown_history(instructions, redactor)
    assert lines == ["Tap [李娜 | [phone]]", "Tap [Wang Wei, office | [pho…]]", "Enter [[email]] in [Search] and submit"]
    assert compact_history(instructions)[1] == "Tap [Wang Wei, office | +1 4…]"  # clipped alone: digits left
    assert shown_history(instructions, None) == compact_history(instructions)
