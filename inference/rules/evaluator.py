"""The evaluator without a model: risk rules, page type, completion by page mode.

Completion follows DroidRetriever's criteria: ``list_view`` ends on a results
list, ``focused`` and ``multi_page`` on a details page. The page must also be
about the sub-task: its search term (fuzzy) or, without one, a word of the
goal is on the screen. A risky screen is never complete: it pauses first.
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz

from droidretriever.models import Evaluation, PageMode, PageType, Screen, SubTask
from inference.rules.page_type import detect_page_type
from inference.rules.risk import find_injection, find_risk

__all__ = ["evaluate_by_rules", "mentions_term"]

_TERM_MATCH = 80  # rapidfuzz partial_ratio; tolerates OCR slips and spacing
_TARGET_PAGE: dict[PageMode, tuple[PageType, ...]] = {
    PageMode.LIST_VIEW: (PageType.RESULTS_LIST,),
    PageMode.FOCUSED: (PageType.DETAILS,),
    PageMode.MULTI_PAGE: (PageType.DETAILS,),
}


def evaluate_by_rules(subtask: SubTask, screen: Screen) -> Evaluation:
    """Risk first, then whether the page mode's target page about this sub-task is shown."""
    page = detect_page_type(screen)
    risk = find_risk(screen, task=subtask.goal)
    if risk is not None:
        return Evaluation(
            complete=False,
            risk=True,
            risk_category=risk.category,
            page_type=page,
            reason=risk.reason,
            evaluator="rules",
        )
    targets: tuple[PageType, ...] = _TARGET_PAGE[subtask.page_mode]
    if subtask.search_term is None and page in (PageType.SETTINGS, PageType.OTHER):
        targets = (*targets, PageType.SETTINGS, PageType.OTHER)  # direct pages, e.g. in Settings
    about = (
        mentions_term(screen, subtask.search_term)
        if subtask.search_term
        else _mentions_goal(screen, subtask.goal)
    )
    complete = page in targets and about
    reason = (
        f"{page.value} page reached for {subtask.page_mode.value} mode"
        if complete
        else f"{page.value} page, {subtask.page_mode.value} mode wants "
        f"{' or '.join(t.value for t in targets)}"
        + ("" if about else " about the sub-task (its term is not on the screen)")
    )
    hostile = find_injection(screen.elements)
    if hostile is not None:
        reason += f"; ignored screen text that addresses the agent: {hostile.label[:60]!r}"
    return Evaluation(complete=complete, page_type=page, reason=reason, evaluator="rules")


def mentions_term(screen: Screen, term: str) -> bool:
    """Whether ``term`` is on the screen, tolerating case, spacing and OCR slips."""
    wanted = _normalize(term)
    if not wanted:
        return True
    for element in screen.elements:
        text = _normalize(element.label)
        if text and fuzz.partial_ratio(wanted, text) >= _TERM_MATCH and len(text) >= len(wanted) * 0.6:
            return True
    return False


def _mentions_goal(screen: Screen, goal: str) -> bool:
    words = {w for w in re.findall(r"[a-z]{5,}|[\u3400-\u9fff]{2,}", goal.lower())}
    screen_text = " ".join(e.label.lower() for e in screen.elements)
    return any(w in screen_text for w in words)


def _normalize(text: str) -> str:
    return re.sub(r"[\s'’\-_.:]+", "", text.lower())
