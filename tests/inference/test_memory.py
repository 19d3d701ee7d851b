"""Route memory: record, BM25 recall, replay with a screen check at each step."""

from __future__ import annotations

import pytest

from core.models import Back, Input, PageMode, Tap
from inference.errors import RouteMemoryError
from inference.memory import Route, RouteMemory, RouteReplay, RouteStep, anchor_for
from tests.inference.screens import element, screen_of
from tests.support.fakes import InMemoryBlobStore

PKG = "com.sankuai.meituan"
HOME = screen_of(element("h1", "首页"), element("h2", "搜索", top=200, clickable=True), element("h3", "外卖", top=400),
                 package=PKG, fingerprint="home")
SEARCH = screen_of(element("s1", "", top=150, class_name="android.widget.EditText", resource_id="mt:id/search_edit",
                           editable=True), element("s2", "历史搜索", top=300), package=PKG, fingerprint="search")
RESULTS = screen_of(element("r0", "Big Mac", top=150, resource_id="mt:id/search_edit"),
                    element("r1", "麦当劳 (人民广场店)", top=300, clickable=True), element("r2", "销量 1000+", top=400),
                    package=PKG, fingerprint="results")


def search_route(memory: RouteMemory) -> Route:
    return next(r for r in memory.load(PKG) if r.goal.startswith("search for"))


def learnt_steps() -> list[RouteStep]:
    return [
        RouteStep(action=Tap(target="h2"), target=anchor_for(HOME, "h2"), fingerprint="home", anchors=("首页", "搜索", "外卖")),
        RouteStep(action=Input(text="Big Mac", target="s1", submit=True), target=anchor_for(SEARCH, "s1"),
                  fingerprint="search", anchors=("历史搜索",)),
        RouteStep(action=Tap(target="r1"), target=anchor_for(RESULTS, "r1"), fingerprint="results",
                  anchors=("Big Mac", "麦当劳 (人民广场店)", "销量 1000+")),
    ]


@pytest.fixture
def memory() -> RouteMemory:
    store = InMemoryBlobStore()
    memory = RouteMemory(store)
    memory.record(PKG, 'search for "Big Mac" and open the first restaurant', learnt_steps(), search_term="Big Mac")
    memory.record(PKG, "open my order history", [RouteStep(action=Back())], page_mode=PageMode.LIST_VIEW)
    return memory


def test_routes_are_stored_per_package_with_the_term_as_a_slot(memory: RouteMemory) -> None:
    store = memory._store
    assert isinstance(store, InMemoryBlobStore)
    assert list(store.objects) == [f"memory/routes/{PKG}.json"]
    route = search_route(memory)
    assert route.goal == 'search for "{search_term}" and open the first restaurant'
    typed = route.steps[1].action
    assert isinstance(typed, Input) and typed.text == "{search_term}"
    assert "Big Mac" not in route.steps[2].anchors  # run data, not part of the route
    assert memory.load("me.ele") == ()


def test_bm25_recall_of_the_same_kind_of_goal(memory: RouteMemory) -> None:
    matches = memory.recall(PKG, 'search for "McFlurry" and open the first restaurant', search_term="McFlurry")
    assert matches and matches[0].route.goal.startswith("search for")
    assert matches[0].score > (matches[1].score if len(matches) > 1 else 0)
    assert memory.recall(PKG, "完全不同的任务") == ()
    assert memory.recall("me.ele", "search for Big Mac") == ()


def test_replay_substitutes_the_term_and_checks_each_screen(memory: RouteMemory) -> None:
    route = memory.recall(PKG, 'search for "McFlurry" and open the first restaurant', search_term="McFlurry")[0].route
    replay = RouteReplay(route, search_term="McFlurry")
    assert replay.next_action(HOME) == Tap(target="h2")
    assert replay.next_action(SEARCH) == Input(text="McFlurry", target="s1", submit=True)
    # The results page shows the new term; the result the route opened was chosen for "Big Mac",
    # so for "McFlurry" the replay ends at the search and the copilot chooses the result.
    new_results = screen_of(element("x0", "McFlurry", top=150), element("x9", "麦当劳 (人民广场店)", top=300, clickable=True),
                            element("x8", "销量 1000+", top=400), package=PKG, fingerprint="results-2")
    assert replay.next_action(new_results) is None
    assert replay.finished and "result of another search" in replay.stopped_reason


