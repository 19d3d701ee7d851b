"""Chinese word segmentation, so a search term is never cut inside a word (jieba, offline).

``split_words("成都大熊猫基地门票多少钱")`` -> ``["成都", "大熊猫", "基地", "门票", "多少", "钱"]``.
Stop words are then dropped as whole words: "上" (on) goes, "上海" stays.

``is_function_word`` reads jieba's part-of-speech tags: pronouns and question words
("哪些", "那次", "各"), Chinese numerals and counts ("几次", "多少", "一部"), time words
("今晚", "现在", and a span of the calendar after 这 / 上 / 本: "这学期"), adverbs, prepositions,
conjunctions, particles, measure words, adjectives ("最高", "便宜") and a verb with its aspect
particle ("考了", "买过") are never the thing a person searches for. jieba's dictionary
ships in its wheel; it is loaded once, on first use (about a second).
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache

import jieba
import jieba.posseg

from inference.vocabulary import load_vocabulary

__all__ = ["is_function_word", "shorter_terms", "split_words"]

# jieba's tags (ICTCLAS): r pronoun, m numeral, t time, d adverb, p preposition, c conjunction,
# u* particles, f direction ("上", "里", "以后"), q measure word, a adjective, y/e/o modal, interjection,
# onomatopoeia.
_FUNCTION_TAGS = frozenset({"r", "m", "t", "d", "p", "c", "u", "uj", "ul", "ug", "uz", "uv", "ud",
                            "f", "q", "a", "y", "e", "o"})
_CJK = re.compile(r"[\u3400-\u9fff]")
# Spans of the calendar: after 这 / 本 / 上 / 下 / 每 they say when ("这学期", "上个季度").
_CALENDAR_UNITS = frozenset(load_vocabulary("time_words").words("calendar_unit"))
_THIS = "[这本上下每]个?"  # this, last, next, every
_CALENDAR = re.compile(rf"{_THIS}(?:{'|'.join(sorted(_CALENDAR_UNITS, key=len, reverse=True))})")
_ASPECT = "了过着"  # particles that make a verb an act done or going on


@lru_cache(maxsize=1)
def _tokenizer() -> jieba.Tokenizer:
    jieba.setLogLevel(logging.WARNING)  # it announces its dictionary cache at INFO
    tokenizer = jieba.Tokenizer()
    tokenizer.initialize()
    return tokenizer


@lru_cache(maxsize=1)
def _tagger() -> jieba.posseg.POSTokenizer:
    return jieba.posseg.POSTokenizer(_tokenizer())


@lru_cache(maxsize=512)
def split_words(text: str) -> tuple[str, ...]:
    """``text`` cut into words (Chinese by jieba's dictionary; spaces and punctuation kept as tokens)."""
    return tuple(_tokenizer().cut(text))


@lru_cache(maxsize=512)
def _tags(text: str) -> dict[str, str]:
    return {pair.word: pair.flag for pair in _tagger().cut(text)}


def is_function_word(word: str, sentence: str) -> bool:
    """Whether ``word`` (a Chinese word of ``sentence``) is grammar, a count or a time rather than a
    name or a thing: what a search term never is. Digits and Latin words are never function words
    here (the number of a sequel's title, the digits of a model number)."""
    if not _CJK.search(word):
        return False
    if _CALENDAR.fullmatch(word) or (word in _CALENDAR_UNITS and re.search(_THIS + word, sentence)):
        return True  # "这学期", "上个季度": when, like "今天"
    tag = _tags(sentence).get(word)
    if tag is None:
        # A word the tagger cut in two: a verb with its aspect particle ("考了") is an act.
        flags = list(_tags(word).values())
        return len(flags) > 1 and flags[0] == "v" and flags[-1].startswith("u")
    if tag == "v" and len(word) >= 2 and word[-1] in _ASPECT:
        return True  # "看过", "买了": an act, not a thing
    return tag in _FUNCTION_TAGS


def shorter_terms(term: str) -> tuple[str, ...]:
    """``term``, then shorter forms of it to search when it finds nothing, widest match last.

    Latin words: the leading name (a game's title before the words that describe a video
    of it), the first two words, the first word. Chinese: without its last word, then its
    first word ("成都大熊猫基地" -> "成都大熊猫" -> "成都"). A form is never a single letter.
    """
    forms = [term]
    words = term.split()
    if len(words) > 1:
        name = []
        for word in words:
            if not re.match(r"[A-Z0-9]", word):
                break
            name.append(word)
        forms += [" ".join(name), " ".join(words[:2]), words[0]]
    elif _CJK.search(term):
        pieces = [w for w in split_words(term) if w.strip()]
        if len(pieces) > 1:
            forms += ["".join(pieces[:-1]), pieces[0]]
    shorter = sorted({f.strip() for f in forms[1:]} - {term}, key=len, reverse=True)
    return (term, *[f for f in shorter if len(f) >= 2][:3])
