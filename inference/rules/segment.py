"""Chinese word segmentation, so a search term is never cut inside a word (jieba, offline).

``split_words("上海迪士尼乐园门票多少钱")`` -> ``["上海", "迪士尼", "乐园", "门票", "多少", "钱"]``.
Stop words are then dropped as whole words: "上" (on) goes, "上海" stays. jieba's
dictionary ships in its wheel; it is loaded once, on first use (about a second).
"""

from __future__ import annotations

import logging
from functools import lru_cache

import jieba

__all__ = ["split_words"]


@lru_cache(maxsize=1)
def _tokenizer() -> jieba.Tokenizer:
    jieba.setLogLevel(logging.WARNING)  # it announces its dictionary cache at INFO
    tokenizer = jieba.Tokenizer()
    tokenizer.initialize()
    return tokenizer


@lru_cache(maxsize=512)
def split_words(text: str) -> tuple[str, ...]:
    """``text`` cut into words (Chinese by jieba's dictionary; spaces and punctuation kept as tokens)."""
    return tuple(_tokenizer().cut(text))
