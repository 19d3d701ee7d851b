"""Folding for word lists: what a person reads, whatever the encoding (Unicode's confusables skeleton)."""

from __future__ import annotations

import pytest

from core.text import fold_for_matching


@pytest.mark.parametrize(("text", "read"), [
    ("Ｐａｙ", "pay"),  # full-width
    ("𝐏𝐚𝐲", "pay"),  # mathematical bold
    ("P\u200bay", "pay"),  # zero-width space
    ("Рау", "pay"),  # Cyrillic
    ("ΡΑΥ", "pay"),  # Greek capitals
    ("ꓑꓮY ꓠꓳꓪ", "pay now"),  # Lisu letters (UTS #39 data, not a hand table)
    ("Տеnd", "send"),  # Armenian and Cyrillic
    ("ᴘᴀʏ ɴᴏᴡ", "pay now"),  # small capitals
    ("Ṕáý", "pay"),  # precomposed accents
    ("D\u0337o\u0337n\u0337a\u0337t\u0337e\u0337", "donate"),  # combining overlays
    ("Вυу", "buy"),
])
def test_disguised_latin_reads_as_what_it_looks_like(text: str, read: str) -> None:
    assert fold_for_matching(text) == read


def test_a_right_to_left_override_is_read_as_stored_and_as_drawn() -> None:
    assert fold_for_matching("\u202eyap") == "yap pay"  # drawn: "pay"
    assert fold_for_matching("\u202ewon yap\u202c!") == "won yap! pay now!"
    assert fold_for_matching("P\u202eay").startswith("pay")


@pytest.mark.parametrize("text", ["ログイン", "ガード", "カートに入れる", "결제하기", "支付", "确认支付 ¥299",
                                  "¥100 · 合计 •", "Total: $1,000.50", "I0O1l"])
def test_chinese_japanese_korean_digits_and_ascii_stay_themselves(text: str) -> None:
    # UTS #39 maps "カ" to "力", Hangul vowels to "丨", "0" to "O" and "1" to "l": the word lists match
    # these scripts as themselves, and prices must stay prices.
    assert fold_for_matching(text) == " ".join(text.casefold().split())


def test_half_width_kana_and_marks_inside_cjk() -> None:
    assert fold_for_matching("ｶﾞｰﾄﾞ") == "ガード"  # the voicing mark stays with its kana
    assert fold_for_matching("支\u0301付") == "支付"
    assert fold_for_matching("결\u0300제") == "결제"
