"""Text fields by their role: the app's search field, and the sign-in wall (no model).

The agent types only into the app's search field. A field is that when its own
words say search (its hint, description or resource id: "Search", "搜索", "查",
"검색", "検索"), or, when its words are neutral ("What do you want to listen to?",
"Where to?"), when it is the only field of a page that is no form and sits in
the top half of the screen, where apps put their search bar. A field whose
words ask for an account (phone, e-mail, user name, student number), a code,
a secret or a personal detail (name, address, card) is a form field, whatever
else the page shows, and so is any field of a sign-in wall.

A sign-in wall is a screen that asks who the person is before it shows
anything, with or without a password field: a field asking for an account or a
one-time code beside a button that goes on ("Continue", "Next", "Get code",
"登录", "下一步", "获取验证码", "계속", "次へ"), or a choice of accounts to continue
with ("Continue with Google", "使用微信登录") and no other way on than back, close or
skip (a profile page offering sign-in beside its settings is no wall). Words in English, Chinese, Korean
and Japanese, as in the lexicon: kinds of fields and buttons, never one app's
(``inference/vocabulary/fields.yaml``, ``search.yaml``).
"""

from __future__ import annotations

import re

from core.models import Screen, UIElement
from core.text import fold_for_matching
from inference.rules.never_tap import is_refusal
from inference.vocabulary import load_vocabulary

__all__ = ["find_login_wall", "find_text_fields", "is_search_field"]

_FIELDS = load_vocabulary("fields")  # inference/vocabulary/fields.yaml
# A field's own words that say it searches: the search words every search control uses, and
# the words only a field's hint uses ("Find a store", "查车次").
_SEARCH_WORDS = re.compile(load_vocabulary("search").alternation("search", "field"))
# What a form asks for: who the person is, a code, a secret, a personal detail.
_FORM_WORDS = re.compile(rf"\b(?:{_FIELDS.alternation('form_latin')})\b|{_FIELDS.alternation('form_other')}")
# Buttons that carry a sign-in on: the person's identity goes with them.
_GOES_ON = re.compile(rf"^(?:{_FIELDS.alternation('goes_on')})\b")
_CONTINUE_WITH = re.compile(_FIELDS.alternation("continue_with"))
# Leaving a screen: with a refusal (close, skip, not now: never_tap.is_refusal), the only
# controls every sign-in wall may have besides its choices.
_LEAVES = re.compile(rf"^(?:{load_vocabulary('back').alternation('back')})$")
_TOP_HALF = 0.5


def find_text_fields(screen: Screen) -> tuple[UIElement, ...]:
    """The fields a person types into (a read-only counter marked editable is not one)."""
    return tuple(e for e in screen.elements
                 if e.editable and ("EditText" in e.class_name or not e.class_name))


def is_search_field(field: UIElement, screen: Screen) -> bool:
    """Whether ``field`` is the app's search field, by its role (see the module docstring)."""
    if field.password or not field.editable:
        return False
    words = _field_words(field)
    if _SEARCH_WORDS.search(words):
        return True
    if _FORM_WORDS.search(words) or find_login_wall(screen) is not None:
        return False
    fields = find_text_fields(screen)
    return (len(fields) == 1 and fields[0].id == field.id
            and field.bounds.center.y <= screen.height * _TOP_HALF)


def find_login_wall(screen: Screen) -> UIElement | None:
    """The element that makes ``screen`` a sign-in wall (its account or code field, or a
    "continue with" choice), or None."""
    buttons = [e for e in screen.elements
               if (e.clickable or e.class_name.endswith("Button")) and 0 < len(e.label.strip()) <= 40]
    continue_with = [b for b in buttons if _CONTINUE_WITH.search(fold_for_matching(b.label))]
    goes_on = bool(continue_with) or any(_GOES_ON.search(fold_for_matching(b.label)) for b in buttons)
    for field in find_text_fields(screen):
        words = _field_words(field)
        if field.password or (_FORM_WORDS.search(words) and not _SEARCH_WORDS.search(words) and goes_on):
            return field
    if len(continue_with) < 2:
        return None
    # A page that offers sign-in beside other ways on (a profile page's "Sign up to save your
    # bookmarks!" above its Settings) is no wall: the person is not asked before anything is
    # shown. The gate still never presses a "continue with" choice (never_tap).
    others = [b for b in buttons if b not in continue_with and not _GOES_ON.search(fold_for_matching(b.label))
              and not is_refusal(b.label) and not _LEAVES.match(fold_for_matching(b.label))]
    return None if others else continue_with[0]


def _field_words(field: UIElement) -> str:
    """What a field says about itself: its text (the hint when empty), description and resource id."""
    name = field.resource_id.rpartition("/")[2].replace("_", " ")
    return fold_for_matching(f"{field.text} {field.content_desc} {name}")
