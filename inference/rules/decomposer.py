"""The decomposer without a model: names, noun phrases and cue words.

What it does, and says in ``Plan.notes``: apps are the installed apps the
question names (fuzzy, English and Chinese names); when none is named, apps are
picked by topic words (food delivery, shopping, maps, trains, school, mail,
...): the apps people know for the topic, then installed apps whose names say it
("... Maps", "...校园"). Search terms are quoted text, else the question's noun phrases with
app names, question words and attribute words (price, cheaper, reviews)
removed. The page mode comes from cue words. It does not understand the
question: it cannot infer an app from an unusual topic, split a question into
dependent steps, or tell which phrase a person would actually search for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.models import InstalledApp, PageMode, Plan, Query
from core.text import has_cjk
from inference.rules.answer_shape import strip_answer_shape
from inference.rules.apps import (
    find_mentioned_apps,
    names_for,
    resolve_app,
    strip_app_names,
)
from inference.rules.lexicon import find_goal_concepts, load_lexicon, setting_change
from inference.rules.plan import MAX_TERMS, build_plan
from inference.rules.segment import is_function_word, split_words
from inference.vocabulary import check_patterns, load_vocabulary, load_vocabulary_model

__all__ = ["choose_page_mode", "decompose_by_rules", "extract_search_terms"]

_QUOTED_RE = re.compile(r'"([^"]{2,80})"|“([^”]{2,80})”|「([^」]{1,80})」|『([^』]{1,80})』|《([^》]{1,80})》')
_LATIN_TOKEN_RE = re.compile(r"[A-Za-z0-9][\w'’&+.\-:]*|[,;?!()/]|\s+")
_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")

_STOP_WORDS = load_vocabulary("stop_words")  # inference/vocabulary/stop_words.yaml
# Words that are never part of a search term: question words, grammar, and the
# attribute being asked about (the app shows the price; we search for the thing).
_STOP = frozenset(_STOP_WORDS.words("search_term_en"))
# Chinese words that are never part of a search term, dropped as whole words (segmented by
# jieba), so "上" (on) goes and "上海" stays.
_CJK_STOP = frozenset(_STOP_WORDS.words("search_term_zh"))
_QUANTITY = re.compile(r"(?:[$¥￥€£]\s*)?\d[\d.,]*\s*(?:%|[A-Za-z]{1,7}|[\u4e00-\u9fff]{1,2})?(?:以下|以上|以内|之内|左右)?")
# "各是", "每期", "哪趟", "那家": a question word or determiner and one more character.
_ASKING = re.compile(r"[各每几哪那这][\u4e00-\u9fff]{1,2}")
_CJK_BREAK = re.compile(r"[\s，。？！、；：,.?!;:（）()“”\"'《》「」]+")

_CUES = load_vocabulary("page_mode_cues")  # inference/vocabulary/page_mode_cues.yaml
_MULTI_PAGE_CUES = _CUES.words("multi_page")
_LIST_VIEW_CUES = _CUES.words("list_view")

class _Topic(BaseModel):
    """A kind of question, the words that show it, and the apps that answer it: apps people
    know for it (alias groups, in order) and words in any installed app's name ("Maps",
    "校园") for apps the list does not know."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    cues: tuple[str, ...] = Field(min_length=1)
    apps: tuple[str, ...]
    name_words: tuple[str, ...] = ()

    @field_validator("cues", "name_words")
    @classmethod
    def _patterns(cls, words: tuple[str, ...]) -> tuple[str, ...]:
        return check_patterns(words)


