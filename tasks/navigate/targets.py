"""Target pages of one try: which page is a target, its capture, and when the sub-task is done.

``focused`` wants one details page, ``list_view`` the results list itself,
``multi_page`` up to ``browsing_limit`` distinct results (each captured, then
Back to the branch point; visited results are masked by item signature in
:class:`tasks.navigate.run.SubTaskRun`). When the last wanted page is
captured, the route that reached the first one is remembered for next time.

With an evaluator model configured, its verdict decides, checked by the rules
(:func:`inference.llm_roles.check_verdict`: a page kind the mode allows, or a
result opened from a list); the rules' own target signals count only when the
model failed or its time was spent. A small model's "complete" on the wrong item
is not remembered: a route is remembered as replayable only when its target was
confirmed beyond the model's word (:meth:`TargetPages.confirms`: the rules' own
verdict is "complete" too, or the page passes the answer checks: it shows the
search term and most of what the goal asks); otherwise it is kept unconfirmed and
never replayed. A remembered route whose replay ends on a page judged not the
target is forgotten with every copy of it, and the try goes on from there.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.models import (
    CaptureSource,
    Evaluation,
    Input,
    InstalledApp,
    OpenApp,
    PageMode,
    PageType,
    RunEventKind,
    Screen,
    SubTask,
    SubTaskStatus,
    Tap,
)
from device_farm.models import DeviceObservation
from inference.maps import text_lines
from inference.memory import shows_goal
from inference.policies import (
    ROUTE_MEMORY,
    Decision,
    RouteMemoryPolicy,
    TakenAction,
    is_dialog_open,
    ran_a_search,
    route_steps,
)
from inference.rules import (
    contradicts_mode,
    detect_page_type,
    evaluate_by_rules,
    find_goal_concepts,
    find_list_items,
    find_nothing_found,
    find_truncated_items,
    heading_concepts,
    leading_entry,
    list_title_concepts,
    mentions_term,
)
from inference.rules.apps import names_for
from tasks.capture import CaptureRequest, capture_scrolling
from tasks.navigate.act import page_title
from tasks.navigate.run import SubTaskRun, TryEnd
from tasks.navigate.titles import saved_screen_title

__all__ = ["TargetPages", "opens_result", "search_took_effect"]

_MIN_CARDS = 3  # a search's answer with fewer cards is one hit to open, not a list to capture
_NOT_MOVES = frozenset({"dismiss_dialog", "open_app"})  # skills that do not go anywhere in the app


class TargetPages:
    """The try's target-page bookkeeping: captured fingerprints and the route to remember."""

    def __init__(self, run: SubTaskRun, attempt: int, memory: RouteMemoryPolicy | None) -> None:
        self.run = run
        self.attempt = attempt
        self.memory = memory
        self.captured: set[str] = set()  # fingerprints of pages captured in this try
        self.route_end: int | None = None  # actions taken when the first target was captured
        self.route_confirmed = False  # the first target was confirmed by the model and the rules
        self.forgotten = False  # the replayed route was forgotten in this try
        self.route_target_texts: tuple[str, ...] = ()  # what the first target page showed

    def is_target(self, evaluation: Evaluation, screen: Screen,
                  history: Sequence[TakenAction]) -> bool:
        """Whether ``screen`` is a target page not captured yet in this try."""
        if screen.fingerprint in self.captured:
            return False
        if find_nothing_found(screen) is not None:
            return False  # an empty search is never the answer, whatever a remembered route says
        if self.memory is not None:
            self.memory.recall(self.run.subtask)
        if self.memory is not None and self.memory.replaying:
            # The remembered route reached its target further on (the "Route" tab of a
            # place, the "Currency" entry of Settings): pages on the way are not it.
            return False
        subtask = self.run.subtask
        if subtask.act is not None:
            return False  # a request to act: no page answers it; where it is done, it pauses
        if self.replay_ends_here(history, screen):
            if not self._judged_not_target(evaluation, history, screen):
                return True  # the remembered route ends where its target page was captured before
            self._forget_route(evaluation)
            return False
        if evaluation.evaluator != "rules":
            return evaluation.complete  # the model's verdict, already checked against the rules
        if self.map_target(evaluation.page_type, screen):
            return True  # a screen the app map holds the answer on, showing the question's words
        if not evaluation.complete and _entry_leads_on(subtask, screen):
            return False  # the page offers an entry named by the goal (a place's "路线"): a step
        if evaluation.complete:
            # The rules only see the term somewhere on a rich page; before any move in
            # the app (a feed greeting with a recommendation) that is not the search's target.
            return bool(not self.run.subtask.search_term or any(_moves_in_app(history)))
        return self.opened_details(history, screen) or self.search_listed(history, screen)

    def expects_target(self, history: Sequence[TakenAction], screen: Screen) -> bool:
        """The rules' structural signals that ``screen`` is the target, whatever its words.

        A result just opened from a list, the results a submitted search brought up
        (``list_view``), or the page a remembered route ends on: where the evaluator
        model is asked on arrival even when the rules' words do not see the target.
        """
        return (self.opened_details(history, screen) or self.search_listed(history, screen)
                or self.replay_ends_here(history, screen) or self.map_target(detect_page_type(screen), screen))

    def map_target(self, page_type: PageType, screen: Screen) -> bool:
        """The app map's target for the sub-task, live and showing the question's words (see
        :meth:`inference.maps.MapGuide.is_target`), of a kind the page mode allows; never while the
        answer lies behind a search, and never the app's first page (what the first page shows is
        the rules' to read: a readout, a greeting)."""
        guide = self.run.guide
        if (guide is None or guide.searches or screen.package != self.run.subtask.package
                or is_dialog_open(screen) or contradicts_mode(page_type, self.run.subtask)):
            return False
        pursued = guide.pursued
        return pursued is not None and pursued.id != guide.map.start and guide.is_target(screen)

    def search_listed(self, history: Sequence[TakenAction], screen: Screen) -> bool:
        """``list_view``: the page is what a submitted search brought up, a list of cards.

        Even when its notes spell the term differently or are not laid out as uniform rows.
        """
        last = history[-1] if history else None
        return (self.run.subtask.page_mode is PageMode.LIST_VIEW and last is not None and last.applied
                and screen.package == self.run.subtask.package
                and isinstance(last.action, Input) and last.action.submit
                and screen.fingerprint != last.fingerprint and not is_dialog_open(screen)
                and _cards(screen) >= _MIN_CARDS)

    def replay_ends_here(self, history: Sequence[TakenAction], screen: Screen) -> bool:
        """Whether a remembered route's last step was just replayed onto ``screen``."""
        last = history[-1] if history else None
        return (last is not None and last.applied and screen.package == self.run.subtask.package
                and self._route_just_completed(history, screen))

    def confirms(self, evaluation: Evaluation, screen: Screen, history: Sequence[TakenAction]) -> bool:
        """Whether a target is confirmed beyond one model's word, so its route may be replayed.

        Without an evaluator model the rules alone decide, as always. With one, the
        model must have said complete (a verdict the rules' page kind contradicts is
        already "not complete") and either the rules' own verdict on the page is
        "complete" too or the page passes the answer checks (:meth:`answers_question`);
        a verdict of the rules alone (the model failed or its time was spent)
        confirms nothing.
        """
        if self.run.copilot.evaluator is None:
            return True
        if evaluation.evaluator == "rules" or not evaluation.complete:
            return False
        by_rules = evaluate_by_rules(self.run.subtask, screen, searched=ran_a_search(history))
        return by_rules.complete or self.answers_question(screen)

    def answers_question(self, screen: Screen) -> bool:
        """The answer checks of a page: it shows the sub-task's search term (when it has one) and
        most of the content words its goal asks (the term, the app's names and the question's
        frame left out): the page of another item, however like the target, does not."""
        subtask = self.run.subtask
        if subtask.search_term and not mentions_term(screen, subtask.search_term):
            return False
        names = names_for(InstalledApp(label=subtask.app_label, package=subtask.package))
        return shows_goal(text_lines(screen), subtask.goal, search_term=subtask.search_term, ignore=names)

    def opened_details(self, history: Sequence[TakenAction], screen: Screen) -> bool:
        """The rules' structural view: a result opened from a list is that result's details page.

        Even when it is built like a list itself (a store with its dishes), unless its
        items are previews cut short ("…展开阅读全文"): the details are one tap further.
        """
        last = history[-1] if history else None
        return (self.run.subtask.page_mode is not PageMode.LIST_VIEW and last is not None
                and last.applied and last.opened_result and screen.fingerprint != last.fingerprint
                and screen.package == self.run.subtask.package and not find_truncated_items(screen))

    def _judged_not_target(self, evaluation: Evaluation, history: Sequence[TakenAction],
                           screen: Screen) -> bool:
        """The replayed route's last page was judged not the target.

        By the model; or, with an evaluator model configured, by the rules' page kind
        where the model is not asked because its verdict could not count there; or,
        without one, by a page that shows neither the sub-task's search term nor a heading
        naming all the goal asks for (the rules found it incomplete): recalled by a word two
        questions share ("12306", "list"), another question's route (the trains list for the
        member rights, the member page for a refund fee).
        """
        if evaluation.complete:
            return False
        if evaluation.evaluator != "rules":
            return True
        if self.run.copilot.evaluator is None:
            return self._names_nothing_asked(screen)
        return (not self.opened_details(history, screen)
                and contradicts_mode(evaluation.page_type, self.run.subtask) is not None)

    def _names_nothing_asked(self, screen: Screen) -> bool:
        subtask = self.run.subtask
        if subtask.search_term is not None and mentions_term(screen, subtask.search_term):
            return False  # the page shows what the sub-task searches for
        goal = find_goal_concepts(subtask.goal, subtask.search_term, subtask.app_label)
        if not goal.targets:
            # Nothing but the term to look for, and the term is not there: the page another
            # sub-task of the question found ("学期" led to an exam notice; "绩点" is not on it).
            return subtask.search_term is not None
        named = {*heading_concepts(screen, goal), *list_title_concepts(screen, goal)}
        return not set(goal.targets) <= named

    def _forget_route(self, evaluation: Evaluation) -> None:
        if self.forgotten or self.memory is None:
            return
        self.forgotten = True
        gone = self.memory.forget()
        if gone:
            copies = f" and its {gone - 1} cop{'y' if gone == 2 else 'ies'}" if gone > 1 else ""
            self.run.publish(RunEventKind.LOG, "the remembered route ended on a page the evaluator judged "
                                               f"not the target ({evaluation.reason[:120]}): route{copies} forgotten")

    def _route_just_completed(self, history: Sequence[TakenAction], screen: Screen) -> bool:
        if self.memory is None or not self.memory.completed or is_dialog_open(screen):
            return False
        # Pop-ups closed after the route's last step do not count as moves.
        moves = [t for t in history if t.skill != "dismiss_dialog"]
        return bool(moves) and moves[-1].policy == ROUTE_MEMORY

    def capture(self, observation: DeviceObservation, screen: Screen,
                taken: Sequence[tuple[TakenAction, Screen]], *, force: bool = False,
                source: CaptureSource = CaptureSource.AUTO, confirmed: bool = True) -> TryEnd | None:
        """Capture the page; the end of the sub-task unless more pages are wanted.

        ``force``: the navigator said "finish", so whatever was captured is the answer.
        ``confirmed``: the page is a target confirmed beyond the evaluator model's word
        (see :meth:`confirms`); only a confirmed first target's route is replayed later.
        """
        run, copilot, subtask = self.run, self.run.copilot, self.run.subtask
        self.captured.add(screen.fingerprint)
        if self.route_end is None and source is CaptureSource.AUTO:
            self.route_end = len(taken)
            self.route_confirmed = confirmed
            self.route_target_texts = tuple(text_lines(screen))
        # A person's save is named for what it shows (the app in front, the page's heading).
        title = (page_title(screen) if source is CaptureSource.AUTO else
                 saved_screen_title(copilot.driver, screen, subtask.package, subtask.app_label))
        request = CaptureRequest(
            run_id=run.request.run_id, subtask_id=subtask.id, package=subtask.package,
            attempt=self.attempt, index=1 + run.count_captures(source), source=source,
            title=title,
            # Not the sub-task's app (the home screen, another app): kept, never its answer.
            screen_package=screen.package if source is CaptureSource.USER else "",
        )
        result = capture_scrolling(copilot.driver, copilot.store, request, copilot.budgets,
                                   ocr=copilot.perceiver.ocr, first=observation)
        run.captures.append(result.capture)
        run.publish(RunEventKind.CAPTURE_SAVED, result.capture.title, capture=result.capture)
        if source is CaptureSource.USER:
            return None
        wanted = subtask.browsing_limit if subtask.page_mode is PageMode.MULTI_PAGE else 1
        autos = run.count_captures(CaptureSource.AUTO)
        if autos < wanted and not force:
            return None
        self._remember_route(taken)
        return TryEnd(SubTaskStatus.COMPLETED,
                      f"{autos} target page(s) captured ({subtask.page_mode.value})")

    def _remember_route(self, taken: Sequence[tuple[TakenAction, Screen]]) -> None:
        if self.memory is None or any(s.intervention for s in self.run.steps):
            return  # a route a person helped with is not the agent's to replay
        if not self.route_confirmed:
            self.run.publish(RunEventKind.LOG, "route kept unconfirmed, never replayed: the evaluator model "
                                               "did not say complete, or the rules and the answer checks did "
                                               "not agree with it")
        guide = self.run.guide
        self.memory.remember(self.run.subtask, route_steps(taken[: self.route_end]),
                             target_texts=self.route_target_texts,
                             map_path=tuple(guide.followed) if guide is not None else (),
                             map_version=guide.map.version if guide is not None else "",
                             confirmed=self.route_confirmed)


