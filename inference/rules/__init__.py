"""Rule-based fallbacks used when a role has no model (and the rules-first risk gate).

    decompose_by_rules   question -> Plan (app names, noun phrases, cue words)
    find_act_request     question -> ActRequest: it asks the agent to pay, top up, order, book,
                         send, transfer, post or delete (which it never does), or None
    evaluate_by_rules    screen -> Evaluation (risk words, page type, page mode)
    contradicts_mode     whether a kind of page can be a sub-task's target (checks a model's verdict)
    find_risk            the seven risk criteria (and sending) on a Screen
    is_search_field      a field is typed into only when it is the app's search field (by its role)
    find_login_wall      a sign-in wall, with or without a password field
    check_action         the risk gate: an action any policy chose, just before it runs; it reads
                         every reading of the pressed element (press) and a confirmation's dialog (confirm)
    find_never_tap       what the agent never presses: acts by kind (acts.yaml), pay, transfer, log in ...
    detect_page_type     results list / details / search input / ... from structure
    find_goal_concepts   goal -> UI concepts it names (multilingual lexicon.yaml), hubs, entities
    read_item_time       an item's lines -> when it arrived ("10:24", "昨天", "06-23"), to find the latest
"""

from __future__ import annotations

from inference.rules.acts import find_act_button, find_act_request
from inference.rules.apps import find_mentioned_apps, resolve_app
from inference.rules.decomposer import decompose_by_rules
from inference.rules.dictionary import Dictionary, DictionaryEntry, load_dictionary
from inference.rules.evaluator import (
    contradicts_mode,
    evaluate_by_rules,
    heading_concepts,
    leading_entry,
    list_title_concepts,
    mentions_term,
    page_heading,
)
from inference.rules.fields import find_login_wall, find_text_fields, is_search_field
from inference.rules.gate import TextReader, check_action, element_at
from inference.rules.lexicon import GoalConcepts, find_goal_concepts, load_lexicon, match_concept
from inference.rules.never_tap import find_never_tap, find_never_tap_word, is_refusal
from inference.rules.page_type import (
    count_text_lines,
    detect_page_type,
    find_list_items,
    find_nothing_found,
    find_truncated_items,
    is_card,
)
from inference.rules.recency import ItemTime, read_item_time, read_time
from inference.rules.risk import RiskFinding, find_injection, find_risk

__all__ = [
    "Dictionary",
    "DictionaryEntry",
    "GoalConcepts",
    "ItemTime",
    "RiskFinding",
    "TextReader",
    "check_action",
    "contradicts_mode",
    "count_text_lines",
    "decompose_by_rules",
    "detect_page_type",
    "element_at",
    "evaluate_by_rules",
    "find_act_button",
    "find_act_request",
    "find_goal_concepts",
    "find_injection",
    "find_list_items",
    "find_login_wall",
    "find_mentioned_apps",
    "find_never_tap",
    "find_never_tap_word",
    "find_nothing_found",
    "find_risk",
    "find_text_fields",
    "find_truncated_items",
    "heading_concepts",
    "is_card",
    "is_refusal",
    "is_search_field",
    "leading_entry",
    "list_title_concepts",
    "load_dictionary",
    "load_lexicon",
    "match_concept",
    "mentions_term",
    "page_heading",
    "read_item_time",
    "read_time",
    "resolve_app",
]
