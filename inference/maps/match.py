"""Which screens of an app map hold what a question asks: BM25 and rapidfuzz over every language.

    query = MapQuery.for_goal(goal, search_term, ignore=app_names)
    ranked = rank_screens(app_map, query)       # [(MapScreen, score)], best first

Each map screen is a document: its title and the labels of the entries that
open it (what the app calls the page, counted three and two times), every text
line it showed while scrolled through, the labels of its controls that do not
open another page (an entry opening a page names that page, not this one), the
samples of its lists, and what tapping a control showed in place (a toast: "76%
- about 14 hr left" under Battery). The question is its content words (not its frame or
grammar, nor the app's names), the search term, the labels of the lexicon's
concepts it names (``inference.rules.lexicon``) and, across Chinese and English,
their translations in CC-CEDICT (``inference.rules.dictionary``): "Android
version" also looks for 版本, "账单" also for "bill".

Chinese is cut into words by jieba and into character pairs, so a word the
dictionary splits differently still meets its page. A screen's score is its
BM25 score times how much of the question it covers (0.5 + the share of the
question's words found in it, exactly or by rapidfuzz >= 90), so a page naming
one word many times does not beat one naming all of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import bm25s
from rapidfuzz import fuzz

from core.models import AppMap, Effect, MapScreen
from core.text import has_cjk
from inference.memory import content_words
from inference.rules import find_goal_concepts, load_lexicon
from inference.rules.dictionary import load_dictionary
from inference.rules.segment import split_words

__all__ = ["MapQuery", "coverage", "rank_screens", "reads_term", "tokenize"]

_LATIN = re.compile(r"[a-z0-9]+(?:['’.\-][a-z0-9]+)*")
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")
_FUZZY = 90
_TRANSLATIONS = 4  # dictionary words per question word
_TITLE_WEIGHT = 3
_ENTRY_WEIGHT = 2
_STOP = frozenset({"the", "a", "an", "of", "and", "or", "to", "in", "on", "for", "is", "are", "be", "my"})


@dataclass(frozen=True)
class MapQuery:
    """What a sub-task asks, as words to find on an app's screens."""

    words: tuple[str, ...]  # the question's own content words and its search term
    expansions: tuple[str, ...]  # concept labels and dictionary translations of them
    term: str = ""

    @classmethod
    def for_goal(cls, goal: str, search_term: str | None = None, *, ignore: Sequence[str] = ()) -> MapQuery:
        """The words of ``goal`` (and its search term) with their expansions; ``ignore``: the app's names."""
        words = sorted(content_words(goal, ignore))
        term = (search_term or "").strip()
        if term and term.casefold() not in (w.casefold() for w in words):
            words.append(term)
        expansions: list[str] = []
        goal_concepts = find_goal_concepts(goal, search_term, ignore[0] if ignore else "")
        concepts = load_lexicon().concepts
        for concept_id in goal_concepts.targets:
            expansions.extend(concepts[concept_id].labels)
        dictionary = load_dictionary()
        for word in words:
            found = dictionary.english_for(word) if has_cjk(word) else dictionary.chinese_for(word)
            expansions.extend(found[:_TRANSLATIONS])
        kept = tuple(dict.fromkeys(e for e in expansions if e.casefold() not in {w.casefold() for w in words}))
        return cls(words=tuple(words), expansions=kept, term=term)

    @property
    def empty(self) -> bool:
        return not self.words and not self.expansions


def tokenize(text: str) -> list[str]:
    """Lower-case Latin words (a plural's ``s`` dropped), Chinese words (jieba) and character pairs."""
    tokens: list[str] = []
    folded = text.casefold()
    for word in _LATIN.findall(folded):
        if word in _STOP:
            continue
        tokens.append(word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)
    for run in _CJK_RUN.findall(folded):
        tokens.extend(w for w in split_words(run) if w.strip())
        tokens.extend(run[i:i + 2] for i in range(len(run) - 1))
    return tokens


