"""Untrusted text made safe to show, and folded for matching.

Screen text, questions and model output are data from outside: they may hold
control characters (an ANSI escape rewrites a terminal), bidi overrides (text
that reads differently from how it is stored) and invisible or look-alike
characters (``P\\u200bay``, Cyrillic ``Рау``) that hide a word from a word list.

- :func:`strip_controls`  for a terminal: control, bidi and zero-width characters removed;
- :func:`escape_controls` for a stored report: the same characters written visibly (``\\x1b``);
- :func:`fold_for_matching` for word lists: NFKC (full-width folded), invisible and bidi
  characters removed, look-alike letters folded to Latin, case folded;
- :func:`mask_url`        a URL with its password replaced by ``***``, to show or log it
  (a malformed one too);
- :func:`has_cjk`         whether text holds Chinese, Japanese kana or Korean (no word breaks:
  matched by substring, not by word);
- :func:`has_letters`     whether text holds a letter of any script (a question, not only emoji,
  symbols, digits or invisible characters).
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import urlsplit, urlunsplit

__all__ = ["escape_controls", "fold_for_matching", "has_cjk", "has_letters", "mask_url",
           "strip_controls"]

# Bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) and marks.
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
# Characters that draw nothing: zero-width space / (non-)joiner, word joiner, BOM,
# soft hyphen, Mongolian vowel separator, invisible operators.
_INVISIBLE = "\u00ad\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff"
# C0 and C1 controls and DEL (tab and newline are handled by the callers that keep them).
_CONTROL = "".join(chr(c) for c in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)))
_UNSAFE = re.compile(f"[{re.escape(_CONTROL + _BIDI + _INVISIBLE)}]")
_UNSAFE_KEEP_LINES = re.compile(
    f"[{re.escape(_CONTROL.replace(chr(9), '').replace(chr(10), '') + _BIDI + _INVISIBLE)}]"
)
_HIDDEN = re.compile(f"[{re.escape(_BIDI + _INVISIBLE)}]")
# Terminal escape sequences: CSI (ESC [ or U+009B ... final byte), OSC (ESC ] ... BEL or ST), and
# two-byte ones (ESC and one character).
_ESCAPES = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -~]")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:/*")  # "redis://", "redis:/", "http:"
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")  # kana, CJK ideographs, Hangul

# Letters of other scripts drawn like Latin ones (Unicode's confusables, the common
# Cyrillic and Greek ones): folded so "Рау" (Cyrillic) reads as "pay" to a word list.
_LOOKALIKES = str.maketrans({
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p",
    "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "ԁ": "d",
    "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l", "ɑ": "a", "ɡ": "g", "ı": "i",
    "α": "a", "β": "b", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t",
    "υ": "u", "χ": "x", "γ": "y",
})


def strip_controls(text: str, *, keep_newlines: bool = True) -> str:
    """``text`` without control, bidi and zero-width characters (for a terminal).

    Tabs and newlines stay unless ``keep_newlines`` is False (one-line output).
    """
    if keep_newlines:
        return _UNSAFE_KEEP_LINES.sub("", text)
    return _UNSAFE.sub("", text.replace("\n", " ").replace("\t", " "))


def escape_controls(text: str) -> str:
    """``text`` with control, bidi and zero-width characters written visibly (``\\x1b``,
    ``\\u202e``), so a stored report shows them instead of obeying them; tab and newline stay."""
    return _UNSAFE_KEEP_LINES.sub(_escape_one, text)


def _escape_one(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def fold_for_matching(text: str) -> str:
    """``text`` as a word list should see it: what a person reads, not how it is encoded.

    NFKC (full-width ``Ｐａｙ`` and compatibility forms become plain letters),
    invisible and bidi characters removed, look-alike Cyrillic and Greek letters
    folded to Latin, case folded, runs of space made one space.
    """
    folded = unicodedata.normalize("NFKC", text)
    folded = _HIDDEN.sub("", folded)
    folded = folded.casefold().translate(_LOOKALIKES)
    return " ".join(_UNSAFE.sub(" ", folded).split())


def mask_url(url: str) -> str:
    """``url`` with its user part's password (or a lone user part: a token) replaced by ``***``.

    A value that is not a clean URL (a malformed setting shown in an error: no ``//``, a
    password holding ``/``, ``?`` or ``#``, a broken host) keeps only its scheme and what
    follows its last ``@``, since anything before that may be a password.
    """
    if "@" not in url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return _masked_to_last_at(url)
    if "@" in parts.netloc and "@" not in parts.path + parts.query + parts.fragment:
        userinfo, _, host = parts.netloc.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        netloc = f"{user}:***@{host}" if colon else f"***@{host}"
        return urlunsplit(parts._replace(netloc=netloc))
    if parts.scheme and parts.netloc and not set(parts.netloc) & {":", "@"}:
        return url  # an '@' in the path of a URL with neither a user part nor a port
    return _masked_to_last_at(url)


def _masked_to_last_at(text: str) -> str:
    scheme = _SCHEME.match(text)
    prefix = scheme.group(0) if scheme else ""
    return prefix + "***@" + text[len(prefix):].rpartition("@")[2]


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a Chinese character, Japanese kana or Korean Hangul."""
    return _CJK.search(text) is not None


def has_letters(text: str) -> bool:
    """Whether ``text`` holds a letter of any script (Unicode category L: Latin, CJK, Hangul,
    Arabic, ...); emoji, symbols, digits, punctuation, control or bidi characters and the
    letters inside terminal escape sequences (``\\x1b[2J``) are none."""
    return any(unicodedata.category(char).startswith("L") for char in _ESCAPES.sub("", text))
