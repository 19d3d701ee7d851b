"""A multilingual lexicon of UI concepts: what a goal asks for, which screen labels stand for it.

    load_lexicon()                      the concepts of ``inference/vocabulary/lexicon.yaml`` (read once)
    find_goal_concepts(goal, term)      GoalConcepts: concepts the goal names, hubs that lead there,
                                        entity words (names the goal spells, quoted text, and the
                                        other spellings the lexicon knows of a brand it names)
    match_concept(label, concept)       how much of ``label`` one of the concept's labels covers
    setting_change(goal)                the words of a goal that asks how to change a setting of the
                                        app ("How do I turn off ...", "如何关闭..."), or None

A goal that asks how to change a setting is answered on the app's settings pages:
its hubs are the settings and the privacy pages (and what leads to them), and the
words asking how ("how to disable") name no concept.

A goal names a concept through its English labels (rapidfuzz on words, plurals
tolerated) or, written in another language, through any label it contains.
A screen label stands for a concept when it is one of the concept's labels,
nearly (Latin scripts, rapidfuzz with a cutoff), or contains it (CJK scripts,
exact substring: a fuzzy match of two Chinese characters means nothing).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict
from rapidfuzz import fuzz

from core.models import InstalledApp
from core.text import has_cjk
from inference.errors import LexiconError, VocabularyError
from inference.rules.apps import names_for
from inference.vocabulary import VOCABULARY_DIR, load_vocabulary, read_vocabulary_data

__all__ = [
    "Concept",
    "GoalConcepts",
    "Lexicon",
    "LexiconError",
    "find_goal_concepts",
    "load_lexicon",
    "match_concept",
    "setting_change",
]

LEXICON_FILE = VOCABULARY_DIR / "lexicon.yaml"
_WORD_MATCH = 88  # rapidfuzz ratio between a goal word and a one-word label ("permission" / "permissions")
_FUZZY_CHARS = 5  # shorter words match a label exactly: one letter changes a short word
_LABEL_MATCH = 90  # rapidfuzz ratio between a screen label and a Latin concept label
_LATIN_WORD = re.compile(r"[a-z0-9](?:[a-z0-9'’\-.]*[a-z0-9])?")  # "ele.me" is one word
_ENTITY = re.compile(r"[\"“「《『]([^\"”」》』]{2,40})[\"”」》』]|((?:[A-Z0-9][\w'’.\-]*)(?:\s+[A-Z0-9][\w'’.\-]*)*)")
# Capitalised at a sentence's start, never a name the goal spells ("Find", "Which").
_NOT_ENTITIES = frozenset(load_vocabulary("stop_words").words("not_entity"))


class Concept(BaseModel):
    """One UI concept and the labels apps give it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    en: tuple[str, ...]
    zh: tuple[str, ...] = ()
    ko: tuple[str, ...] = ()
    ja: tuple[str, ...] = ()
    via: tuple[str, ...] = ()  # hubs whose pages usually lead here
    hub: bool = False  # a place to go through, never what a goal asks for
    entity: bool = False  # a brand or product's names across scripts: spellings of one entity

    @property
    def labels(self) -> tuple[str, ...]:
        """Every label of the concept, all languages."""
        return (*self.en, *self.zh, *self.ko, *self.ja)


class Lexicon(BaseModel):
    """All concepts by id."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    concepts: dict[str, Concept]


class GoalConcepts(BaseModel):
    """What a goal asks for, in concepts: named ones (with how specific), hubs, entity words."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    named: dict[str, int] = {}  # concept id -> words of the goal's phrase that named it
    via: dict[str, int] = {}  # hub concept id -> depth (1: leads to a named concept)
    entities: tuple[str, ...] = ()  # names the goal spells (capitalised words, quoted text, the term)

    @property
    def targets(self) -> tuple[str, ...]:
        """The named concepts a page may be about (hubs such as "me" left out)."""
        lexicon = load_lexicon()
        return tuple(c for c in self.named if not lexicon.concepts[c].hub)


