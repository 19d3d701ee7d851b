"""Installed apps and the names people call them, in English and Chinese.

``find_mentioned_apps`` finds the installed apps a question names (fuzzy, with
rapidfuzz, so "McDonald" finds "McDonald's" and "xiaohongshu" finds Rednote);
``resolve_app`` maps a name a model wrote back to one installed app. Both are
shared by the rule-based and the model decomposer. ``app_named`` is how a
person's ``--apps`` is read: exactly, a package, a label or an alias, any case.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from rapidfuzz import fuzz

from core.models import InstalledApp
from inference.errors import VocabularyError
from inference.vocabulary import VOCABULARY_DIR, read_vocabulary_data

__all__ = [
    "ALIASES_FILE",
    "app_named",
    "find_mentioned_apps",
    "load_app_aliases",
    "names_for",
    "resolve_app",
    "strip_app_names",
]


ALIASES_FILE = VOCABULARY_DIR / "app_aliases.yaml"


@lru_cache(maxsize=1)
def load_app_aliases(path: Path = ALIASES_FILE) -> tuple[tuple[str, ...], ...]:
    """The alias groups of ``inference/vocabulary/app_aliases.yaml`` (general knowledge: the names
    people use), read once."""
    raw = read_vocabulary_data(path)
    try:
        return tuple(tuple(str(name) for name in group) for group in raw["apps"])
    except (KeyError, TypeError) as exc:
        raise VocabularyError(f"{path} holds no list of alias groups under 'apps': {exc}",
                              hint="restore inference/vocabulary/app_aliases.yaml from the package") from exc


_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
# A Latin name's word boundary: a Latin letter or digit next to it, never a CJK character
# ("在JD上买", "Rednote上的笔记": CJK text has no spaces around the names it carries).
_LATIN = "A-Za-z0-9_"
_FUZZY_MIN = 6  # shorter names ("JD", "KFC", "Wish") must match exactly, as whole words


def names_for(app: InstalledApp) -> tuple[str, ...]:
    """Every name ``app`` goes by: its label, and its alias group when one matches."""
    names = [app.label]
    label_key = _key(app.label)
    for group in load_app_aliases():
        if app.package in group or any(_key(name) == label_key for name in group):
            names += [name for name in group if "." not in name or _looks_like_name(name)]
    return tuple(dict.fromkeys(n for n in names if n))


def find_mentioned_apps(text: str, installed: Sequence[InstalledApp]) -> tuple[InstalledApp, ...]:
    """Installed apps named in ``text``, in the order they are first mentioned."""
    found: list[tuple[int, InstalledApp]] = []
    for app in installed:
        positions = [p for p in (_position(name, text) for name in names_for(app)) if p >= 0]
        if positions:
            found.append((min(positions), app))
    found.sort(key=lambda pair: pair[0])
    return tuple(dict.fromkeys(app for _, app in found))


def app_named(name: str, installed: Sequence[InstalledApp]) -> InstalledApp | None:
    """The installed app ``name`` names exactly (its package, label or an alias, any case), or
    None: how ``--apps`` is read (a plan keeps only the apps named so)."""
    wanted = name.strip().lower()
    return next((app for app in installed if app.package.lower() == wanted
                 or any(n.lower() == wanted for n in names_for(app))), None)


def resolve_app(name: str, installed: Sequence[InstalledApp]) -> InstalledApp | None:
    """The installed app a model meant by ``name`` (label, alias or package), or None."""
    wanted = _key(name)
    if not wanted or wanted in {"none", "null", "n/a"}:
        return None
    best: tuple[float, InstalledApp] | None = None
    for app in installed:
        if wanted == _key(app.package):
            return app
        for candidate in names_for(app):
            score = fuzz.ratio(wanted, _key(candidate))
            if best is None or score > best[0]:
                best = (score, app)
    return best[1] if best is not None and best[0] >= 85 else None


def strip_app_names(text: str, installed: Sequence[InstalledApp], mark: str = " , ") -> str:
    """``text`` with every installed app's names (and their possessive) replaced by ``mark``.

    Names are matched as :func:`find_mentioned_apps` matches them: whole words, short
    names in their exact case ("RED" is Rednote, "redemption" is not).
    """
    for app in installed:
        for name in sorted(names_for(app), key=len, reverse=True):
            if _CJK_RE.search(name):
                text = text.replace(name, mark)
                continue
            flags = 0 if len(_key(name)) < _FUZZY_MIN else re.IGNORECASE
            text = re.sub(rf"(?<![{_LATIN}.]){re.escape(name)}(?:['’]s\b)?(?![{_LATIN}])", mark, text, flags=flags)
    return text


def _position(name: str, text: str) -> int:
    """Where ``name`` is mentioned in ``text`` (-1 when it is not)."""
    if _CJK_RE.search(name):
        return text.find(name)  # CJK has no word breaks; substrings are how names appear
    short = len(_key(name)) < _FUZZY_MIN
    # Short names are often words too ("Wish", "RED", "Maps"): exact case, whole words.
    flags = 0 if short else re.IGNORECASE
    exact = re.search(rf"(?<![{_LATIN}.]){re.escape(name)}(?![{_LATIN}])", text, flags=flags)
    if exact is not None:
        return exact.start()
    if short:
        return -1
    # Fuzzy: "McDonald" for "McDonald's", "Elema" for "Ele.me"; aligned so we know where.
    alignment = fuzz.partial_ratio_alignment(_key(name), text.lower(), score_cutoff=88)
    return -1 if alignment is None else alignment.dest_start


def _key(name: str) -> str:
    return re.sub(r"[\s'’.\-_]+", "", name.strip().lower())


def _looks_like_name(name: str) -> bool:
    # "Ele.me" and "JD.com" are names; "com.tencent.mm" is a package.
    return name.count(".") == 1 and not name.startswith(("com.", "me.", "tv.", "jp."))
