"""Deterministic moves for the patterns every app shares (no model).

In order of precedence on a screen:

1. ``dismiss_dialog``  a pop-up, ad or permission prompt covers the app: tap its
   close / deny button (never the accepting one), else press Back;
2. ``open_app``        the app is not in front: launch it;
3. ``open_entry``      in the first try, before any search: a short entry of the app that
   reads the term (a category, a tab, a chart: "酒店" on a travel app's first page, a
   "正在…" tab for the term it ends with) is opened instead of searching, as a person would;
   later tries search;
   ``pick_suggestion`` on the search page, a suggestion or recent search that reads the
   term exactly: open it, as a person would, instead of typing;
   ``type_search``     an editable search field: enter the search term and submit;
   ``open_search``     only a search icon or entry: tap it to reach the field;
   ``open_menu``       neither: open the navigation drawer or overflow menu once, where
   apps without a search in their app bar keep it;
4. ``open_result``     a results list after a search (modes focused / multi_page): tap
   the result nearest to the term and the goal (``rank_results``: the term, the goal's
   entities and lexicon concepts; ads last; ties keep list order), not visited yet
   (visited ones are masked by item signature); without a search term a list is a
   feed, left to the explorer; right after a search, the one card of a page that
   lists one is its result, whether or not it shows the term (a shop found by a dish);
   ``scroll_results``  every result on screen is visited: scroll for more;
5. ``follow_goal``     a tappable element named by the goal or search term (for
   direct goals such as "Permissions" in an app's settings); after a search, a
   card naming the term is opened as a result (a search with a single hit);
6. ``scroll_repeat``   the same screen came back: scroll to see more;
7. ``back_to_branch``  on a page that is not the target after a search: go back (not
   when an entry on it names what the goal asks for: the explorer takes that).

Search fields and icons are recognised in the languages the apps use
(Search, 搜索, 검색, 検索, Buscar, Rechercher, Suche, Поиск: ``inference/vocabulary/search.yaml``);
a pop-up is closed by its refusal (``refusal.yaml``, the risk gate's list). Nothing here taps
a button whose label pays, logs in, deletes, agrees or sends (the never-tap
list of :mod:`inference.rules.never_tap`, plus a broader list of the skills'
own): those screens belong to the person, the evaluator pauses on them before
any policy runs, and the risk gate checks every action again before it runs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rapidfuzz import fuzz

from core.models import (
    Back,
    Input,
    OpenApp,
    PageMode,
    PageType,
    Screen,
    Scroll,
    ScrollDirection,
    Tap,
    UIElement,
)
from core.text import fold_for_matching, has_cjk
from inference.perception.naming import id_words
from inference.policies.base import (
    PICK_SUGGESTION,
    SUBMIT_FORM,
    Decision,
    PolicyContext,
    TakenAction,
    is_dialog_open,
    item_signature,
)
from inference.rules import (
    count_text_lines,
    find_goal_concepts,
    find_list_items,
    find_never_tap,
    heading_concepts,
    is_card,
    is_refusal,
    is_search_field,
    leading_entry,
    load_lexicon,
    match_concept,
)
from inference.rules.never_tap import names_a_place, names_an_arrangement
from inference.rules.segment import shorter_terms
from inference.vocabulary import load_vocabulary

__all__ = [
    "OPEN_ENTRY", "SKILLS", "SkillsPolicy", "find_dialog_dismiss", "find_query_form", "find_search_field",
    "find_search_icon", "is_forbidden", "is_forbidden_tap", "next_search_term", "own_entry", "rank_results",
]

SKILLS = "skills"
OPEN_ENTRY = "open_entry"
_ENTRY_CHARS = 12  # an entry's label (a category, a tab): short
_ENTRY_EXTRA = 2  # characters an entry may add around a Chinese term ("正在" before it on a tab)

_SEARCH = load_vocabulary("search")  # inference/vocabulary/search.yaml
_SEARCH_WORDS = re.compile(_SEARCH.alternation("search"), re.IGNORECASE)
# The submit button of a query form: a query verb, then at most what it finds ("查询车票", "Search flights").
_QUERY_BUTTON = re.compile(rf"^(?:{_SEARCH.alternation('query_button')})(?:\s*\S{{0,12}})$", re.IGNORECASE)
_NEVER_TAP = load_vocabulary("never_tap")
# Never tapped by a skill, whatever the goal says: the person does these. Broader than the
# gate's never-tap list (word parts count: "Alipay"), matched on folded labels.
_FORBIDDEN = re.compile(_NEVER_TAP.alternation("skills_forbidden"), re.IGNORECASE)
# The acts whose settings pages an entry may name ("支付设置", "Login settings").
_PLACE_OF = re.compile(_NEVER_TAP.alternation("acts_with_pages"), re.IGNORECASE)
_GOAL_WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]{3,}|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]{2,}")
_GOAL_STOP = frozenset(load_vocabulary("stop_words").words("goal_word"))
_TERM_MATCH = 85
_CONTENT_LINES = 3  # buttons carry a label and perhaps an amount; content cards more lines
_TERM_CUTOFF = 80  # rapidfuzz partial_ratio for a result to count as naming the search term
_AD = re.compile(load_vocabulary("ads").alternation("ad"), re.IGNORECASE)  # promoted results


def is_forbidden(label: str) -> bool:
    """Whether a skill must never tap ``label``: it pays, logs in, deletes, agrees or sends.

    An entry naming a page about paying or signing in ("支付设置", "Payment settings") or standing
    payment arrangements ("免密支付/自动扣款") is a way to that page, not the step, as the risk gate
    reads it too; one naming any other act ("删除记录") stays forbidden."""
    hits = _FORBIDDEN.findall(fold_for_matching(label))
    if hits and (names_a_place(label) or names_an_arrangement(label, _FORBIDDEN)) and all(
            _PLACE_OF.fullmatch(hit) for hit in hits):
        hits = []
    return bool(hits) or find_never_tap(label) is not None


def is_forbidden_tap(element: UIElement, screen: Screen) -> bool:
    """Whether tapping ``element`` may pay, log in, delete or agree.

    A button's label is its action. A card of content (three or more lines:
    a mail's sender, subject, summary and time) opens what it shows, whatever
    its words say (a mail whose subject reports a sign-in is about a login, not a
    login button): an action inside a card is a clickable element of its own, which
    perception never merges into the card's text, and is checked by itself.
    """
    if count_text_lines(element, screen) >= _CONTENT_LINES:
        return False
    return is_forbidden(element.label[:40])


def rank_results(context: PolicyContext, items: tuple[UIElement, ...]) -> list[UIElement]:
    """Result items best first: naming the search term and the goal's entities and concepts, ads last.

    Ties keep the list's order, so without any cue this is "the first result".
    """
    subtask, screen = context.subtask, context.screen
    goal = find_goal_concepts(subtask.goal, subtask.search_term, subtask.app_label)
    concepts = [load_lexicon().concepts[c] for c in goal.targets]
    entities = [e.casefold() for e in goal.entities]
    term = (subtask.search_term or "").casefold()

    def score(item: UIElement) -> float:
        text = _item_text(item, screen.elements)
        folded = text.casefold()
        value = 0.0
        if term and term in folded:
            value += 2.0 + (0.5 if folded.startswith(term) else 0.0)
        elif term:
            # Only a near match counts: a weak partial score ranks unrelated results by
            # chance (a coffee shop above the only burger chain) instead of keeping list order.
            similarity = fuzz.partial_ratio(term, folded)
            value += similarity / 100.0 if similarity >= _TERM_CUTOFF else 0.0
        value += sum(0.5 for e in entities if e != term and e in folded)
        value += sum(1.0 for c in concepts if match_concept(text, c))
        return value - (10.0 if _AD.search(text) else 0.0)

    ranked = sorted(enumerate(items), key=lambda pair: (-score(pair[1]), pair[0]))
    return [item for _, item in ranked]


def find_dialog_dismiss(context: PolicyContext) -> UIElement | None:
    """The close / deny button of a pop-up covering the screen (None when there is no pop-up)."""
    screen = context.screen
    if not is_dialog_open(screen):
        return None
    buttons = [e for e in screen.elements if e.clickable and e.label]
    named = next((e for e in buttons if is_refusal(e.label.strip())), None)
    if named is not None:
        return named
    # Android puts the negative choice on button2 ("Cancel", "Not now").
    return next((e for e in buttons if e.resource_id == "android:id/button2"), None)


def find_search_field(screen: Screen) -> UIElement | None:
    """The app's search field (by its role: :func:`inference.rules.is_search_field`), focused first.

    Never a sign-in or form field: the agent types search terms and nothing else.
    """
    fields = [e for e in screen.elements if e.enabled and is_search_field(e, screen)]
    return next((e for e in fields if e.focused), fields[0] if fields else None)


def find_search_icon(elements: tuple[UIElement, ...]) -> UIElement | None:
    """A tappable search icon or entry (not a field): leads to the search page."""
    for element in elements:
        if element.editable or not (element.clickable or element.class_name.endswith("Button")):
            continue
        words = f"{element.label} {element.resource_id.rsplit('/', 1)[-1]}"
        if _SEARCH_WORDS.search(words) and len(element.label) <= 24:
            return element
    return None


def find_query_form(context: PolicyContext) -> UIElement | None:
    """The submit button of a query form about what the sub-task searches: no search box, but
    fields already filled in (stations, dates, cities) above a "查询车票" / "Search flights" button.

    The form is run as it is only when it is about the search: the term shows on the screen
    ("南京" in its from-field), or the page's heading or the button names a concept of the goal
    ("trains" and "中国铁路12306"). Otherwise its fields hold someone else's query.
    """
    screen = context.screen
    buttons = [e for e in screen.elements if e.clickable and not e.editable
               and _QUERY_BUTTON.match(e.label.strip()) and not is_forbidden(e.label)]
    if not buttons:
        return None
    button = buttons[0]
    term = fold_for_matching(context.subtask.search_term or "")
    above = " ".join(fold_for_matching(e.label) for e in screen.elements
                     if e.bounds.bottom <= button.bounds.top and e is not button)
    if term and term in above:
        return button
    goal = find_goal_concepts(context.subtask.goal, context.subtask.search_term, context.subtask.app_label)
    concepts = load_lexicon().concepts
    if heading_concepts(screen, goal) or any(match_concept(button.label, concepts[c]) for c in goal.targets):
        return button
    return None


class SkillsPolicy:
    """Deterministic skills; confident only when a pattern clearly applies."""

    @property
    def name(self) -> str:
        return SKILLS

    def decide(self, context: PolicyContext) -> Decision | None:
        """The first skill that applies to this screen, or None."""
        for skill in (
            self._dismiss_dialog, self._open_app, self._search, self._open_result,
            self._follow_goal, self._scroll_repeat, self._back_to_branch,
        ):
            decision = skill(context)
            if decision is not None:
                return decision
        return None

    # ------------------------------------------------------------------ skills

    def _dismiss_dialog(self, context: PolicyContext) -> Decision | None:
        if not is_dialog_open(context.screen):
            return None
        button = find_dialog_dismiss(context)
        if button is None:
            return _decision(Back(reason="close the pop-up"), "dismiss_dialog")
        return _decision(Tap(target=button.id, reason="close the pop-up without accepting it"),
                         "dismiss_dialog")

    def _open_app(self, context: PolicyContext) -> Decision | None:
        package = context.subtask.package
        if context.screen.package == package:
            return None
        if context.history and isinstance(context.history[-1].action, Back):
            # Back left the app from its top page: the branch point is the app's first page,
            # not the page it would resume on (the one just left).
            return _decision(OpenApp(package=package, fresh=True,
                                     reason=f"open {context.subtask.app_label} on its first page"), "open_app")
        return _decision(OpenApp(package=package, reason=f"open {context.subtask.app_label}"), "open_app")

    def _search(self, context: PolicyContext) -> Decision | None:
        if not context.subtask.search_term or context.search_found_something:
            return None
        term = next_search_term(context)
        if term is None:
            return None
        elements = context.screen.elements
        field = find_search_field(context.screen)
        suggestion = _suggestion(elements, term, field) if field is not None else None
        if suggestion is not None:
            return _decision(Tap(target=suggestion.id, reason=f"open the suggestion {term!r}"), PICK_SUGGESTION)
        entry = own_entry(context)
        if entry is not None:
            return _decision(Tap(target=entry.id, reason=f"open the app's own entry {entry.label.strip()!r} "
                                                         f"for {context.subtask.search_term!r}"), OPEN_ENTRY)
        if field is not None:
            return _decision(
                Input(text=term, target=field.id, submit=True, reason="search for the term"),
                "type_search",
            )
        icon = find_search_icon(elements)
        if icon is not None and context.repeats == 0:
            return _decision(Tap(target=icon.id, reason="open the search page"), "open_search")
        button = find_query_form(context)
        if button is not None and context.repeats == 0:
            return _decision(Tap(target=button.id, reason=f"run the app's query form as it is filled in "
                                                          f"({button.label.strip()[:30]!r})"), SUBMIT_FORM)
        menu = _navigation_menu(elements)
        if menu is not None and not any(t.skill == "open_menu" for t in context.history):
            return _decision(Tap(target=menu.id, reason="look for the search in the app's menu"), "open_menu")
        return None

    def _open_result(self, context: PolicyContext) -> Decision | None:
        if context.subtask.page_mode is PageMode.LIST_VIEW:
            return None  # the list itself is the target: the evaluator ends the sub-task
        if not context.subtask.search_term:
            return None  # a feed, not results: the explorer picks what the goal names
        if not context.searched:
            return None  # a feed before searching is not the results list
        screen = context.screen
        if _left_the_results(context.history):
            # Back from a search that found nothing, on the home feed: its cards are not
            # results of the term (they once took a question about a phone to a memory module).
            # The term itself need not show: English terms find Chinese results.
            return None
        items = find_list_items(screen)
        if not items:
            return self._lone_result(context)
        for item in rank_results(context, items):
            if is_forbidden_tap(item, screen):
                continue
            signature = item_signature(item, screen)
            if signature in context.visited:
                continue
            target = item if item.clickable else _clickable_inside(item, screen.elements)
            if target is None:
                continue
            return Decision(
                action=Tap(target=target.id, reason="open the next result not visited yet"),
                policy=SKILLS, skill="open_result", item_signature=signature,
            )
        return _decision(
            Scroll(direction=ScrollDirection.DOWN, reason="every result on screen is visited"),
            "scroll_results",
        )

    def _lone_result(self, context: PolicyContext) -> Decision | None:
        """Right after a search, the one card on the page it opened is its result (a search with one
        hit), whether or not the card shows the term (a shop found by a dish it sells)."""
        last = next((t for t in reversed(context.history) if t.applied), None)
        if last is None or not (isinstance(last.action, Input) and last.action.submit):
            return None
        screen = context.screen
        cards = [e for e in screen.elements if is_card(e, screen) and not e.editable
                 and not is_forbidden_tap(e, screen)]
        if len(cards) != 1 or item_signature(cards[0], screen) in context.visited:
            return None
        return Decision(action=Tap(target=cards[0].id, reason="the search's one result"),
                        policy=SKILLS, skill="open_result", item_signature=item_signature(cards[0], screen))

    def _follow_goal(self, context: PolicyContext) -> Decision | None:
        subtask = context.subtask
        tapped = {t.action.target for t in context.history
                  if isinstance(t.action, Tap) and t.fingerprint == context.screen.fingerprint}
        words = [(w, False) for w in _GOAL_WORD.findall(subtask.goal) if w.lower() not in _GOAL_STOP]
        if subtask.search_term and context.searched:
            words.insert(0, (subtask.search_term, True))
        if not words:
            return None
        for element in context.screen.elements:
            label = element.label.strip()
            if not element.clickable or not label or element.editable or element.selected or element.id in tapped:
                continue
            if len(label) > 80 or is_forbidden(label):
                continue
            if any(_names(label, word, term=term) for word, term in words):
                # After a search, a card naming the term is a result, even alone on the page
                # (a search with one hit): the page it opens is that result's.
                opens = context.searched and is_card(element, context.screen)
                return Decision(action=Tap(target=element.id, reason=f"{label!r} is named by the goal"),
                                policy=SKILLS, skill="follow_goal",
                                item_signature=item_signature(element, context.screen) if opens else None)
        return None

    def _scroll_repeat(self, context: PolicyContext) -> Decision | None:
        if context.repeats == 0:
            return None
        if context.history and isinstance(context.history[-1].action, Back):
            return None  # back at a branch point: not stuck, another branch may follow
        last = context.history[-1] if context.history else None
        if (last is not None and isinstance(last.action, Scroll) and last.fingerprint
                and last.fingerprint == context.screen.fingerprint):
            return None  # the last scroll moved nothing: the page ends here, look elsewhere
        return _decision(
            Scroll(direction=ScrollDirection.DOWN, reason="the page repeats: look further down"),
            "scroll_repeat",
        )

    def _back_to_branch(self, context: PolicyContext) -> Decision | None:
        if context.subtask.search_term is None:
            return None  # direct goals: the explorer backtracks its own branches
        if (context.searched or context.opened_result) and context.page_type in (
            PageType.DETAILS, PageType.OTHER, PageType.SETTINGS,
        ):
            subtask = context.subtask
            goal = find_goal_concepts(subtask.goal, subtask.search_term, subtask.app_label)
            if leading_entry(context.screen, goal, heading_concepts(context.screen, goal)) is not None:
                return None  # an entry here names what the goal asks for: the explorer takes it
            return _decision(Back(reason="not the target page: back to the branch point"),
                             "back_to_branch")
        return None


def _left_the_results(history: Sequence[TakenAction]) -> bool:
    """Whether a Back since the last search went above its results page (to where it was typed)."""
    searches = [i for i, t in enumerate(history)
                if isinstance(t.action, Input) and t.action.submit and t.applied]
    if not searches:
        return False
    depth = 0  # pages below the results page
    for taken in history[searches[-1] + 1:]:
        if not taken.applied:
            continue
        if isinstance(taken.action, Back):
            depth -= 1
            if depth < 0:
                return True
        elif isinstance(taken.action, Tap) and taken.opened_result:
            depth += 1
    return False


def next_search_term(context: PolicyContext) -> str | None:
    """The form of the sub-task's term to search next, or None when there is none left.

    A search that found nothing is not typed again: a shorter form of the term is.
    """
    term = context.subtask.search_term
    if not term:
        return None
    return next((t for t in shorter_terms(term) if t not in context.empty_searches), None)


def own_entry(context: PolicyContext) -> UIElement | None:
    """A short tappable entry of the app reading the whole search term, in the first try before
    any search (a category, a tab). A Chinese term may sit inside a label two characters longer
    (a tab "正在…" for the term it ends with); a Latin term is the whole label."""
    term = context.subtask.search_term
    if not term or context.attempt != 1 or context.searched or any(t.skill == OPEN_ENTRY for t in context.history):
        return None
    wanted = " ".join(term.split()).casefold()
    cjk = has_cjk(wanted)
    for element in context.screen.elements:
        label = " ".join(element.label.split()).casefold()
        if (not element.clickable or element.editable or element.selected or not 0 < len(label) <= _ENTRY_CHARS
                or is_forbidden(label) or is_card(element, context.screen)):
            continue
        if label == wanted or (cjk and wanted in label and len(label) <= len(wanted) + _ENTRY_EXTRA):
            return element
    return None


def _suggestion(elements: tuple[UIElement, ...], term: str, field: UIElement) -> UIElement | None:
    """A tappable row below the search field that reads exactly the term (a suggestion)."""
    wanted = " ".join(term.split()).casefold()
    for element in elements:
        first = element.label.split(" | ", 1)[0]
        if (element is not field and element.clickable and not element.editable
                and element.bounds.top >= field.bounds.bottom and " ".join(first.split()).casefold() == wanted):
            return element
    return None


def _navigation_menu(elements: tuple[UIElement, ...]) -> UIElement | None:
    """The navigation drawer's or overflow menu's button (lexicon concept ``navigation``)."""
    concept = load_lexicon().concepts["navigation"]
    for element in elements:
        label = element.label or id_words(element.resource_id)
        if element.clickable and label and match_concept(label, concept) >= 0.5:
            return element
    return None


def _decision(action: Input | Tap | Back | OpenApp | Scroll, skill: str) -> Decision:
    return Decision(action=action, policy=SKILLS, skill=skill)


def _item_text(item: UIElement, elements: tuple[UIElement, ...]) -> str:
    if item.label:
        return item.label
    return " | ".join(e.label for e in elements
                      if e.label and item.bounds.encloses(e.bounds))


def _clickable_inside(item: UIElement, elements: tuple[UIElement, ...]) -> UIElement | None:
    return next(
        (e for e in elements if e.clickable and item.bounds.encloses(e.bounds)),
        None,
    )


def _names(label: str, word: str, *, term: bool) -> bool:
    """Whether ``label`` is (about) ``word``.

    The search term may sit inside a longer label (a result card "Meituan | Apps >
    Meituan"); a goal word must be the label, nearly (the "Permissions" entry).
    """
    a, b = label.casefold(), word.casefold()
    if a == b or (term and b in a):
        return True
    return len(a) >= 3 and fuzz.ratio(a, b) >= _TERM_MATCH