@lru_cache(maxsize=1)
def load_lexicon(path: Path = LEXICON_FILE) -> Lexicon:
    """The lexicon (``inference/vocabulary/lexicon.yaml``), read once."""
    raw = read_vocabulary_data(path)
    try:
        concepts = {cid: Concept(id=cid, **body) for cid, body in raw["concepts"].items()}
    except (KeyError, TypeError, ValueError) as exc:
        raise VocabularyError(f"the UI lexicon at {path} is malformed: {exc}",
                              hint="restore inference/vocabulary/lexicon.yaml from the package") from exc
    unknown = {v for c in concepts.values() for v in c.via if v not in concepts}
    if unknown:
        raise VocabularyError(f"the lexicon's via names unknown concepts: {sorted(unknown)}",
                              hint="add them to inference/vocabulary/lexicon.yaml or fix the via lists")
    return Lexicon(concepts=concepts)


@lru_cache(maxsize=256)
def find_goal_concepts(goal: str, search_term: str | None = None, app_label: str = "") -> GoalConcepts:
    """The concepts ``goal`` names, the hubs leading to them (2 levels), and its entity words."""
    lexicon = load_lexicon()
    asking_how = setting_change(goal)
    # "How do I turn off ..." asks where a setting is: those words name no concept ("how to" no guide).
    text = _without_cjk_names(goal.replace(asking_how, " , ") if asking_how else goal, app_label).casefold()
    words = [_singular(w) for w in _LATIN_WORD.findall(text)]
    named: dict[str, int] = {}
    spans: dict[str, set[int]] = {}  # word positions of the phrase that named each concept
    spellings: list[str] = []  # other spellings of the brands and products the goal names
    for concept in lexicon.concepts.values():
        hits = [_goal_names(text, words, label) for label in concept.labels]
        strength, span = max(hits, key=lambda h: h[0], default=(0, set()))
        if strength and concept.entity:
            if not _is_app_name(concept, app_label):  # the app's own name is on all its pages
                spellings.extend(concept.labels)
        elif strength:
            named[concept.id] = strength
            spans[concept.id] = span
    # A word inside a longer phrase belongs to it: "day after tomorrow" is not "tomorrow",
    # "community guidelines" not "community".
    named = {
        c: n for c, n in named.items()
        if not spans[c] or not any(
            other != c and named[other] > n and spans[c] <= spans[other] for other in named
        )
    }
    # A setting is changed on the settings pages: they lead to it, whatever it is.
    setting_hubs = [hub for hub in _SETTING_HUBS if hub not in named] if asking_how else []
    via: dict[str, int] = dict.fromkeys(setting_hubs, 1)
    frontier = [c for c in named if not lexicon.concepts[c].hub]
    for depth in (1, 2):
        nxt: list[str] = []
        for cid in frontier:
            for hub in lexicon.concepts[cid].via:
                if hub not in named and hub not in via:
                    via[hub] = depth
                    nxt.append(hub)
        frontier = nxt + setting_hubs if depth == 1 else nxt
    entities = _entities(goal, search_term, app_label)
    return GoalConcepts(named=named, via=via, entities=tuple(dict.fromkeys((*entities, *spellings))))


# How to switch something of the app on or off (en, zh, ko, ja): "How do I turn off ...", "如何关闭...".
# Not "how to change my ticket" or "如何取消订单": those are about an order, not a setting.
_SWITCH = load_vocabulary("setting_change")  # the verbs, by language: inference/vocabulary/setting_change.yaml
_SETTING_CHANGE = re.compile(
    rf"\b(?:how (?:do i |can i |to |do you |should i )?|where (?:do i |can i )?)(?:{_SWITCH.alternation('en')})\b|"
    rf"(?:怎么|如何|怎样|在哪里?)(?:才能)?(?:{_SWITCH.alternation('zh')})|"
    rf"어떻게\s*(?:\S+\s*){{0,3}}?(?:{_SWITCH.alternation('ko')})|どうやって.{{0,12}}?(?:{_SWITCH.alternation('ja')})",
    re.IGNORECASE)