class _Topics(BaseModel):
    """The decomposer's topics file (inference/vocabulary/topics.yaml)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    topics: tuple[_Topic, ...] = Field(min_length=1)


# Used only when the question names no app. The first topic whose cue matches and that has an
# installed app wins, so narrower topics come first ("taxi trips" before travel, "delivered
# packages" before food delivery); apps are taken in the group's order.
_TOPICS: tuple[_Topic, ...] = load_vocabulary_model("topics", _Topics).topics

# A possessive right before a noun: "my", "our", "我的" / "我" ("我购物车里"), "내", "나의", "私の", "自分の".
_INSIDE = ("里", "中", "内", "裡")
_POSSESSIVE = re.compile(r"(?:\bmy|\bour) $|我的?$|我们的$|(?:^|\s)(?:내|나의|우리) ?$|(?:私|自分|僕)の$")
_SETTINGS_QUESTIONS = load_vocabulary("settings_questions")  # inference/vocabulary/settings_questions.yaml
_PERMISSION_CUE = _SETTINGS_QUESTIONS.alternation("permission")
# What an app itself takes on the phone (its storage, its cache): the app's info page in
# Settings says it, not the app. "How much space does Taobao take up?", "淘宝占了多少存储空间",
# not "a phone with 512 GB of storage on JD" (no taking or using).
_FOOTPRINT_CUE = _SETTINGS_QUESTIONS.alternation("footprint")

_HONESTY = (
    "rule-based decomposition ({because}): apps by name matching, "
    "search terms from quoted text and noun phrases, page mode from cue words; check the "
    "apps and search terms before relying on the report"
)


def decompose_by_rules(query: Query, installed: Sequence[InstalledApp],
                       *, because: str = "no decomposer model configured") -> Plan:
    """A plan from names and cue words alone, with its limits (and why rules) in ``notes``."""
    notes = [_HONESTY.format(because=because)]
    apps = list(find_mentioned_apps(query.text, installed))
    if not apps and query.apps:
        apps = [a for a in (resolve_app(name, installed) for name in query.apps) if a is not None]
    if not apps:
        topic, apps = _apps_by_topic(query.text, installed)
        if apps:
            notes.append(
                f"no installed app is named in the question; picked {', '.join(a.label for a in apps)} "
                f"because it reads like a {topic} question"
            )
    terms = extract_search_terms(query.text, installed)
    settings_app = _settings_app(installed)
    lowered = query.text.lower()
    about_app = ("permissions" if re.search(_PERMISSION_CUE, lowered)
                 else "storage" if re.search(_FOOTPRINT_CUE, lowered) and any(a != settings_app for a in apps)
                 else None)
    if settings_app is not None and about_app is not None:
        # "Which permissions has Meituan been granted?", "How much storage does Taobao take?" are
        # answered on the app's info page in Settings, by searching for the app there, not
        # inside the app itself.
        named = [a.label for a in apps if a != settings_app]
        terms = tuple(named) or terms
        apps = [settings_app]
        notes.append(f"a question about an app's {about_app}: answered in Settings, searching for the app")
    if terms and about_app is None and not _quoted(query.text) and setting_change(query.text):
        # "How do I turn off private messages?": a setting, on the app's settings pages, which
        # its search (of posts, products) does not reach.
        terms = ()
        notes.append("asks how to switch a setting of the app: navigating to its settings rather than searching")
    elif terms and about_app is None and not _quoted(query.text) and _is_about_a_place(query.text, apps):
        # "my ride expenses", "default currency units": pages reached through Me or
        # Settings, which an app's search box (for products, posts) does not find.
        terms = ()
        notes.append("asks for a page of the app (an account or settings page): navigating to "
                     "it rather than searching")
    if not terms:
        notes.append("found no search term: each app's task starts from its home screen")
    mode, cue = choose_page_mode(query.text)
    notes.append(f"page mode {mode.value} " + (f"from the cue {cue!r}" if cue else "by default"))
    return build_plan(query, apps, terms, mode, decomposer="rules", notes=notes)


def choose_page_mode(text: str) -> tuple[PageMode, str]:
    """The page mode the question's cue words suggest, and the cue (empty = default)."""
    lowered = text.lower()
    for mode, cues in ((PageMode.MULTI_PAGE, _MULTI_PAGE_CUES), (PageMode.LIST_VIEW, _LIST_VIEW_CUES)):
        for cue in cues:
            match = re.search(cue, lowered)
            if match:
                return mode, match.group(0)
    return PageMode.FOCUSED, ""


def extract_search_terms(text: str, installed: Sequence[InstalledApp] = ()) -> tuple[str, ...]:
    """Up to 3 search terms: quoted strings first, else noun phrases (Latin or CJK)."""
    quoted = [next(g for g in m.groups() if g) for m in _QUOTED_RE.finditer(text)]
    if quoted:
        return tuple(dict.fromkeys(q.strip() for q in quoted))[:MAX_TERMS]
    # With its possessive: "Bilibili's community guidelines" searches "community guidelines".
    stripped = strip_answer_shape(strip_app_names(text, installed))
    phrases = _mixed_phrases(stripped) if _CJK_RE.search(stripped) else _latin_phrases(stripped)
    # A product's name (capitals, digits) is what a shop searches; the question's other
    # Chinese words are then what it asks about (重量, 价格), shown on that product's page.
    # A quantity ("1 km", "$10", "500元") is a filter of the answer, never a thing to search for.
    phrases = [p for p in phrases if not _QUANTITY.fullmatch(p) and len(p) > 1]
    named = [p for p in phrases if re.search(r"[A-Z0-9]", p)] or [p for p in phrases if _is_named(p)]
    chosen = named or sorted(phrases, key=len, reverse=True)[:1]
    return tuple(dict.fromkeys(chosen))[:MAX_TERMS]


def _latin_phrases(text: str) -> list[str]:
    phrases: list[str] = []
    run: list[str] = []
    tokens = [t for t in _LATIN_TOKEN_RE.findall(_CJK_RE.sub(",", text)) if not t.isspace()]
    for index, token in enumerate(tokens):
        word = token.strip(".:'’-")
        bare = re.sub(r"['’]s$", "", word.lower())  # "what's" is "what"; "McDonald's" stays
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        if run and word[:1].isupper() and _is_name_word(run[-1]) and _is_name_word(following):
            run.append(word)  # a capitalised word inside a name: "<Brand> Find X7 Ultra"
            continue
        if not word or not re.match(r"\w", token) or word.lower() in _STOP or bare in _STOP:
            if run:
                phrases.append(" ".join(run))
            run = []
            continue
        owner = re.fullmatch(r"(.+)['’]s", word)
        if owner and not _is_brand(word):
            # A possessive ends a name: "<a film>'s rating", "<a band>'s next live".
            phrases.append(" ".join([*run, owner.group(1)]))
            run = []
            continue
        run.append(word)
    if run:
        phrases.append(" ".join(run))
    return phrases


