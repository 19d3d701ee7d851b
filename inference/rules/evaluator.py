"""The evaluator without a model: risk rules, page type, completion by page mode.

Completion follows DroidRetriever's criteria: ``list_view`` ends on a results
list, ``focused`` and ``multi_page`` on a details page. The page must also be
about the sub-task: its search term (fuzzy) or, without one, what the goal asks
for (:mod:`inference.rules.lexicon`): the page's heading (title, selected tab)
names one of the goal's concepts ("社区公约" for "community guidelines"); a goal
the lexicon knows nothing of falls back to one of its words on the screen.

A heading that names the goal is the target whatever the page's structure
(a currency list, a settings page), with two exceptions that make it a step:
a tappable entry on it names another concept of the goal (the place's "路线"
for "driving time"; a "后天" tab for "the day after tomorrow"), or, for
``focused`` / ``multi_page``, its list items name something else the goal
asks for (the monitor in the cart; in ``list_view`` without a search term, when
the goal asks for more than the heading names, an item naming the goal's
entity: "F1" in a list of films for F1's showtimes), or, for ``focused`` /
``multi_page``, the goal asks for the latest item of the list it heads ("my
latest email" on the inbox: the newest mail is opened). The app's words (its name) never count:
they are on every page of it. A risky screen is never complete: it pauses first.
A page of a kind of its own (a route's one plan, too little text for details) is
the answer in ``focused`` / ``multi_page`` when a title on it names every concept
the goal asks for ("驾车方案" for a driving time). In ``focused`` mode, a page of any kind
that states the one value asked for is the answer (:func:`find_readout`: "话费余额 ¥63.50" on an
app's first page for how much credit is left).
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz

from droidretriever.models import Evaluation, PageMode, PageType, Screen, SubTask, UIElement
from droidretriever.text import has_cjk
from inference.rules.lexicon import (
    GoalConcepts,
    find_goal_concepts,
    load_lexicon,
    match_concept,
    setting_change,
)
from inference.rules.page_type import (
    detect_page_type,
    find_list_items,
    find_nothing_found,
    is_card,
    shows_content,
)
from inference.rules.risk import find_injection, find_risk
from inference.rules.segment import split_words

__all__ = [
    "contradicts_mode",
    "evaluate_by_rules", "find_readout", "heading_concepts", "leading_entry", "list_title_concepts", "mentions_term", "page_heading",
]

_TERM_MATCH = 80  # rapidfuzz partial_ratio; tolerates OCR slips and spacing
_TARGET_PAGE: dict[PageMode, tuple[PageType, ...]] = {
    PageMode.LIST_VIEW: (PageType.RESULTS_LIST,),
    PageMode.FOCUSED: (PageType.DETAILS,),
    PageMode.MULTI_PAGE: (PageType.DETAILS,),
}
_BACK_LABELS = frozenset({"navigate up", "back", "返回", "뒤로", "戻る"})
_NOT_A_PAGE = (PageType.DIALOG, PageType.LOGIN, PageType.SEARCH_INPUT)
_ENTRY_CHARS = 24  # a navigation entry's label is short; longer ones are content
_LATEST = "latest"  # the lexicon's concept for "latest / newest / 最新"
_ENTRY_COVER = 0.67  # share of an entry's label the concept's label covers ("加入购物车" is an action)
_PAGE_HEADING = "page's heading"
_OTHER_SCRIPT_SHARE = 0.67  # share of a page's texts in CJK for a Latin term to be unreadable on it
_TITLE_COVER = 0.5  # share of a title the concept's label covers ("驾车方案": 驾车)
_READOUT_CHARS = 24  # a label and its value ("话费余额 ¥63.50"); longer texts are content
# A value: an amount with its currency, or a number with its unit ("18.6GB", "35 首", "80%").
_READOUT_VALUE = re.compile(r"[¥￥$€£]\s?\d|\d(?:[\d.,]*\d)?\s?(?:%|[A-Za-z]{1,3}\b|[\u4e00-\u9fff])")
_SETTING_CHARS = 60  # a setting's label ("Who can send you messages?"); longer texts explain it
_TITLE_GAP = 0.03  # share of the screen height between a list's title and its first item


def evaluate_by_rules(subtask: SubTask, screen: Screen, *, searched: bool = False) -> Evaluation:
    """Risk first, then whether the page mode's target page about this sub-task is shown.

    ``searched``: the sub-task ran its own search (or the app's query form) in this try, so a
    results list in a script its term is not written in is that search's results.
    """
    page = detect_page_type(screen)
    if page is PageType.OTHER and searched and _lone_card(screen):
        page = PageType.RESULTS_LIST  # a search with one hit: a list of one, not a page of its own
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
    nothing = find_nothing_found(screen)
    if nothing is not None:
        # An empty search is not the answer: another term or another way in may find it.
        return Evaluation(complete=False, page_type=page, evaluator="rules",
                          reason=f"the page says nothing was found ({nothing.label[:40]!r})")
    targets: tuple[PageType, ...] = _TARGET_PAGE[subtask.page_mode]
    if subtask.search_term is None and page in (PageType.SETTINGS, PageType.OTHER):
        targets = (*targets, PageType.SETTINGS, PageType.OTHER)  # direct pages, e.g. in Settings
    goal = find_goal_concepts(subtask.goal, subtask.search_term, subtask.app_label)
    heading = heading_concepts(screen, goal)
    titled = not heading and (subtask.page_mode is PageMode.LIST_VIEW or subtask.search_term is None)
    if titled:
        # A profile page with several lists: the one whose own title names all the goal asks
        # for ("收藏歌单" for "liked playlists") is the list wanted, whatever heads the page; on
        # a page reached through hubs, a section so titled ("积分商城" for the points shop) too.
        heading = list_title_concepts(screen, goal)
    held: tuple[tuple[str, str], ...] = ()
    if not heading and subtask.page_mode is PageMode.LIST_VIEW:
        # "The video memberships that renew by themselves" on the page of automatic payments:
        # a page about a concept holding what the goal asks for, whose records name it.
        held = held_by_heading(screen, goal)
        heading = tuple(c for c, _ in held)
    if not heading and setting_change(subtask.goal) and (
            page is PageType.SETTINGS or any(e.checkable for e in screen.elements)):
        # "How do I turn off private messages?": the settings page (or a page of switches and
        # choices) on which a setting names it ("Who can send you messages?") is where it is switched.
        heading = setting_concepts(screen, goal)
    step = leading_entry(screen, goal, heading)
    if heading and page not in _NOT_A_PAGE:
        others = None
        if subtask.page_mode is not PageMode.LIST_VIEW:
            others = _item_naming_more(screen, goal, heading)
        elif not subtask.search_term and any(c not in heading for c in goal.targets):
            # A list the goal wants more of (showtimes, not just films) with an item naming
            # what it is about ("F1") leads on to that item; a list whose heading names all
            # the goal asks for (meetings by Irene) is the answer, Irene in its items.
            others = _item_naming_more(screen, goal, heading, entities_only=True)
        # "My latest email" in focused mode wants one item of the inbox, not the inbox.
        # A list whose items open nothing (a bill's rows) is read where it is.
        one_item = (page is PageType.RESULTS_LIST and subtask.page_mode is not PageMode.LIST_VIEW
                    and _LATEST in goal.named and any(_opens(i, screen) for i in find_list_items(screen)))
        complete = step is None and others is None and not one_item
        reason = (
            (f"the {_PAGE_HEADING} names {held[0][1]}, which holds what the goal asks for, and its "
             f"records name {', '.join(heading)}" if held
             else f"the {'title of a list' if titled else _PAGE_HEADING} names the goal ({', '.join(heading)})")
            if complete
            else f"the heading names {', '.join(heading)}, but "
            + (f"{step.label!r} leads on" if step is not None
               else f"an item names more: {others!r}" if others is not None
               else "the goal asks for the latest item of this list")
        )
    else:
        about = (
            mentions_term(screen, subtask.search_term) or _titled_in_another_script(screen, goal, subtask.search_term)
            or (searched and page is PageType.RESULTS_LIST and _in_another_script(screen, subtask.search_term))
            if subtask.search_term
            else not goal.targets and _mentions_goal(screen, subtask.goal, subtask.app_label)
        )
        # A page of its own kind (a route's plans, not text-rich enough to read as details) is
        # the answer when a title on it names what the goal asks for.
        titled_kind = (page is PageType.OTHER and subtask.page_mode is not PageMode.LIST_VIEW
                       and _titled_for_goal(screen, goal))
        # One value asked for, stated on the page whatever its kind (a balance on the home page).
        readout = (find_readout(screen, subtask.search_term, goal)
                   if subtask.page_mode is PageMode.FOCUSED and page not in _NOT_A_PAGE else None)
        reached = (page in targets or titled_kind) and about
        complete = (reached or readout is not None) and step is None
        reason = (
            ((f"a page titled for what the goal asks ({', '.join(goal.targets)}) reached for "
              f"{subtask.page_mode.value} mode" if page not in targets
              else f"{page.value} page reached for {subtask.page_mode.value} mode")
             if reached else f"the page states the value asked for ({readout!r})")
            if complete
            else f"{page.value} page, {subtask.page_mode.value} mode wants "
            f"{' or '.join(t.value for t in targets)}"
            + ("" if about else " about the sub-task (its term is not on the screen)" if subtask.search_term
               else " about the sub-task (no concept of the goal heads the page)")
            + ("" if step is None else f"; {step.label!r} leads to what the goal names")
        )
    hostile = find_injection(screen.elements)
    if hostile is not None:
        reason += f"; ignored screen text that addresses the agent: {hostile.label[:60]!r}"
    return Evaluation(complete=complete, page_type=page, reason=reason, evaluator="rules")


def _lone_card(screen: Screen) -> bool:
    """Whether the page shows exactly one card, and it shows content (``shows_content``): an entry
    of two lines (an app found in Settings) is a way on, not a result to list."""
    cards = [e for e in screen.elements if not e.editable and is_card(e, screen)]
    return len(cards) == 1 and shows_content(cards[0], screen)


# Pages that are never a sub-task's answer, whatever a model says: a pop-up, a login wall,
# a search page before the search. With a search term, the mode's other kind of page is
# not it either: a results list is not one result's details page, and the reverse.
_NEVER_TARGET = (PageType.DIALOG, PageType.LOGIN, PageType.SEARCH_INPUT)
_NOT_FOR_MODE: dict[PageMode, tuple[PageType, ...]] = {
    PageMode.FOCUSED: (PageType.RESULTS_LIST, PageType.HOME),
    PageMode.MULTI_PAGE: (PageType.RESULTS_LIST, PageType.HOME),
    PageMode.LIST_VIEW: (PageType.DETAILS, PageType.HOME),
}


def contradicts_mode(page: PageType, subtask: SubTask) -> str | None:
    """Why a page of kind ``page`` cannot be ``subtask``'s target, or None when it may be.

    The rules' page types are coarse (many pages are ``other``), so this names only
    kinds that contradict the page mode; a model's "complete" on such a page is a
    disagreement, not a target.
    """
    wanted = " or ".join(t.value for t in _TARGET_PAGE[subtask.page_mode])
    if page in _NEVER_TARGET:
        return f"the rules see a {page.value} page, never a sub-task's answer"
    if subtask.search_term and page in _NOT_FOR_MODE[subtask.page_mode]:
        return f"the rules see a {page.value} page; {subtask.page_mode.value} mode wants a {wanted} page"
    return None


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


def page_heading(screen: Screen) -> tuple[str, ...]:
    """What heads the page: its title (the first short text from the top) and its selected tabs."""
    texts = sorted((e for e in screen.elements if e.text.strip() and len(e.text) <= 60),
                   key=lambda e: (e.bounds.top, e.bounds.left))
    title = (texts[0].text,) if texts else ()
    return (*title, *(e.label for e in screen.elements if e.selected and e.label))


def _in_another_script(screen: Screen, term: str) -> bool:
    """A Latin term ("trains") on a page written in CJK: without a model it cannot be read there."""
    texts = [e for e in screen.elements if e.label.strip()]
    return term.isascii() and sum(1 for e in texts if has_cjk(e.label)) >= _OTHER_SCRIPT_SHARE * max(len(texts), 1)


def _titled_in_another_script(screen: Screen, goal: GoalConcepts, term: str) -> bool:
    """A page of the kind the goal asks for, written in a script the term is not: a Latin term
    ("Shanghai") cannot be checked on a Chinese page without a model, so a title of the page
    naming every concept the goal asks for ("驾车方案" for a driving time) stands for it."""
    return _titled_for_goal(screen, goal) and _in_another_script(screen, term)


def _titled_for_goal(screen: Screen, goal: GoalConcepts) -> bool:
    """A title on the page (short, not tappable) names every concept the goal asks for: "驾车方案"
    over the plans of a route for a driving time."""
    if not goal.targets:
        return False
    concepts = load_lexicon().concepts
    return any(
        not e.clickable and 0 < len(e.label.strip()) <= _ENTRY_CHARS
        and all(match_concept(e.label.strip(), concepts[c]) >= _TITLE_COVER for c in goal.targets)
        for e in screen.elements)


def find_readout(screen: Screen, term: str | None, goal: GoalConcepts) -> str | None:
    """A readout stating the value asked for: a short text, tappable neither itself nor inside a
    card, that carries a value and names the term's last word ("话费余额 ¥63.50" for 手机话费,
    "剩余流量 18.6GB" for 流量) or, without a term, a concept the goal asks for ("余额" for a
    balance). A result card's price is not one: the card is tappable, the value the result's."""
    if term:
        words = [w.strip() for w in split_words(term.casefold()) if len(w.strip()) >= (2 if has_cjk(w) else 4)]
        if not words:
            return None
        head = words[-1]
        pattern = re.escape(head) if has_cjk(head) else rf"(?<![a-z]){re.escape(head)}(?![a-z])"

        def names(label: str) -> bool:
            # The value is beside the term, not in it: a model number ("i5-14600KF") is no value.
            folded = label.casefold()
            return re.search(pattern, folded) is not None and bool(_READOUT_VALUE.search(
                folded.replace(term.casefold(), " ").replace(head, " ")))
    elif goal.targets:
        concepts = [load_lexicon().concepts[c] for c in goal.targets]

        def names(label: str) -> bool:
            return any(match_concept(_READOUT_VALUE.sub(" ", label), c) for c in concepts)
    else:
        return None
    taps = [e.bounds for e in screen.elements if e.clickable]
    for element in screen.elements:
        label = element.label.strip()
        if (element.clickable or element.editable or not 0 < len(label) <= _READOUT_CHARS
                or not _READOUT_VALUE.search(label) or not names(label)):
            continue
        if not any(b.encloses(element.bounds) for b in taps):
            return label
    return None


def heading_concepts(screen: Screen, goal: GoalConcepts) -> tuple[str, ...]:
    """The goal's concepts (hubs left out) the page's heading names."""
    concepts = load_lexicon().concepts
    heading = page_heading(screen)
    return tuple(c for c in goal.targets if any(match_concept(h, concepts[c]) for h in heading))


def setting_concepts(screen: Screen, goal: GoalConcepts) -> tuple[str, ...]:
    """The goal's concepts, all of them, when the label of a setting on the page names them (a
    text, not an entry to tap: "Who can send you messages?"); else none."""
    if not goal.targets:
        return ()
    concepts = load_lexicon().concepts
    for text in screen.elements:
        label = text.label.strip()
        if text.clickable or text.editable or not 0 < len(label) <= _SETTING_CHARS:
            continue
        if all(match_concept(label, concepts[c]) for c in goal.targets):
            return goal.targets
    return ()


def held_by_heading(screen: Screen, goal: GoalConcepts) -> tuple[tuple[str, str], ...]:
    """The goal's concepts the page's records name, each with the concept heading the page that
    holds it (one step on the way to it: automatic payments hold subscriptions), when two records
    or more name them; else none. Records are items of content, not a hub's short entries."""
    concepts = load_lexicon().concepts
    heading = page_heading(screen)
    holders = [c for c, depth in goal.via.items() if depth == 1 and not concepts[c].hub
               and any(match_concept(h, concepts[c]) for h in heading)]
    if not holders or not goal.targets:
        return ()
    records = [i for i in find_list_items(screen) if shows_content(i, screen)]
    named = [c for c in goal.targets
             if sum(1 for r in records if match_concept(_all_text(r, screen), concepts[c])) >= 2]
    return tuple((c, holders[0]) for c in named)


