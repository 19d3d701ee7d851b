"""The evaluator without a model: an ordered table of named strategies, each for one kind of page.

Completion follows DroidRetriever's criteria: ``list_view`` ends on a results list, ``focused``
and ``multi_page`` on a details page. The page must also be about the sub-task: its search term
(fuzzy) or, without one, what the goal asks for (:mod:`inference.rules.lexicon`): the page's
heading (title, selected tab) names one of the goal's concepts (a page titled "社区公约" for
"community guidelines"); a goal the lexicon knows nothing of falls back to one of its words on
the screen.

:data:`STRATEGIES` are tried in order; the first that applies judges the page, and the
evaluation's reason starts with its name in brackets (``[heading] the page's heading names the
goal (...)``), so a run's trace says which one decided:

1. ``risky_screen``     a risky screen is never complete: it pauses first;
2. ``act_page``         a request to act (``SubTask.act``: top up, order, send...) is never complete;
                        a page with the act's button is where the person does it: it pauses there
                        as a risky screen does;
3. ``nothing_found``    a search that found nothing is not the answer;
4. ``heading``          the page's heading names the goal's concepts;
5. ``list_title``       the title right above one of the page's lists names all the goal asks for;
6. ``held_by_heading``  the page is about a concept that holds what the goal asks for, and its
                        records name it (subscriptions on the page of automatic payments);
7. ``setting``          a setting's label on a settings page names what the goal asks to switch;
8. ``target_page``      otherwise: a page of the kind the page mode wants, about the sub-task; a
                        page of a kind of its own titled for the goal; or, in ``focused`` mode, a
                        page that states the one value asked for.

A page named by the goal (strategies 4 to 7) is the target whatever its structure, with three
exceptions that make it a step: a tappable entry on it names another concept of the goal (a
place's route entry for a driving time; a tab for the day after tomorrow), or, for ``focused`` /
``multi_page``, its list items name something else the goal asks for (the monitor in the cart;
in ``list_view`` without a search term, when the goal asks for more than the heading names, an
item naming the goal's entity: a film in a list of films, for its showtimes), or, for
``focused`` / ``multi_page``, the goal asks for the latest item of the list it heads ("my latest
email" on the inbox: the newest mail is opened). The app's words (its name) never count: they
are on every page of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from core.models import Evaluation, PageMode, PageType, Screen, SubTask, UIElement
from inference.rules.acts import find_act_button
from inference.rules.headings import (
    find_readout,
    heading_concepts,
    held_by_heading,
    in_another_script,
    item_naming_more,
    leading_entry,
    list_title_concepts,
    lone_card,
    mentions_goal,
    mentions_term,
    opens,
    page_heading,
    setting_concepts,
    titled_for_goal,
    titled_in_another_script,
)
from inference.rules.lexicon import GoalConcepts, find_goal_concepts, setting_change
from inference.rules.page_type import detect_page_type, find_list_items, find_nothing_found
from inference.rules.risk import RiskFinding, find_injection, find_risk, quote_label

__all__ = [
    "STRATEGIES",
    "Strategy",
    "contradicts_mode",
    "evaluate_by_rules",
    "find_readout",
    "heading_concepts",
    "leading_entry",
    "list_title_concepts",
    "mentions_term",
    "page_heading",
]

_TARGET_PAGE: dict[PageMode, tuple[PageType, ...]] = {
    PageMode.LIST_VIEW: (PageType.RESULTS_LIST,),
    PageMode.FOCUSED: (PageType.DETAILS,),
    PageMode.MULTI_PAGE: (PageType.DETAILS,),
}
_NOT_A_PAGE = (PageType.DIALOG, PageType.LOGIN, PageType.SEARCH_INPUT)
_LATEST = "latest"  # the lexicon's concept for "latest / newest / 最新"
_PAGE_HEADING = "page's heading"


@dataclass(frozen=True)
class _Named:
    """The goal's concepts the page names, and which reading of the page found them."""

    concepts: tuple[str, ...] = ()
    by: str = ""  # the strategy whose reading found them ("" when none did)
    titled: bool = False  # the heading names nothing, and the goal may want a list's title
    held: tuple[tuple[str, str], ...] = ()  # concept -> the heading concept holding it


