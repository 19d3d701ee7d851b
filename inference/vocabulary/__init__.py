"""One vocabulary for the rules: the word lists they match, as data files in this folder.

Every word list the rules use (what says "search", what declines a dialog, the buttons never to
press, the words of a risky screen, a question's stop words, the cues of a kind of page, time
words...) lives here, one YAML file per kind, in every language the lexicon knows; no module
writes one as a pattern of its own. Entries are general UI vocabulary: what any app's screens or
any person's questions say, never one app's labels or one question's words
(``tests/test_general_not_tuned.py`` fails on a suite's answer or on a phrase only one suite
question uses).

    load_vocabulary("refusal")             a kind's word lists, read once and validated
    Vocabulary.words("refusal")            one group's entries, in file order
    Vocabulary.alternation("a", "b")       groups joined into one regex alternation: "x|y|z"
    load_vocabulary_model("topics", M)     a file with a shape of its own, validated by the
                                           pydantic model ``M`` (the decomposer's topics)
    read_vocabulary_data(path)             a file's raw YAML, for the lexicon's and the app
                                           names' own loaders (``inference.rules.lexicon``,
                                           ``inference.rules.apps``)

A word-list file::

    # What the kind is, how its entries are matched, and that they are general vocabulary.
    kind: refusal              # the file's own name
    groups:                    # one list, or one per category, language or use
      refusal:
        - close
        - "don'?t allow"       # entries are regular-expression fragments; a plain word is one

Modules compile their patterns from the entries at import time, joined as they were when they
were written in code, so they match what they matched. A malformed file stops the import with a
:class:`~inference.errors.VocabularyError` that names the file, the group and the entry.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import ErrorDetails

from inference.errors import VocabularyError

__all__ = [
    "VOCABULARY_DIR",
    "Vocabulary",
    "VocabularyError",
    "check_patterns",
    "load_vocabulary",
    "load_vocabulary_model",
    "read_vocabulary_data",
]

VOCABULARY_DIR = Path(__file__).resolve().parent
_HINT = ("fix that entry in inference/vocabulary/{file} (entries are regular-expression fragments "
         "of general UI vocabulary, never one app's or one question's words), or restore the file "
         "from the package")

M = TypeVar("M", bound=BaseModel)


class Vocabulary(BaseModel):
    """The word lists of one kind: named groups of entries (regular-expression fragments)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str = Field(pattern=r"^[a-z][a-z_]*$")
    groups: dict[str, tuple[str, ...]] = Field(min_length=1)

    @field_validator("groups")
    @classmethod
    def _check_entries(cls, groups: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        for name, entries in groups.items():
            if not entries:
                raise ValueError(f"group {name!r} lists no entry")
            seen: set[str] = set()
            for entry in entries:
                if not entry.strip():
                    raise ValueError(f"group {name!r} has an empty entry")
                if entry in seen:
                    raise ValueError(f"group {name!r} lists the entry {entry!r} twice")
                seen.add(entry)
                try:
                    check_patterns((entry,))
                except ValueError as exc:
                    raise ValueError(f"group {name!r}: {exc}") from exc
        return groups

    def words(self, group: str) -> tuple[str, ...]:
        """The entries of ``group``, in the file's order."""
        try:
            return self.groups[group]
        except KeyError:
            raise VocabularyError(f"inference/vocabulary/{self.kind}.yaml has no group {group!r} "
                                  f"(it has {', '.join(self.groups)})",
                                  hint=_HINT.format(file=f"{self.kind}.yaml")) from None

    def alternation(self, *groups: str) -> str:
        """The entries of ``groups``, in order, as one regex alternation ("a|b|c")."""
        return "|".join(entry for group in groups for entry in self.words(group))


@cache
def load_vocabulary(kind: str) -> Vocabulary:
    """The word lists of ``inference/vocabulary/<kind>.yaml``, read once and validated."""
    vocabulary = load_vocabulary_model(kind, Vocabulary)
    if vocabulary.kind != kind:
        raise VocabularyError(f"inference/vocabulary/{kind}.yaml says it is kind {vocabulary.kind!r}",
                              hint=f"set 'kind: {kind}' at the top of the file")
    return vocabulary


def load_vocabulary_model(name: str, model: type[M], directory: Path = VOCABULARY_DIR) -> M:
    """``<directory>/<name>.yaml`` (this folder by default) validated by ``model``; read on each
    call: cache the result where it is used."""
    path = directory / f"{name}.yaml"
    raw = read_vocabulary_data(path)
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        problems = [_problem(error) for error in exc.errors()]
        raise VocabularyError(f"{_shown(path)} is malformed:\n  " + "\n  ".join(problems[:10]),
                              hint=_HINT.format(file=path.name)) from exc


def read_vocabulary_data(path: Path) -> Any:  # raw YAML: the caller validates it
    """The YAML of a vocabulary file, or a :class:`VocabularyError` naming it."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise VocabularyError(f"cannot read {_shown(path)}: {exc.strerror or exc}",
                              hint="restore the file from the package (pip install -e .)") from exc
    except yaml.YAMLError as exc:
        raise VocabularyError(f"{_shown(path)} is no valid YAML: {exc}",
                              hint=_HINT.format(file=path.name)) from exc


def _problem(error: ErrorDetails) -> str:
    where = ".".join(str(part) for part in error["loc"]) or "(top level)"
    message = error["msg"].removeprefix("Value error, ")
    value = error["input"]
    shown = f" (entry {value!r})" if isinstance(value, str) else ""
    return f"{where}: {message}{shown}"


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(VOCABULARY_DIR.parents[1]))
    except ValueError:
        return str(path)


def check_patterns(words: tuple[str, ...]) -> tuple[str, ...]:
    """``words`` unchanged, or ValueError naming the first entry that is no regular expression."""
    for word in words:
        try:
            re.compile(word)
        except re.error as exc:
            raise ValueError(f"the entry {word!r} is no regular expression ({exc})") from exc
    return words
