"""What a person types, as the CLI's checks read it: questions in any script pass, and a question
is refused only when it holds no word at all (tests/droidretriever/test_bad_inputs.py runs the
refusals through the CLI)."""

from __future__ import annotations

import pytest

from core.errors import InputError
from droidretriever.cli.inputs import check_question


@pytest.mark.parametrize("question", [
    "麦当劳的巨无霸在美团上多少钱？",  # Chinese
    "배달의민족에서 빅맥 가격은?",  # Korean
    "メルカリで一番安いiPhoneは？",  # Japanese (kana and kanji)
    "Is a Big Mac 🍔 cheaper on Meituan?",  # an emoji among words
    "🔥 deals on Etsy today 🔥",
    "ما هو سعر البيتزا؟",  # Arabic, right to left
    "\u202eWhich permissions does Meituan have?",  # a bidi override before words: still words
])
def test_a_question_in_any_script_or_with_an_emoji_among_words_passes(question: str) -> None:
    assert check_question(question) == question


def test_a_question_of_emoji_only_names_what_to_do() -> None:
    with pytest.raises(InputError, match=r"has no words.*type what you want to find out, in words"):
        check_question("🍔🍟")