def _all_text(item: UIElement, screen: Screen) -> str:
    """An item's label with the texts drawn inside it."""
    inner = [e.label for e in screen.elements if e is not item and e.label
             and item.bounds.encloses(e.bounds)]
    return " ".join([item.label, *inner])


def list_title_concepts(screen: Screen, goal: GoalConcepts) -> tuple[str, ...]:
    """The goal's concepts, all of them, when the title of a list on the page names them all (else none).

    A list's title is a short text that is not tappable, right above an item of
    the page's list ("收藏歌单" over the saved playlists, "为你推荐的歌单" over
    recommended ones: only the first names "liked playlists").
    """
    if not goal.targets:
        return ()
    concepts = load_lexicon().concepts
    items = find_list_items(screen)
    for text in screen.elements:
        label = text.label.strip()
        if text.clickable or not 0 < len(label) <= _ENTRY_CHARS or any(text is i for i in items):
            continue
        if not any(0 <= i.bounds.top - text.bounds.bottom <= screen.height * _TITLE_GAP
                   and i.bounds.left <= text.bounds.left < i.bounds.right for i in items):
            continue
        if all(match_concept(label, concepts[c]) for c in goal.targets):
            return goal.targets
    return ()


def leading_entry(screen: Screen, goal: GoalConcepts, heading: tuple[str, ...]) -> UIElement | None:
    """A tappable entry (short, not selected) naming a concept of the goal the heading does not."""
    concepts = load_lexicon().concepts
    wanted = [concepts[c] for c in goal.targets if c not in heading]
    for element in screen.elements:
        label = element.label.strip()
        if not element.clickable or element.selected or element.editable or not 0 < len(label) <= _ENTRY_CHARS:
            continue
        if label.casefold() in _BACK_LABELS:
            continue  # the app bar's way back, whatever its words
        if any(match_concept(label, c) >= _ENTRY_COVER for c in wanted):
            return element
    return None