def _cards(screen: Screen) -> int:
    """Tappable cards of several texts (a note, a result): a list, whatever the card heights."""
    return sum(1 for e in screen.elements if e.clickable and " | " in e.label)


def _entry_leads_on(subtask: SubTask, screen: Screen) -> bool:
    goal = find_goal_concepts(subtask.goal, subtask.search_term, subtask.app_label)
    return leading_entry(screen, goal, heading_concepts(screen, goal)) is not None


def _moves_in_app(history: Sequence[TakenAction]) -> list[TakenAction]:
    return [t for t in history if t.applied and t.skill not in _NOT_MOVES and not isinstance(t.action, OpenApp)]


def opens_result(decision: Decision, screen: Screen) -> bool:
    """Whether ``decision`` taps an item of the screen's results list (whoever chose it)."""
    action = decision.action
    if not isinstance(action, Tap) or action.target is None or is_dialog_open(screen):
        return False
    if decision.item_signature is not None:
        return True  # the policy chose it as an item of content (a result, a mail, a notice)  # a pop-up's button lies over the list, but closes the pop-up
    element = screen.element(action.target)
    items = find_list_items(screen)
    return element is not None and any(
        item.bounds.encloses(element.bounds) for item in items
    )


def search_took_effect(taken: TakenAction, before: Screen, after: Screen,
                       page_type: PageType) -> bool:
    """Whether a submitted search led anywhere: not the same search page with the text typed.

    The driver checks that the text landed; this checks that ENTER did
    something. A pop-up that swallowed the tap, or an app that ignores ENTER,
    leaves the page as it was (only the field's text and the keyboard differ).
    """
    if not isinstance(taken.action, Input) or not taken.action.submit:
        return True
    if before.package != after.package or before.activity != after.activity:
        return True
    if page_type is PageType.RESULTS_LIST:
        return True
    return _page_shape(before) != _page_shape(after)


def _page_shape(screen: Screen) -> frozenset[tuple[str, str, str]]:
    """The page's elements without what typing changes (field text, keyboard, focus)."""
    return frozenset(
        (e.class_name, e.resource_id, "" if e.editable else e.label)
        for e in screen.elements
        if "keyboard" not in e.class_name.lower() and "inputmethod" not in e.resource_id.lower()
    )
