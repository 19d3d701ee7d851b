"""The vocabulary: every word list of the rules is a data file, read by one loader that names
the file and the entry when one is wrong."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.models import PageMode, SubTask
from inference.errors import LexiconError, VocabularyError
from inference.policies.base import PolicyContext
from inference.policies.skills import find_dialog_dismiss
from inference.rules import detect_page_type, is_refusal, load_lexicon
from inference.rules.apps import load_app_aliases
from inference.rules.decomposer import choose_page_mode
from inference.rules.never_tap import find_act_word, load_act_kinds
from inference.vocabulary import VOCABULARY_DIR, Vocabulary, load_vocabulary, load_vocabulary_model
from tests.inference.screens import button, element, perceived, screen_of

_OWN_SHAPES = {"lexicon", "app_aliases", "topics", "acts"}  # files with a schema of their own


def test_every_vocabulary_file_loads_and_says_what_it_is() -> None:
    files = sorted(VOCABULARY_DIR.glob("*.yaml"))
    assert len(files) > 20
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert text.startswith("#"), f"{path.name} has no header saying what its kind is"
        assert "never one app's" in text or "one question's" in text, f"{path.name}: say entries are general"
        if path.stem not in _OWN_SHAPES:
            vocabulary = load_vocabulary(path.stem)
            assert vocabulary.kind == path.stem and vocabulary.groups
    assert load_lexicon().concepts and load_app_aliases()


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "refusal.yaml").write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(("body", "said"), [
    ("kind: refusal\ngroups:\n  refusal: [cancel, cancel]\n", "'cancel' twice"),
    ("kind: refusal\ngroups:\n  refusal: [cancel, '(close']\n", "'(close' is no regular expression"),
    ("kind: refusal\ngroups:\n  refusal: []\n", "lists no entry"),
    ("kind: refusal\ngroups:\n  refusal: [cancel]\n  other: ['  ']\n", "empty entry"),
    ("kind: refusal\ngroups:\n  refusal: [cancel]\nwords: [x]\n", "words"),
    ("kind: refusal\ngroups: [cancel\n", "no valid YAML"),
])
def test_a_bad_entry_is_named_with_its_file(tmp_path: Path, body: str, said: str) -> None:
    directory = _write(tmp_path, body)
    with pytest.raises(VocabularyError) as caught:
        load_vocabulary_model("refusal", Vocabulary, directory=directory)
    assert "refusal.yaml" in str(caught.value) and said in str(caught.value)
    assert caught.value.hint  # says what to do
    assert isinstance(caught.value, LexiconError)  # callers catching the lexicon's errors still do


def test_a_missing_group_or_file_is_named() -> None:
    with pytest.raises(VocabularyError, match=r"refusal\.yaml has no group 'nope'"):
        load_vocabulary("refusal").words("nope")
    with pytest.raises(VocabularyError, match=r"no_such_kind\.yaml"):
        load_vocabulary_model("no_such_kind", Vocabulary)


def test_the_rules_match_what_the_vocabulary_lists() -> None:
    """The modules compile their patterns from the files: every plain refusal declines (in capitals
    too), every plain word of an act kind is found as that kind or an earlier one, and a page-mode
    cue sets the mode."""
    plain = re.compile(r"[\w ]+")
    for word in load_vocabulary("refusal").words("refusal"):
        if plain.fullmatch(word):
            assert is_refusal(word.upper()), word
    kinds = load_act_kinds()
    order = list(kinds)
    for index, (name, kind) in enumerate(kinds.items()):
        for word in kind.words:
            if plain.fullmatch(word):
                found = find_act_word(word)
                assert found is not None and order.index(found.kind) <= index, (name, word)
    mode, cue = choose_page_mode("What do people say about it? Reviews please.")
    assert mode is PageMode.MULTI_PAGE and re.search(load_vocabulary("page_mode_cues").alternation("multi_page"), cue)


def test_one_refusal_list_closes_dialogs_for_the_skills_and_the_gate() -> None:
    """The skills dismiss a pop-up with the gate's refusals: "Maybe later" (once only the gate's)."""
    dialog = screen_of(
        element("panel", "", top=800, height=600, resource_id="android:id/parentPanel"),
        element("title", "Rate this app", top=850, height=80, resource_id="android:id/alertTitle"),
        button("ok", "Rate now", 1200), button("later", "Maybe later", 1300),
    )
    context = PolicyContext(subtask=SubTask(id="s", app_label="App", package="com.example.app",
                                            goal="In App: anything", page_mode=PageMode.FOCUSED),
                            perception=perceived(dialog), page_type=detect_page_type(dialog), step=0)
    dismiss = find_dialog_dismiss(context)
    assert dismiss is not None and dismiss.id == "later"
    assert is_refusal("Maybe later")


def test_every_kind_of_act_speaks_the_lexicons_four_languages() -> None:
    """Acts are kinds, not one-off words: each kind has a category and words in English, Chinese,
    Korean and Japanese (the model refuses a kind missing one)."""
    kinds = load_act_kinds()
    assert {"pay", "buy", "transfer", "paid_plan", "cancel", "sign_in", "delete", "send", "post",
            "follow", "grant"} <= set(kinds)
    for name, kind in kinds.items():
        assert kind.en and kind.zh and kind.ko and kind.ja and kind.doing, name