def test_the_same_search_again_replays_to_the_result_it_opened(memory: RouteMemory) -> None:
    route = search_route(memory)
    assert [s.result_of for s in route.steps] == ["", "", "Big Mac"]
    replay = RouteReplay(route, search_term="big mac")
    assert replay.next_action(HOME) == Tap(target="h2")
    assert replay.next_action(SEARCH) == Input(text="big mac", target="s1", submit=True)
    # Element ids changed between runs: the anchor still finds the result.
    again = screen_of(element("x0", "big mac", top=150), element("x9", "麦当劳 (人民广场店)", top=300, clickable=True),
                      element("x8", "销量 1000+", top=400), package=PKG, fingerprint="results-2")
    assert replay.next_action(again) == Tap(target="x9")
    assert replay.finished and not replay.stopped_reason


def test_a_search_submitted_by_its_button_marks_the_tap_after_the_button() -> None:
    memory = RouteMemory(InMemoryBlobStore())
    steps = learnt_steps()
    typed = steps[1].model_copy(update={"action": Input(text="Big Mac", target="s1")})
    button = RouteStep(action=Tap(target="s3"), fingerprint="search-typed")
    route = memory.record(PKG, "search for Big Mac", [steps[0], typed, button, steps[2]], search_term="Big Mac")
    assert [s.result_of for s in route.steps] == ["", "", "", "Big Mac"]


def test_a_mismatched_screen_hands_over(memory: RouteMemory) -> None:
    route = search_route(memory)
    replay = RouteReplay(route, search_term="McFlurry")
    advert = screen_of(element("ad", "限时优惠 Special offer"), package=PKG, fingerprint="ad")
    assert replay.next_action(advert) is None
    assert "not the one the route expects" in replay.stopped_reason and replay.finished


def test_same_route_again_counts_a_success(memory: RouteMemory) -> None:
    again = memory.record(PKG, 'search for "Whopper" and open the first restaurant', learnt_steps()[:1] + [
        step.model_copy(update={"action": Input(text="Whopper", target="s1", submit=True)}) for step in learnt_steps()[1:2]
    ] + learnt_steps()[2:], search_term="Whopper")
    assert again.successes == 2 and len(memory.load(PKG)) == 2


def test_corrupt_memory_is_a_typed_error_with_a_fix() -> None:
    store = InMemoryBlobStore()
    store.objects[f"memory/routes/{PKG}.json"] = b'{"package": 3}'
    with pytest.raises(RouteMemoryError, match="unreadable") as caught:
        RouteMemory(store).load(PKG)
    assert "delete memory/routes/" in caught.value.hint


def test_a_route_is_recalled_only_for_a_goal_sharing_a_word_of_content() -> None:
    """Two questions about one app share its name and the goal's frame ("In ..., search for"),
    nothing else: the one's route is not the other's (it ended on the other's page)."""
    memory = RouteMemory(InMemoryBlobStore())
    memory.record(PKG, 'In 美团, search for "咖啡": 美团上的咖啡外卖配送费多少？', learnt_steps(), search_term="咖啡")
    names = ("美团", "Meituan")
    unrelated = 'In 美团, search for "会员": 美团上我的会员积分还有多少？'
    assert memory.recall(PKG, unrelated, search_term="会员", ignore=names) == ()
    alike = 'In 美团, search for "奶茶": 美团上的奶茶外卖配送费多少？'
    assert memory.recall(PKG, alike, search_term="奶茶", ignore=names)  # 外卖, 配送费
    english = 'In Meituan, search for "tea": What is the delivery fee for tea on Meituan?'
    assert memory.recall(PKG, english, search_term="tea", ignore=names) == ()
    # A question that is its term and nothing more recalls a route of such a question.
    memory.record(PKG, 'In Meituan, search for "Big Mac": How much is a Big Mac on Meituan?', learnt_steps(),
                  search_term="Big Mac")
    just_the_term = 'In Meituan, search for "McFlurry": How much is a McFlurry on Meituan?'
    (match,) = memory.recall(PKG, just_the_term, search_term="McFlurry", ignore=names)
    assert match.route.goal.endswith("How much is a {search_term} on Meituan?")