class _Case:
    """One sub-task on one screen, with what the strategies read of it, each read once."""

    def __init__(self, subtask: SubTask, screen: Screen, searched: bool) -> None:
        self.subtask = subtask
        self.screen = screen
        self.searched = searched

    @cached_property
    def page(self) -> PageType:
        page = detect_page_type(self.screen)
        if page is PageType.OTHER and self.searched and lone_card(self.screen):
            return PageType.RESULTS_LIST  # a search with one hit: a list of one, not a page of its own
        return page

    @cached_property
    def risk(self) -> RiskFinding | None:
        return find_risk(self.screen, task=self.subtask.goal)

    @cached_property
    def nothing(self) -> UIElement | None:
        return find_nothing_found(self.screen)

    @cached_property
    def goal(self) -> GoalConcepts:
        subtask = self.subtask
        return find_goal_concepts(subtask.goal, subtask.search_term, subtask.app_label)

    @cached_property
    def named(self) -> _Named:
        """The concepts the page names, read as strategies 3 to 6 read it, in their order."""
        screen, goal, subtask = self.screen, self.goal, self.subtask
        heading = heading_concepts(screen, goal)
        if heading:
            return _Named(heading, "heading")
        titled = subtask.page_mode is PageMode.LIST_VIEW or subtask.search_term is None
        if titled and (listed := list_title_concepts(screen, goal)):
            return _Named(listed, "list_title", titled=True)
        if subtask.page_mode is PageMode.LIST_VIEW and (held := held_by_heading(screen, goal)):
            return _Named(tuple(c for c, _ in held), "held_by_heading", titled=titled, held=held)
        if setting_change(subtask.goal) and (
                self.page is PageType.SETTINGS or any(e.checkable for e in screen.elements)):
            setting = setting_concepts(screen, goal)
            if setting:
                return _Named(setting, "setting", titled=titled)
        return _Named(titled=titled)

    @cached_property
    def step(self) -> str | None:
        """The label of a tappable entry naming a concept of the goal the page does not: a step on."""
        entry = leading_entry(self.screen, self.goal, self.named.concepts)
        return None if entry is None else entry.label

    def verdict(self, complete: bool, reason: str) -> Evaluation:
        """The page's evaluation, noting screen text that addresses the agent (ignored)."""
        hostile = find_injection(self.screen.elements)
        if hostile is not None:
            reason += f"; ignored screen text that addresses the agent: {hostile.label[:60]!r}"
        return Evaluation(complete=complete, page_type=self.page, reason=reason, evaluator="rules")


@dataclass(frozen=True)
class Strategy:
    """One way a page is judged: its name (in the evaluation's reason), when it applies, its verdict."""

    name: str
    applies: Callable[[_Case], bool]
    judge: Callable[[_Case], Evaluation]


def _is_risky(case: _Case) -> bool:
    return case.risk is not None


def _risky_screen(case: _Case) -> Evaluation:
    """A risky screen (paying, signing in, deleting, consenting, a privacy setting, a sensitive
    form; :func:`inference.rules.risk.find_risk`): never complete, it pauses for a person first."""
    risk = case.risk
    if risk is None:  # the table asks _is_risky first
        raise LookupError("the risky_screen strategy was asked to judge a screen with no risk")
    return Evaluation(complete=False, risk=True, risk_category=risk.category, page_type=case.page,
                      reason=risk.reason, evaluator="rules")


def _asks_to_act(case: _Case) -> bool:
    return case.subtask.act is not None


def _act_page(case: _Case) -> Evaluation:
    """A request to act (top up, order, send...: ``SubTask.act``): no page answers it. A page showing
    the act's button (after the sub-task's search, if it has one; not under a pop-up or a sign-in)
    is where the person does it: it pauses for them as a risky screen does, and the agent never
    presses the button. Any other page is a step on the way."""
    kind = case.subtask.act
    if kind is None:  # the table asks _asks_to_act first
        raise LookupError("the act_page strategy was asked to judge a sub-task that asks for no act")
    button = None
    if case.page not in (PageType.DIALOG, PageType.LOGIN) and (case.searched or not case.subtask.search_term):
        button = find_act_button(case.screen, kind)
    if button is None:
        return case.verdict(False, f"a request to {kind.verb}: no page answers it; looking for where to "
                                   f"{kind.verb}")
    return Evaluation(complete=False, risk=True, risk_category=kind.risk, page_type=case.page, evaluator="rules",
                      reason=f"{quote_label(button.label)} is where to {kind.verb}: the agent does not "
                             f"{kind.verb}, the page is open for the person")


