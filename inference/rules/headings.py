"""What a page says about a goal, read from its texts (no model): its heading, the titles of its
lists, a setting's label, a readout of one value, the entries and items that lead on.

The evaluator's strategies (:mod:`inference.rules.evaluator`) judge a page with these; the
skills and the explorer use them to choose where to go. Concepts are the lexicon's
(:mod:`inference.rules.lexicon`), so a heading in one language names a goal in another.

    page_heading(screen)                  the page's title (first short text from the top) and selected tabs
    heading_concepts(screen, goal)        the goal's concepts its heading names
    list_title_concepts(screen, goal)     all of them, when the title right above a list names them
    held_by_heading(screen, goal)         concepts the page's records name, under a heading that holds them
    setting_concepts(screen, goal)        all of them, when a setting's label names them
    leading_entry(screen, goal, heading)  a tappable entry naming a concept the heading does not
    find_readout(screen, term, goal)      a short label stating the one value asked for
    mentions_term(screen, term)           whether the search term is on the screen (fuzzy)
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz

from core.models import Screen, UIElement
from core.text import has_cjk
from inference.rules.lexicon import GoalConcepts, load_lexicon, match_concept
from inference.rules.page_type import find_list_items, is_card, shows_content
from inference.rules.segment import split_words
from inference.vocabulary import load_vocabulary

__all__ = [
    "find_readout",
    "heading_concepts",
    "held_by_heading",
    "in_another_script",
    "item_naming_more",
    "leading_entry",
    "list_title_concepts",
    "lone_card",
    "mentions_goal",
    "mentions_term",
    "opens",
    "page_heading",
    "setting_concepts",
    "titled_for_goal",
    "titled_in_another_script",
]

_TERM_MATCH = 80  # rapidfuzz partial_ratio; tolerates OCR slips and spacing
_BACK_LABELS = frozenset(load_vocabulary("back").words("back"))  # the app bar's way back
_ENTRY_CHARS = 24  # a navigation entry's label is short; longer ones are content
_ENTRY_COVER = 0.67  # share of an entry's label the concept's label covers ("加入购物车" is an action)
_OTHER_SCRIPT_SHARE = 0.67  # share of a page's texts in CJK for a Latin term to be unreadable on it
_TITLE_COVER = 0.5  # share of a title the concept's label covers (a plan's title: "驾车方案" for 驾车)
_READOUT_CHARS = 24  # a label and its value (a balance beside its amount); longer texts are content
# A value: an amount with its currency, or a number with its unit (a data allowance in GB, a count
# of songs, a share in %).
_READOUT_VALUE = re.compile(r"[¥￥$€£]\s?\d|\d(?:[\d.,]*\d)?\s?(?:%|[A-Za-z]{1,3}\b|[\u4e00-\u9fff])")
_SETTING_CHARS = 60  # a setting's label (a question such as who may message you); longer texts explain it
_TITLE_GAP = 0.03  # share of the screen height between a list's title and its first item


def page_heading(screen: Screen) -> tuple[str, ...]:
    """What heads the page: its title (the first short text from the top) and its selected tabs."""
    texts = sorted((e for e in screen.elements if e.text.strip() and len(e.text) <= 60),
                   key=lambda e: (e.bounds.top, e.bounds.left))
    title = (texts[0].text,) if texts else ()
    return (*title, *(e.label for e in screen.elements if e.selected and e.label))


def heading_concepts(screen: Screen, goal: GoalConcepts) -> tuple[str, ...]:
    """The goal's concepts (hubs left out) the page's heading names."""
    concepts = load_lexicon().concepts
    heading = page_heading(screen)
    return tuple(c for c in goal.targets if any(match_concept(h, concepts[c]) for h in heading))


def list_title_concepts(screen: Screen, goal: GoalConcepts) -> tuple[str, ...]:
    """The goal's concepts, all of them, when the title of a list on the page names them all (else none).

    A list's title is a short text that is not tappable, right above an item of
    the page's list (on a profile page, the title over the saved playlists and the one
    over recommended playlists: only the first names "liked playlists").
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


def setting_concepts(screen: Screen, goal: GoalConcepts) -> tuple[str, ...]:
    """The goal's concepts, all of them, when the label of a setting on the page names them (a
    text, not an entry to tap: a privacy setting asking who may send messages); else none."""
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