def test_a_route_that_searched_nothing_opens_no_item_for_another_question() -> None:
    """"Check my latest mail" opened the newest mail from the inbox; "How much do I owe on my cards?
    Check my mail" searches for "cards" and shares "mail" with it. Before, the inbox route was
    replayed for the cards and ended on the newest mail, about a login; now the replay stops at
    the mail, which another question chose, and the copilot chooses afresh."""
    memory = RouteMemory(InMemoryBlobStore())
    mail = element("m1", "Account centre | Sign-in check | You signed in on a new phone | 08:42", top=400,
                   height=240, clickable=True)
    inbox = screen_of(element("t", "Inbox", top=100), mail, package=PKG, fingerprint="inbox")
    memory.record(PKG, "In Mail: Check my latest mail.", [
        RouteStep(action=Tap(target="m1"), target=anchor_for(inbox, "m1"), fingerprint="inbox",
                  anchors=("Inbox",))])
    cards = 'In Mail, search for "cards": How much do I owe on my cards? Check my mail.'
    (match,) = memory.recall(PKG, cards, search_term="cards")
    replay = RouteReplay(match.route, search_term="cards", goal=cards)
    assert replay.next_action(inbox) is None
    assert "another question chose" in replay.stopped_reason
    # Nor for another question without a term ("the dearest item" after "the RAM in my cart")...
    other = "In Mail: Which of my mails is the longest?"
    assert RouteReplay(match.route, goal=other).next_action(inbox) is None
    # ... while the same question asked again opens the newest mail, as it did.
    assert RouteReplay(match.route, goal="In Mail: Check my latest mail.").next_action(inbox) is not None


def test_an_unconfirmed_route_is_kept_but_never_recalled_until_a_run_confirms_it() -> None:
    """Issue 31: a route only a model's "complete" vouched for is not replayed as an answer."""
    memory = RouteMemory(InMemoryBlobStore())
    goal = 'search for "Big Mac" and open the first restaurant'
    memory.record(PKG, goal, learnt_steps(), search_term="Big Mac", confirmed=False)
    (kept,) = memory.load(PKG)
    assert not kept.confirmed
    assert memory.recall(PKG, goal, search_term="Big Mac") == ()
    memory.record(PKG, goal, learnt_steps(), search_term="Big Mac", confirmed=True)
    (match,) = memory.recall(PKG, goal, search_term="Big Mac")
    assert match.route.confirmed and match.route.successes == 2
    memory.record(PKG, goal, learnt_steps(), search_term="Big Mac", confirmed=False)
    assert memory.recall(PKG, goal, search_term="Big Mac")  # a confirmation once given stands


def test_one_not_complete_forgets_every_copy_of_a_route() -> None:
    """Issue 31: copies come from other wordings of the question (the same steps under another goal)
    and from another way to the same last step; before, one of three copies survived demotion."""
    memory = RouteMemory(InMemoryBlobStore())
    goals = ('search for "Big Mac" and open the first restaurant', 'What does a "Big Mac" cost? open the first one',
             'the first restaurant for "Big Mac"')
    for goal in (goals[0], *goals):  # the first wording twice: two successes
        memory.record(PKG, goal, learnt_steps(), search_term="Big Mac")
    memory.record(PKG, goals[0], learnt_steps()[1:], search_term="Big Mac")  # no tap on the search entry first
    memory.record(PKG, "open my order history", [RouteStep(action=Back())], page_mode=PageMode.LIST_VIEW)
    assert len(memory.load(PKG)) == 5
    (recalled,) = memory.recall(PKG, goals[0], search_term="Big Mac", k=1)
    assert memory.forget_copies(recalled.route) == 4
    assert [r.goal for r in memory.load(PKG)] == ["open my order history"]
    assert all(memory.recall(PKG, goal, search_term="Big Mac") == () for goal in goals)