def _finds_nothing(case: _Case) -> bool:
    return case.nothing is not None


def _nothing_found(case: _Case) -> Evaluation:
    """A search that found nothing ("No results"): not the answer; another term or another way in
    may find it."""
    nothing = case.nothing
    if nothing is None:  # the table asks _finds_nothing first
        raise LookupError("the nothing_found strategy was asked to judge a page with no such notice")
    return Evaluation(complete=False, page_type=case.page, evaluator="rules",
                      reason=f"the page says nothing was found ({nothing.label[:40]!r})")


def _named_by(reading: str) -> Callable[[_Case], bool]:
    """Whether the page names the goal by ``reading`` and is a page (no pop-up, sign-in or search box)."""
    def applies(case: _Case) -> bool:
        return case.named.by == reading and case.page not in _NOT_A_PAGE
    return applies


def _named_page(case: _Case) -> Evaluation:
    """A page that names the goal's concepts is the target whatever its structure, unless an entry
    on it leads on to another concept, an item names more of what the goal asks for, or the goal
    wants the latest item of the list it heads (see the module docstring)."""
    subtask, screen, goal, named = case.subtask, case.screen, case.goal, case.named
    heading = named.concepts
    others = None
    if subtask.page_mode is not PageMode.LIST_VIEW:
        others = item_naming_more(screen, goal, heading)
    elif not subtask.search_term and any(c not in heading for c in goal.targets):
        # A list the goal wants more of (showtimes, not just films) with an item naming what it is
        # about (the film) leads on to that item; a list whose heading names all the goal asks for
        # (meetings by one organiser) is the answer, the organiser's name in its items.
        others = item_naming_more(screen, goal, heading, entities_only=True)
    # "My latest email" in focused mode wants one item of the inbox, not the inbox.
    # A list whose items open nothing (a bill's rows) is read where it is.
    one_item = (case.page is PageType.RESULTS_LIST and subtask.page_mode is not PageMode.LIST_VIEW
                and _LATEST in goal.named and any(opens(i, screen) for i in find_list_items(screen)))
    complete = case.step is None and others is None and not one_item
    if complete:
        reason = (f"the {_PAGE_HEADING} names {named.held[0][1]}, which holds what the goal asks for, and "
                  f"its records name {', '.join(heading)}" if named.held
                  else f"the {'title of a list' if named.titled else _PAGE_HEADING} names the goal "
                  f"({', '.join(heading)})")
    else:
        reason = f"the heading names {', '.join(heading)}, but " + (
            f"{case.step!r} leads on" if case.step is not None
            else f"an item names more: {others!r}" if others is not None
            else "the goal asks for the latest item of this list")
    return case.verdict(complete, reason)


def _heading(case: _Case) -> Evaluation:
    """A page whose heading (its title, a selected tab) names the goal's concepts: a page titled
    "社区公约" for "community guidelines", an app's permissions page for its permissions."""
    return _named_page(case)


def _list_title(case: _Case) -> Evaluation:
    """A page of several lists (a profile page), whose heading names nothing of the goal, where the
    title right above one list names all the goal asks for (the saved playlists' title for "liked
    playlists"); or, on a page reached through hubs, a section so titled (a points shop's section).
    For ``list_view`` goals and goals without a search term."""
    return _named_page(case)


def _held_by_heading(case: _Case) -> Evaluation:
    """A page about a concept that holds what a ``list_view`` goal asks for, whose records (two or
    more) name it: the video memberships that renew by themselves, on the page of automatic
    payments."""
    return _named_page(case)