def _is_name_word(token: str) -> bool:
    """A word that belongs to a name: capitalised or with a digit ("Find", "X7", "14")."""
    return bool(re.match(r"[A-Z0-9]", token) and re.search(r"\w", token))


def _is_brand(word: str) -> bool:
    """A name spelt with its "'s" (McDonald's): an entity of the lexicon."""
    folded = word.casefold().replace("’", "'")
    return any(folded == label.casefold() for concept in load_lexicon().concepts.values()
               if concept.entity for label in concept.labels)


def _mixed_phrases(text: str) -> list[str]:
    """Runs of words between stop words and punctuation, in text with Chinese (never cut inside a
    word): a model with its number ("小米14"), a Latin product name and a place's name stay
    whole. Grammar, counts and times (jieba's tags: "哪天", "几次", "现在") end a run like stop
    words."""
    phrases: list[str] = []
    run: list[str] = []
    start = True  # at the start of a sentence: "Which" is the question word "which"
    for word in split_words(text):
        if word.isspace() and run:
            run.append(" ")  # between Latin words: part of a name
        elif (word in _CJK_STOP or (word.lower() in _STOP and (word.islower() or start))
              or _CJK_BREAK.fullmatch(word) or is_function_word(word, text)):
            # An English word among Chinese is a name unless written as a plain word (a
            # capitalised "Find" inside a phone's model name stays).
            phrases.append("".join(run).strip())
            run = []
        elif not word.isspace():
            run.append(word)
        if not word.isspace():
            start = bool(re.fullmatch(r"[.?!。？！]+", word.strip()))
    phrases.append("".join(run).strip())
    return [p for p in phrases if len(p) >= 2 and re.search(r"\w", p) and not _ASKING.fullmatch(p)]


def _is_named(phrase: str) -> bool:
    """A phrase with a capital, a digit or CJK: a product, title or place, worth searching."""
    return bool(_CJK_RE.search(phrase) or re.search(r"[A-Z0-9]", phrase))


def _quoted(text: str) -> bool:
    return _QUOTED_RE.search(text) is not None


def _is_about_a_place(text: str, apps: Sequence[InstalledApp]) -> bool:
    """The question asks for pages reached through hubs (Me, Settings), naming no entity, or for
    what is in the person's own page ("the RAM in my cart", "我的购物车里"): the app's search looks
    through its catalogue, not through what is the person's. The apps' names name no concept
    ("中国移动" names no country's page)."""
    app = apps[0].label if apps else ""
    stripped = strip_app_names(text, apps)
    named = find_goal_concepts(stripped, None, app).targets
    concepts = load_lexicon().concepts
    if any(_owned(stripped, concepts[c].labels) for c in named):
        return True
    return not find_goal_concepts(text, None, app).entities and any(concepts[c].via for c in named)


def _owned(text: str, labels: Sequence[str]) -> bool:
    """Whether a label of a concept follows a possessive in ``text`` ("my cart", "我的购物车", "내
    장바구니", "私のカート"): the person's own page of it."""
    # An app's name stripped out leaves " , " ("my Taobao cart" -> "my , cart"): still my cart.
    folded = " ".join(text.casefold().replace(" , ", " ").split())
    for label in labels:
        wanted = label.casefold()
        for match in re.finditer(re.escape(wanted), folded):
            before, after = folded[:match.start()], folded[match.end():]
            whole = has_cjk(wanted) or not (before[-1:].isalpha() or after[:1].isalpha())
            # A bare "我" is a possessive only before a place one is in ("我购物车里"): "离我最近"
            # is "nearest to me", "我手机话费" is "my phone's credit" only by its 的-less grammar.
            bare = before.endswith("我") and not before.endswith(("我的", "我们的")) and not after.startswith(_INSIDE)
            if whole and _POSSESSIVE.search(before) and not bare:
                return True
    return False


def _settings_app(installed: Sequence[InstalledApp]) -> InstalledApp | None:
    return next((a for a in installed if "Settings" in names_for(a)), None)


def _apps_by_topic(text: str, installed: Sequence[InstalledApp]) -> tuple[str, list[InstalledApp]]:
    lowered = text.lower()
    for topic in _TOPICS:
        if not any(re.search(cue, lowered) for cue in topic.cues):
            continue
        known = [app for name in topic.apps for app in installed if name in names_for(app)]
        named = [app for app in installed
                 if any(re.search(word, name.lower()) for word in topic.name_words for name in names_for(app))]
        picked = list(dict.fromkeys(known + named))
        if picked:
            return topic.name, picked
    return "", []
