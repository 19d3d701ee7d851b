"""Route memory as a policy (replay, hand-over, waiting out a pop-up) and the chain's order."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from core.models import Back, Input, OpenApp, PageMode, Screen, SubTask, Tap
from inference.memory import RouteMemory, RouteStep, anchor_for
from inference.policies import (
    Decision,
    PolicyChain,
    PolicyContext,
    RouteMemoryPolicy,
    SkillsPolicy,
    TakenAction,
    UnknownElementError,
)
from inference.rules import detect_page_type
from tests.inference.screens import element, perceived, screen_of
from tests.support.fakes import InMemoryBlobStore

PKG = "com.sankuai.meituan"
GOAL = 'search for "Big Mac" and open the first restaurant'
HOME = screen_of(element("h1", "首页"), element("h2", "搜索", top=200, width=300, clickable=True),
                 element("h3", "外卖", top=400), package=PKG, fingerprint="home")
SEARCH = screen_of(element("s1", "", top=150, class_name="android.widget.EditText", resource_id="mt:id/search_edit",
                           editable=True), element("s2", "历史搜索", top=300), package=PKG, fingerprint="search")
RESULTS = screen_of(element("r0", "Big Mac", top=150, resource_id="mt:id/search_edit"),
                    element("r1", "麦当劳 (人民广场店)", top=300, clickable=True), element("r2", "销量 1000+", top=400),
                    package=PKG, fingerprint="results")
LAUNCHER = screen_of(element("icon", "美团", clickable=True), package="com.android.launcher3", fingerprint="launcher")
POP_UP = (
    element("panel", top=700, height=900, left=60, width=960, resource_id="android:id/parentPanel"),
    element("offer", "红包到账 ¥5", top=760, height=120, left=100, width=880),
    element("take", "立即领取", top=1300, height=100, left=100, width=880, clickable=True,
            resource_id="android:id/button1"),
    element("close", "关闭", top=1420, height=100, left=100, width=880, clickable=True,
            resource_id="android:id/button2"),
)


def subtask(term: str = "McFlurry") -> SubTask:
    return SubTask(id="t1", app_label="美团", package=PKG, goal=GOAL.replace("Big Mac", term), search_term=term,
                   page_mode=PageMode.FOCUSED)


def remembered() -> RouteMemory:
    memory = RouteMemory(InMemoryBlobStore())
    memory.record(PKG, GOAL, [
        RouteStep(action=Tap(target="h2"), target=anchor_for(HOME, "h2"), fingerprint="home", anchors=("首页", "搜索", "外卖")),
        RouteStep(action=Input(text="Big Mac", target="s1", submit=True), target=anchor_for(SEARCH, "s1"),
                  fingerprint="search", anchors=("历史搜索",)),
        RouteStep(action=Tap(target="r1"), target=anchor_for(RESULTS, "r1"), fingerprint="results",
                  anchors=("Big Mac", "麦当劳 (人民广场店)", "销量 1000+")),
    ], search_term="Big Mac")
    return memory


def context(screen: Screen, history: list[TakenAction]) -> PolicyContext:
    return PolicyContext(subtask=subtask(), perception=perceived(screen), page_type=detect_page_type(screen),
                         step=len(history), history=tuple(history))


def taken(decision: Decision, screen: Screen, *, applied: bool = True) -> TakenAction:
    return TakenAction(action=decision.action, instruction=decision.action.kind, policy=decision.policy,
                       skill=decision.skill, fingerprint=screen.fingerprint, applied=applied)


def moved(screen: Screen, **ids: str) -> Screen:
    """``screen`` as a later visit shows it: same labels, new element ids, new fingerprint."""
    return screen.model_copy(update={
        "fingerprint": f"{screen.fingerprint}-again",
        "elements": tuple(e.model_copy(update={"id": ids.get(e.id, f"n{e.id}")}) for e in screen.elements),
    })


# ------------------------------------------------------------------ route memory


def test_a_remembered_route_is_replayed_step_by_step_from_the_launcher() -> None:
    policy = RouteMemoryPolicy(remembered())
    history: list[TakenAction] = []
    expected = [
        (LAUNCHER, OpenApp(package=PKG, reason="the route starts here")),
        (moved(HOME), Tap(target="nh2")),
        (moved(SEARCH), Input(text="McFlurry", target="ns1", submit=True)),  # this run's term in the slot
    ]
    for screen, action in expected:
        decision = policy.decide(context(screen, history))
        assert decision is not None and decision.policy == "route_memory"
        assert decision.action == action
        history.append(taken(decision, screen))
    # Up to the search: the result the route opened was chosen for another term.
    assert policy.decide(context(moved(RESULTS), history)) is None
    assert "result of another search" in policy.stopped_reason
    assert not policy.completed and not policy.replaying


def test_a_screen_the_route_does_not_expect_hands_over_to_the_next_policy() -> None:
    policy = RouteMemoryPolicy(remembered())
    chain = PolicyChain([policy, SkillsPolicy()])
    first = chain.decide(context(HOME, []))
    assert first is not None and first.policy == "route_memory"
    # Instead of the search page, a list of coupons: the route's check fails.
    coupons = screen_of(element("c1", "优惠券"), element("c2", "Search coupons", top=200, editable=True),
                        package=PKG, fingerprint="coupons")
    after = chain.decide(context(coupons, [taken(first, HOME)]))
    assert "not the one the route expects" in policy.stopped_reason and not policy.replaying
    assert after is not None and after.policy == "skills" and after.skill == "type_search"
    assert after.notes == ("route_memory passed",)
    # Once handed over, the route stays out of this try even on screens it knows.
    assert policy.decide(context(SEARCH, [taken(first, HOME), taken(after, coupons)])) is None


def test_an_entry_of_the_app_reading_the_term_is_opened_instead_of_the_routes_search() -> None:
    # The route searched "Big Mac"; this sub-task's term is a category the home page has an entry
    # for ("甜点"): as with no route, the skills open it. Before, the route typed "甜点" instead.
    home = screen_of(*HOME.elements, element("h4", "甜点", top=400, left=300, width=200, clickable=True),
                     package=PKG, fingerprint="home")
    policy = RouteMemoryPolicy(remembered())
    dessert = PolicyContext(subtask=subtask("甜点"), perception=perceived(home), page_type=detect_page_type(home),
                            step=0)
    decision = PolicyChain([policy, SkillsPolicy()]).decide(dessert)
    assert decision is not None and decision.skill == "open_entry"
    assert decision.action == Tap(target="h4", reason="open the app's own entry '甜点' for '甜点'")
    assert "an entry of the app reads the search term" in policy.stopped_reason
    # Another term, no such entry: the route goes on.
    assert RouteMemoryPolicy(remembered()).decide(context(home, [])) is not None


def test_a_step_the_phone_did_not_take_ends_the_replay() -> None:
    policy = RouteMemoryPolicy(remembered())
    first = policy.decide(context(HOME, []))
    assert first is not None
    assert policy.decide(context(HOME, [taken(first, HOME, applied=False)])) is None
    assert policy.stopped_reason == "the phone did not take the route's last step"


def test_the_replay_waits_while_a_pop_up_covers_the_page_and_goes_on_after() -> None:
    policy = RouteMemoryPolicy(remembered())
    chain = PolicyChain([policy, SkillsPolicy()])
    history: list[TakenAction] = []
    first = chain.decide(context(HOME, history))
    assert first is not None
    history.append(taken(first, HOME))
    covered = screen_of(*SEARCH.elements, *POP_UP, package=PKG, fingerprint="search+ad")
    # The page under the pop-up still passes the route's label check; the route waits anyway.
    assert policy.decide(context(covered, history)) is None
    assert policy.replaying and policy.stopped_reason == ""
    closing = chain.decide(context(covered, history))
    assert closing is not None and closing.policy == "skills" and closing.skill == "dismiss_dialog"
    assert closing.action == Tap(target="close", reason="close the pop-up without accepting it")
    history.append(taken(closing, covered))
    resumed = chain.decide(context(SEARCH, history))
    assert resumed is not None and resumed.policy == "route_memory"
    assert resumed.action == Input(text="McFlurry", target="s1", submit=True)


# ------------------------------------------------------------------ the chain


@dataclass
class ScriptedPolicyDouble:
    """A test double of a policy: answers a fixed decision (or passes) and counts the questions."""

    label: str
    answer: Decision | None
    asked: list[int] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.label

    def decide(self, context: PolicyContext) -> Decision | None:
        self.asked.append(context.step)
        return self.answer


def test_the_first_confident_policy_acts_and_the_ones_before_are_noted() -> None:
    unsure = ScriptedPolicyDouble("unsure", None)
    second = ScriptedPolicyDouble("second", Decision(action=Tap(target="h2"), policy="second", skill="tap search"))
    third = ScriptedPolicyDouble("third", Decision(action=Back(), policy="third"))
    chain = PolicyChain([unsure, second, third])
    assert chain.names == ("unsure", "second", "third")
    decision = chain.decide(context(HOME, []))
    assert decision is not None and decision.policy == "second" and decision.action == Tap(target="h2")
    assert decision.notes == ("unsure passed",)
    assert unsure.asked == [0] and second.asked == [0] and third.asked == []
    assert PolicyChain([unsure]).decide(context(HOME, [])) is None  # nobody confident: no action


def test_route_memory_comes_before_the_skills_when_both_are_confident() -> None:
    screen = moved(HOME)
    assert SkillsPolicy().decide(context(screen, [])) is not None  # the skills would tap 搜索 too
    decision = PolicyChain([RouteMemoryPolicy(remembered()), SkillsPolicy()]).decide(context(screen, []))
    assert decision is not None and decision.policy == "route_memory" and decision.notes == ()
    empty = PolicyChain([RouteMemoryPolicy(RouteMemory(InMemoryBlobStore())), SkillsPolicy()])
    fallback = empty.decide(context(screen, []))
    assert fallback is not None and fallback.policy == "skills" and fallback.notes == ("route_memory passed",)


def test_a_decision_naming_an_element_not_on_the_screen_is_a_bug_reported_by_name() -> None:
    liar = ScriptedPolicyDouble("liar", Decision(action=Tap(target="ghost"), policy="liar"))
    with pytest.raises(UnknownElementError, match="liar chose element 'ghost'"):
        PolicyChain([liar]).decide(context(HOME, []))