def _setting(case: _Case) -> Evaluation:
    """A settings page (or a page of switches and choices) on which a setting's label names what a
    goal asks how to switch on or off (a privacy setting on who may send messages, for "How do I
    turn off private messages?"): where it is switched."""
    return _named_page(case)


def _target_page(case: _Case) -> Evaluation:
    """Every other page: the kind the page mode wants (a results list, a details page; for a goal
    without a search term a settings or plain page too) about the sub-task (its term on the screen,
    or, without a term and a concept, a word of the goal); a page of a kind of its own (a route's
    plans, too little text for details) whose title names every concept the goal asks for; in
    ``focused`` mode, a page of any kind stating the one value asked for (a balance on an app's
    first page: :func:`~inference.rules.headings.find_readout`). Never when an entry leads on."""
    subtask, screen, goal, page = case.subtask, case.screen, case.goal, case.page
    targets: tuple[PageType, ...] = _TARGET_PAGE[subtask.page_mode]
    if subtask.search_term is None and page in (PageType.SETTINGS, PageType.OTHER):
        targets = (*targets, PageType.SETTINGS, PageType.OTHER)  # direct pages, e.g. in Settings
    about = (
        mentions_term(screen, subtask.search_term) or titled_in_another_script(screen, goal, subtask.search_term)
        or (case.searched and page is PageType.RESULTS_LIST and in_another_script(screen, subtask.search_term))
        if subtask.search_term
        else not goal.targets and mentions_goal(screen, subtask.goal, subtask.app_label)
    )
    # A page of its own kind (a route's plans, not text-rich enough to read as details) is
    # the answer when a title on it names what the goal asks for.
    titled_kind = (page is PageType.OTHER and subtask.page_mode is not PageMode.LIST_VIEW
                   and titled_for_goal(screen, goal))
    # One value asked for, stated on the page whatever its kind (a balance on the home page).
    readout = (find_readout(screen, subtask.search_term, goal)
               if subtask.page_mode is PageMode.FOCUSED and page not in _NOT_A_PAGE else None)
    reached = (page in targets or titled_kind) and about
    complete = (reached or readout is not None) and case.step is None
    if complete:
        reason = ((f"a page titled for what the goal asks ({', '.join(goal.targets)}) reached for "
                   f"{subtask.page_mode.value} mode" if page not in targets
                   else f"{page.value} page reached for {subtask.page_mode.value} mode")
                  if reached else f"the page states the value asked for ({readout!r})")
    else:
        reason = (f"{page.value} page, {subtask.page_mode.value} mode wants "
                  f"{' or '.join(t.value for t in targets)}"
                  + ("" if about else " about the sub-task (its term is not on the screen)" if subtask.search_term
                     else " about the sub-task (no concept of the goal heads the page)")
                  + ("" if case.step is None else f"; {case.step!r} leads to what the goal names"))
    return case.verdict(complete, reason)


def _always(case: _Case) -> bool:
    return True


# The strategies, in the order they are tried; the first that applies judges the page.
STRATEGIES: tuple[Strategy, ...] = (
    Strategy("risky_screen", _is_risky, _risky_screen),
    Strategy("act_page", _asks_to_act, _act_page),
    Strategy("nothing_found", _finds_nothing, _nothing_found),
    Strategy("heading", _named_by("heading"), _heading),
    Strategy("list_title", _named_by("list_title"), _list_title),
    Strategy("held_by_heading", _named_by("held_by_heading"), _held_by_heading),
    Strategy("setting", _named_by("setting"), _setting),
    Strategy("target_page", _always, _target_page),
)


def evaluate_by_rules(subtask: SubTask, screen: Screen, *, searched: bool = False) -> Evaluation:
    """Risk first, then whether the page mode's target page about this sub-task is shown: the first
    of :data:`STRATEGIES` that applies judges, and its name starts the reason.

    ``searched``: the sub-task ran its own search (or the app's query form) in this try, so a
    results list in a script its term is not written in is that search's results.
    """
    case = _Case(subtask, screen, searched)
    strategy = next(s for s in STRATEGIES if s.applies(case))
    evaluation = strategy.judge(case)
    return evaluation.model_copy(update={"reason": f"[{strategy.name}] {evaluation.reason}"})


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