def item_naming_more(screen: Screen, goal: GoalConcepts, heading: tuple[str, ...], *,
                      entities_only: bool = False) -> str | None:
    """The label of a list item naming an entity or a concept of the goal the heading does not.

    ``entities_only`` (list_view): the list the goal wants may name its concepts in
    every item (playlists), but an item naming what the goal is about (the film in a
    list of films, for its showtimes) means the goal's list is that item's. An item that opens nothing (a
    bill's row, tappable neither itself nor inside a card) leads nowhere: it is read where it is.
    """
    concepts = load_lexicon().concepts
    wanted = [] if entities_only else [concepts[c] for c in goal.targets if c not in heading]
    entities = [e.casefold() for e in goal.entities]
    for item in find_list_items(screen):
        if not opens(item, screen):
            continue
        label = item.label or " ".join(
            e.label for e in screen.elements
            if e.label and item.bounds.encloses(e.bounds)
        )
        folded = label.casefold()
        if any(e in folded for e in entities) or any(match_concept(label, c) for c in wanted):
            return label[:60]
    return None


def opens(item: UIElement, screen: Screen) -> bool:
    """Whether tapping ``item`` may open something: it is tappable, or inside a tappable card."""
    return item.clickable or any(e.clickable and e.bounds.encloses(item.bounds)
                                 for e in screen.elements)


def find_readout(screen: Screen, term: str | None, goal: GoalConcepts) -> str | None:
    """A readout stating the value asked for: a short text, tappable neither itself nor inside a
    card, that carries a value and names the term's last word (a balance beside its amount for a
    term ending in 话费, the data left for 流量) or, without a term, a concept the goal asks for
    ("余额" for a balance). A result card's price is not one: the card is tappable, the value the
    result's."""
    if term:
        words = [w.strip() for w in split_words(term.casefold()) if len(w.strip()) >= (2 if has_cjk(w) else 4)]
        if not words:
            return None
        head = words[-1]
        pattern = re.escape(head) if has_cjk(head) else rf"(?<![a-z]){re.escape(head)}(?![a-z])"

        def names(label: str) -> bool:
            # The value is beside the term, not in it: the digits of a model number are no value.
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


def titled_for_goal(screen: Screen, goal: GoalConcepts) -> bool:
    """A title on the page (short, not tappable) names every concept the goal asks for: the title
    over the plans of a route, for a driving time."""
    if not goal.targets:
        return False
    concepts = load_lexicon().concepts
    return any(
        not e.clickable and 0 < len(e.label.strip()) <= _ENTRY_CHARS
        and all(match_concept(e.label.strip(), concepts[c]) >= _TITLE_COVER for c in goal.targets)
        for e in screen.elements)


def titled_in_another_script(screen: Screen, goal: GoalConcepts, term: str) -> bool:
    """A page of the kind the goal asks for, written in a script the term is not: a Latin term
    (a city's English name) cannot be checked on a Chinese page without a model, so a title of
    the page naming every concept the goal asks for (a route's plan titled for driving, for a
    driving time) stands for it."""
    return titled_for_goal(screen, goal) and in_another_script(screen, term)


def in_another_script(screen: Screen, term: str) -> bool:
    """A Latin term ("trains") on a page written in CJK: without a model it cannot be read there."""
    texts = [e for e in screen.elements if e.label.strip()]
    return term.isascii() and sum(1 for e in texts if has_cjk(e.label)) >= _OTHER_SCRIPT_SHARE * max(len(texts), 1)


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


def mentions_goal(screen: Screen, goal: str, app_label: str) -> bool:
    """Whether a word of ``goal`` (5 letters or more, 2 Chinese characters or more) is on the
    screen, the app's own name left out: what a goal the lexicon knows nothing of is about."""
    app_words = set(re.findall(r"[a-z]{5,}|[\u3400-\u9fff]{2,}", app_label.lower()))
    words = {w for w in re.findall(r"[a-z]{5,}|[\u3400-\u9fff]{2,}", goal.lower())} - app_words
    screen_text = " ".join(e.label.lower() for e in screen.elements)
    return any(w in screen_text for w in words)


def lone_card(screen: Screen) -> bool:
    """Whether the page shows exactly one card, and it shows content (``shows_content``): an entry
    of two lines (an app found in Settings) is a way on, not a result to list."""
    cards = [e for e in screen.elements if not e.editable and is_card(e, screen)]
    return len(cards) == 1 and shows_content(cards[0], screen)


def _normalize(text: str) -> str:
    return re.sub(r"[\s'’\-_.:]+", "", text.lower())
