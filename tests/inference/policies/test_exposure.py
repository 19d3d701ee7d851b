"""CORE-style exposure: a large screen is cut to the blocks the task needs before the navigator sees it."""

from __future__ import annotations

from droidretriever.models import Bounds, PageMode, SubTask, UIElement
from inference.perception import BlockPartition, Perception, ViewTree, describe_screen
from inference.perception.blocks import LayoutBlock
from inference.policies import compact_history, describe_for_navigator, goal_text, goal_words
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


def test_goal_words_and_the_task_line() -> None:
    assert goal_words(TASK)[:2] == ("Big Mac", "much")
    assert goal_text(TASK) == "How much is a Big Mac? (search for: Big Mac) [page mode: focused; app: Meituan]"


def test_past_actions_are_short_lines() -> None:
    lines = compact_history(["Tap [麦当劳 (漕溪北路店) | 月售3200 | 约28分钟送达 | 评分 4.8]",
                             "Enter [Big Mac] in [搜索商家、商品名称] and submit", "Press Back"])
    assert lines[0] == "Tap [麦当劳 (漕溪北路店) | 月售3200 | …]"  # 24 characters kept
    assert lines[1:] == ["Enter [Big Mac] in [搜索商家、商品名称] and submit", "Press Back"]
