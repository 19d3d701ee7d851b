"""The rule evaluator is an ordered table of named strategies; the reason says which one decided."""

from __future__ import annotations

from core.models import PageMode, SubTask
from inference.rules import evaluate_by_rules
from inference.rules.evaluator import STRATEGIES
from tests.inference.screens import button, element, results_screen, screen_of


def subtask(goal: str, mode: PageMode = PageMode.FOCUSED, term: str | None = None) -> SubTask:
    return SubTask(id="app-1", app_label="App", package="com.example.app", goal=goal, search_term=term,
                   page_mode=mode)


def test_the_strategies_are_tried_in_the_old_order_of_the_branches() -> None:
    assert [s.name for s in STRATEGIES] == [
        "risky_screen", "act_page", "nothing_found", "heading", "list_title", "held_by_heading", "setting", "target_page"]
    assert all(s.judge.__doc__ for s in STRATEGIES), "each strategy says which kind of page it is for"


def test_the_reason_names_the_strategy_that_decided() -> None:
    pay = screen_of(element("t", "Checkout", top=100), element("total", "Order total ¥58", top=300),
                    button("pay", "Pay now", 2000))
    assert evaluate_by_rules(subtask("In App: order a burger"), pay).reason.startswith("[risky_screen] ")

    empty = screen_of(element("box", "burger", top=100, editable=True, class_name="android.widget.EditText"),
                      element("none", "No results found", top=600))
    verdict = evaluate_by_rules(subtask("In App: burger", term="burger"), empty)
    assert not verdict.complete and verdict.reason.startswith("[nothing_found] ")

    guidelines = screen_of(element("title", "Community guidelines", top=100),
                           element("p", "Be kind to each other and credit your sources. " * 6, top=300, height=400))
    verdict = evaluate_by_rules(subtask("In App: list the community guidelines", PageMode.LIST_VIEW), guidelines)
    assert verdict.complete and verdict.reason.startswith("[heading] "), verdict.reason

    listing = evaluate_by_rules(subtask("In App: Big Mac", PageMode.LIST_VIEW, term="Big Mac"), results_screen())
    assert listing.complete and listing.reason.startswith("[target_page] "), listing.reason
