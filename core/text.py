"""Untrusted text made safe to show, and folded for matching.

Screen text, questions and model output are data from outside: they may hold
control characters (an ANSI escape rewrites a terminal), bidi overrides (text
that reads differently from how it is stored) and invisible or look-alike
characters (``P\\u200bay``, Cyrillic ``Рау``) that hide a word from a word list.

- :func:`strip_controls`  for a terminal: control, bidi and zero-width characters removed;
- :func:`escape_controls` for a stored report: the same characters written visibly (``\\x1b``);
- :func:`fold_for_matching` for word lists: compatibility forms folded (full-width), invisible
  and bidi characters removed (a right-to-left override read both as stored and as drawn),
  combining marks dropped, look-alike letters folded by Unicode's confusables skeleton (TR39),
  case folded;
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
from collections.abc import Iterator
from functools import cache
from importlib import metadata
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from core.errors import UnicodeDataError

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

# Unicode's confusables data (TR39, "Unicode Security Mechanisms"), as shipped verbatim by the
# `confusables` package (docs/decisions.md): each line maps a character to the prototype it is
# drawn like ("Р" -> "P", "ꓑ" -> "P"). Only its data file is read.
_CONFUSABLES = ("confusables", "confusables/assets/confusables.txt")
# Right-to-left override: what follows it, up to the pop (or isolate end, or line end), is drawn
# reversed: "\u202eyap" shows "pay".
_RLO, _OVERRIDE_END = "\u202e", re.compile("[\u202c\u2069\n]")
# Japanese voicing marks combine with kana ("か" + "\u3099" is "が"): part of the letter, kept.
_KANA_MARKS = frozenset("\u3099\u309a")
# Scripts the word lists match as themselves: TR39 maps some of their letters to each other
# ("カ" -> "力"), which would only blur them.
_OWN_SCRIPTS = ("CJK", "HANGUL", "HIRAGANA", "KATAKANA", "BOPOMOFO", "IDEOGRAPHIC", "KANGXI")
_SMALL_CAPITAL = re.compile(r"LATIN LETTER SMALL CAPITAL ([A-Z])")
# Letters read as Latin that TR39 maps to another non-Latin look-alike (a lower-case Cyrillic
# "к" to "ĸ", Greek "ε" to "ꞓ") or leaves out ("χ"): a person reads "Кирить" as "kupить".
_READ_AS = {"к": "k", "κ": "k", "ĸ": "k", "м": "m", "ʍ": "m", "χ": "x", "ε": "e", "β": "b"}


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

    Compatibility forms become plain letters (NFKD: full-width ``Ｐａｙ``, ``𝐏𝐚𝐲``), invisible and
    bidi characters are removed, combining marks dropped (``P̈ay``; Japanese voicing marks stay
    with their kana), letters drawn like Latin ones folded to them by Unicode's confusables
    skeleton (UTS #39: Cyrillic ``Рау``, Lisu ``ꓑꓮ``, small capitals ``ᴘᴀʏ``), case folded, runs of
    space made one space. Text under a right-to-left override reads both as stored and as drawn
    (``\u202eyap`` is "yap pay"), so neither order hides a word.
    """
    stored = _fold_one(text)
    if _RLO not in text:
        return stored
    return f"{stored} {_fold_one(_as_drawn(text))}"


def _fold_one(text: str) -> str:
    table = _disguise_table()
    folded = unicodedata.normalize("NFKD", text).translate(table)
    folded = unicodedata.normalize("NFC", folded).casefold().translate(table)
    return " ".join(_UNSAFE.sub(" ", folded).split())


def _as_drawn(text: str) -> str:
    """``text`` with every run under a right-to-left override reversed, as a screen draws it."""
    parts: list[str] = []
    rest = text
    while _RLO in rest:
        before, _, after = rest.partition(_RLO)
        end = _OVERRIDE_END.search(after)
        stop = end.start() if end else len(after)
        parts.extend((before, after[:stop][::-1]))
        rest = after[stop:]
    return "".join((*parts, rest))


@cache
def _disguise_table() -> dict[int, str | None]:
    """One ``str.translate`` table: hidden characters and combining marks removed, letters drawn
    like Latin ones mapped to them (UTS #39 skeleton prototypes, small capitals by their names)."""
    table: dict[int, str | None] = {ord(c): None for c in _BIDI + _INVISIBLE}
    for code in (*range(0x20000), *range(0xE0100, 0xE01F0)):  # planes 0-1, variation selectors
        char = chr(code)
        if unicodedata.category(char) == "Mn" and char not in _KANA_MARKS:
            table[code] = None
        elif (small := _SMALL_CAPITAL.fullmatch(unicodedata.name(char, ""))) is not None:
            table[code] = small.group(1).lower()
    for source, prototype in _read_confusables():
        name = unicodedata.name(source, "")
        if source.isascii() or not unicodedata.category(source).startswith("L") or name.startswith(_OWN_SCRIPTS):
            continue  # only letters of other scripts drawn like Latin ones
        latin = _as_latin(prototype, table)
        if latin:
            table.setdefault(ord(source), latin)
    for source, latin in _READ_AS.items():
        table[ord(source)] = latin
    return table


def _as_latin(prototype: str, table: dict[int, str | None]) -> str:
    """A TR39 prototype as plain Latin letters ("ᴛ" -> "t", "o\u0338" -> "o"), or "" if it is not one."""
    letters = "".join(_READ_AS.get(c) or (c if c.isascii() else str(table.get(ord(c)) or c))
                      for c in unicodedata.normalize("NFD", prototype) if unicodedata.category(c) != "Mn")
    return letters if letters.isascii() and letters.isalpha() else ""


def _read_confusables() -> Iterator[tuple[str, str]]:
    """(source, prototype) pairs of Unicode's confusables.txt (single-character sources)."""
    package, member = _CONFUSABLES
    try:
        path = Path(str(metadata.distribution(package).locate_file(member)))
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (metadata.PackageNotFoundError, OSError) as exc:
        raise UnicodeDataError(
            f"Unicode's confusables data ({member} of the '{package}' package) cannot be read: {exc}",
            hint="install the project's dependencies: pip install -c constraints.txt -e .") from exc
    for line in lines:
        fields = line.partition("#")[0].split(";")
        if len(fields) < 2 or not fields[0].strip():
            continue
        source = [chr(int(code, 16)) for code in fields[0].split()]
        if len(source) == 1:
            yield source[0], "".join(chr(int(code, 16)) for code in fields[1].split())


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