def _item_naming_more(screen: Screen, goal: GoalConcepts, heading: tuple[str, ...], *,
                      entities_only: bool = False) -> str | None:
    """The label of a list item naming an entity or a concept of the goal the heading does not.

    ``entities_only`` (list_view): the list the goal wants may name its concepts in
    every item (playlists), but an item naming what the goal is about ("F1" in a
    list of films) means the goal's list is that item's. An item that opens nothing (a
    bill's row, tappable neither itself nor inside a card) leads nowhere: it is read where it is.
    """
    concepts = load_lexicon().concepts
    wanted = [] if entities_only else [concepts[c] for c in goal.targets if c not in heading]
    entities = [e.casefold() for e in goal.entities]
    for item in find_list_items(screen):
        if not _opens(item, screen):
            continue
        label = item.label or " ".join(
            e.label for e in screen.elements
            if e.label and item.bounds.encloses(e.bounds)
        )
        folded = label.casefold()
        if any(e in folded for e in entities) or any(match_concept(label, c) for c in wanted):
            return label[:60]
    return None


def _opens(item: UIElement, screen: Screen) -> bool:
    """Whether tapping ``item`` may open something: it is tappable, or inside a tappable card."""
    return item.clickable or any(e.clickable and e.bounds.encloses(item.bounds)
                                 for e in screen.elements)


def _mentions_goal(screen: Screen, goal: str, app_label: str) -> bool:
    app_words = set(re.findall(r"[a-z]{5,}|[\u3400-\u9fff]{2,}", app_label.lower()))
    words = {w for w in re.findall(r"[a-z]{5,}|[\u3400-\u9fff]{2,}", goal.lower())} - app_words
    screen_text = " ".join(e.label.lower() for e in screen.elements)
    return any(w in screen_text for w in words)


def _normalize(text: str) -> str:
    return re.sub(r"[\s'’\-_.:]+", "", text.lower())