_SETTING_HUBS = ("settings", "privacy")


def setting_change(goal: str) -> str | None:
    """The words of ``goal`` asking how to change a setting of the app, or None."""
    match = _SETTING_CHANGE.search(goal)
    return match.group(0) if match else None


_ALTERNATIVES = re.compile(r"\s*[/／|]\s*")


def match_concept(label: str, concept: Concept) -> float:
    """How well ``label`` stands for ``concept``: the share of it a concept label covers (0 = not).

    A label joining alternatives ("免密支付/自动扣款", "Orders | Returns") names each of them: it
    stands for the concept as well as its best part does.
    """
    text = label.strip().casefold()
    parts = [p for p in _ALTERNATIVES.split(text) if p]
    if len(parts) > 1:
        return max(_covered(text, concept), *(_covered(p, concept) for p in parts))
    return _covered(text, concept)


def _covered(text: str, concept: Concept) -> float:
    if not text:
        return 0.0
    best = 0.0
    for name in concept.labels:
        wanted = name.casefold()
        if has_cjk(wanted):
            if wanted in text:
                best = max(best, len(wanted) / len(text))
        elif text == wanted or (len(wanted) >= 4 and fuzz.ratio(text, wanted) >= _LABEL_MATCH):
            best = 1.0
        elif len(wanted) >= 4 and re.search(rf"(?<![a-z]){re.escape(wanted)}(?![a-z])", text):
            best = max(best, len(wanted) / len(text))
    return best


def _goal_names(text: str, words: list[str], label: str) -> tuple[int, set[int]]:
    """How many words of ``label`` the goal names it with (0: it does not), and their positions."""
    wanted = label.casefold()
    if has_cjk(wanted):
        return (1, set()) if wanted in text else (0, set())
    parts = [_singular(p) for p in _LATIN_WORD.findall(wanted)]
    if not parts:
        return 0, set()
    if len(parts) == 1:
        part = parts[0]
        # Fuzzy for long words only, both of them: "cart" is not "chart".
        hits = {i for i, w in enumerate(words)
                if w == part or (min(len(part), len(w)) >= _FUZZY_CHARS and fuzz.ratio(w, part) >= _WORD_MATCH)}
        return (1, hits) if hits else (0, set())
    # A phrase: its words in order, next to each other.
    for i in range(len(words) - len(parts) + 1):
        if all(words[i + j] == p for j, p in enumerate(parts)):
            return len(parts), set(range(i, i + len(parts)))
    return 0, set()


def _without_cjk_names(goal: str, app_label: str) -> str:
    """``goal`` without the app's names written in Chinese, Korean or Japanese: "中国移动" names no
    country, "淘票票" no tickets (a character of a name is no word of the question)."""
    if not app_label.strip():
        return goal
    for name in sorted(names_for(InstalledApp(package="", label=app_label)), key=len, reverse=True):
        if has_cjk(name):
            goal = goal.replace(name, " , ")
    return goal


def _is_app_name(concept: Concept, app_label: str) -> bool:
    app = app_label.strip().casefold()
    return bool(app) and any(label.casefold() == app for label in concept.labels)


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 4 and word.endswith("s") and not word.endswith("ss") else word


def _entities(goal: str, search_term: str | None, app_label: str) -> tuple[str, ...]:
    """Names the goal spells: quoted text, runs of capitalised words or numbers, the search term."""
    found: list[str] = [search_term] if search_term else []
    app = app_label.casefold()
    for quoted, run in _ENTITY.findall(goal):
        for piece in (quoted,) if quoted else tuple(p.strip(" .,:;?!") for p in re.split(r"[:,]", run)):
            head, _, rest = piece.partition(" ")
            if rest and head.casefold() in _NOT_ENTITIES:
                piece = rest  # the sentence's first word is capitalised too
            lowered = piece.casefold()
            if len(piece) < 2 or lowered in _NOT_ENTITIES or lowered == app or lowered in app.split():
                continue
            found.append(piece)
    return tuple(dict.fromkeys(found))
