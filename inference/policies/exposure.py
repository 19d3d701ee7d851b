"""What the navigator model is shown of a screen (CORE: expose only the blocks the task needs).

A small screen is described whole. A large one (its description over
``budget`` tokens, ``perception.description_token_budget``) is cut to its most
useful layout blocks, best first until the budget is spent, then shown in
reading order with a header saying how much was left out. When the model
needs more it answers ``more`` and is asked again with the next blocks added
(``rounds``: each round adds another budget's worth, best first, and keeps
what was shown: CORE's multi-round accumulation), up to the whole screen.
Blocks rank:

1. blocks naming the search term or a word of the goal;
2. blocks with an input field (where a search is typed);
3. navigation: tabs, selected entries, a "Navigate up" button, short rows of
   tappable labels (bottom bars, menus);
4. the rest, smallest first (cheap context), ties in reading order.

Rules rank the blocks here, on the device, as CORE's local model does; the
elements that leave it for a cloud model are only those of the chosen blocks.
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz

from core.models import SubTask, UIElement
from inference.perception import Perception, describe_screen
from inference.perception.describe import ScreenDescription, element_role
from inference.perception.redact import Redactor

__all__ = ["SCREEN_TOKEN_BUDGET", "describe_for_navigator", "goal_words"]

SCREEN_TOKEN_BUDGET = 600  # PerceptionSettings.description_token_budget's default
_WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]{3,}|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]{2,}")
_STOP = frozenset({
    "what", "which", "where", "when", "find", "show", "check", "list", "tell", "about", "with", "from",
    "that", "this", "have", "been", "does", "into", "page", "details", "information", "search", "mode",
    "focused", "multi_page", "list_view", "using",
})
_TERM_MATCH = 85
_NAV_ROLES = frozenset({"tab", "button"})
_SHORT_LABEL = 8


def goal_words(subtask: SubTask) -> tuple[str, ...]:
    """The search term and the goal's content words, the texts a relevant block names."""
    words = [w for w in _WORD.findall(subtask.goal) if w.lower() not in _STOP]
    return tuple(dict.fromkeys([*([subtask.search_term] if subtask.search_term else []), *words]))


def describe_for_navigator(
    perception: Perception, subtask: SubTask, *, redactor: Redactor | None = None,
    budget: int = SCREEN_TOKEN_BUDGET, rounds: int = 1,
) -> ScreenDescription:
    """The screen as the navigator is shown it: whole, or its best blocks when it is large.

    ``rounds``: how many budgets' worth of blocks to show (the model asked for more
    ``rounds - 1`` times); what an earlier round showed is always kept.
    """
    screen, partition = perception.screen, perception.blocks
    whole = describe_screen(screen, partition, redactor=redactor)
    if whole.tokens <= budget * rounds or len(partition.blocks) < 2:
        return whole
    by_id = {e.id: e for e in screen.elements}
    words = goal_words(subtask)
    sizes = {
        b.id: describe_screen(screen, partition, redactor=redactor, block_ids=(b.id,)).tokens
        for b in partition.blocks
    }
    ranked = sorted(
        partition.blocks,
        key=lambda b: (-_score([by_id[i] for i in b.element_ids if i in by_id], words), sizes[b.id], b.index),
    )
    chosen: list[str] = []
    for _ in range(rounds):
        spent = 0
        for block in ranked:
            if block.id in chosen or (spent and spent + sizes[block.id] > budget):
                continue  # a smaller, lower-ranked block may still fit
            chosen.append(block.id)
            spent += sizes[block.id]
    if len(chosen) == len(partition.blocks):
        return whole
    return describe_screen(screen, partition, redactor=redactor, block_ids=tuple(chosen))


def _score(members: list[UIElement], words: tuple[str, ...]) -> int:
    score = 0
    if any(_names(e.label, words) for e in members):
        score += 4
    if any(e.editable for e in members):
        score += 2
    if _navigates(members):
        score += 1
    return score


def _names(label: str, words: tuple[str, ...]) -> bool:
    text = label.casefold()
    if not text:
        return False
    return any(
        w.casefold() in text or (len(w) >= 3 and fuzz.partial_ratio(w.casefold(), text) >= _TERM_MATCH)
        for w in words
    )


def _navigates(members: list[UIElement]) -> bool:
    """Tabs, a selected entry, a back button, or a short row of tappable short labels."""
    if any(element_role(e) in _NAV_ROLES or e.selected or e.content_desc == "Navigate up" for e in members):
        return True
    tappable = [e for e in members if e.clickable and 0 < len(e.label) <= _SHORT_LABEL]
    return len(tappable) >= 3 and len(tappable) == len([e for e in members if e.label])