def rank_screens(app_map: AppMap, query: MapQuery, *, k: int = 5) -> list[tuple[MapScreen, float]]:
    """Up to ``k`` screens of ``app_map`` that best hold ``query``, best first (score > 0)."""
    if query.empty or not app_map.screens:
        return []
    screens = list(app_map.screens.values())
    documents = [_document(screen, app_map) for screen in screens]
    corpus = [tokenize("\n".join(doc)) for doc in documents]
    wanted = [t for phrase in (*query.words, *query.expansions) for t in tokenize(phrase)]
    vocabulary = {t for tokens in corpus for t in tokens}
    present = [t for t in dict.fromkeys(wanted) if t in vocabulary]
    if not present or not any(corpus):
        return []
    index = bm25s.BM25()
    index.index([tokens or ["\x00"] for tokens in corpus], show_progress=False)
    ids, scores = index.retrieve([present], k=len(screens), show_progress=False)
    ranked: list[tuple[MapScreen, float]] = []
    for i, score in zip(ids[0], scores[0], strict=True):
        if score <= 0:
            continue
        screen = screens[int(i)]
        share = coverage(query, documents[int(i)])
        ranked.append((screen, float(score) * (0.5 + share)))
    ranked.sort(key=lambda pair: -pair[1])
    return ranked[:k]


def coverage(query: MapQuery, lines: Iterable[str]) -> float:
    """The share of the question's own words found in ``lines`` (or a translation of each),
    exactly as words or by rapidfuzz >= 90 for Latin words of five letters or more."""
    if not query.words:
        return 0.0
    text = [line.casefold() for line in lines]
    tokens = {t for line in text for t in tokenize(line)}
    translations = load_dictionary()
    found = 0
    for word in query.words:
        forms = [word, *(translations.english_for(word) if has_cjk(word) else translations.chinese_for(word))]
        if any(_found(form, tokens, text) for form in forms[:1 + _TRANSLATIONS]):
            found += 1
    return found / len(query.words)


def reads_term(line: str, term: str) -> bool:
    """Whether ``line`` reads ``term``: as a whole word or phrase (Latin), or inside it (CJK)."""
    folded, wanted = line.casefold(), term.strip().casefold()
    if not wanted:
        return False
    if has_cjk(wanted):
        return wanted in folded
    return re.search(rf"(?<![a-z0-9]){re.escape(wanted)}(?![a-z0-9])", folded) is not None


def _found(word: str, tokens: set[str], lines: list[str]) -> bool:
    folded = word.casefold()
    own = tokenize(folded)
    if own and all(t in tokens for t in own):
        return True
    if has_cjk(folded):
        return any(folded in line for line in lines)
    return len(folded) >= 5 and any(fuzz.partial_ratio(folded, line) >= _FUZZY for line in lines)


def _document(screen: MapScreen, app_map: AppMap) -> list[str]:
    """The lines a screen is found by (titles and the entries naming it counted more than once)."""
    lines = [screen.title] * _TITLE_WEIGHT
    for other in app_map.screens.values():
        for element in other.elements:
            if element.effect is Effect.OPENS and element.leads_to == screen.id and not element.list_id:
                lines.extend([element.label] * _ENTRY_WEIGHT)
    opens = {e.label for e in screen.elements if e.effect is Effect.OPENS}
    # An entry that opens another page names that page (counted there), not this one: a hub listing
    # "Community guidelines" is the way to them, not the guidelines.
    lines.extend(t for t in screen.texts if t not in opens)
    for element in screen.elements:
        if element.effect is not Effect.OPENS:
            lines.append(element.label)
        if element.effect is Effect.SAME and element.note:
            lines.append(f"{element.label} {element.note}")
    for listed in screen.lists:
        lines.extend(listed.samples)
    lines.extend(screen.samples)
    return [line for line in lines if line]
