"""Fields by role: only the app's search field is typed into; a sign-in wall needs no password field."""

from __future__ import annotations

import pytest

from core.models import Input, PageType, RiskCategory, Tap, UIElement
from inference.policies import find_search_field
from inference.rules import (
    check_action,
    detect_page_type,
    find_login_wall,
    find_risk,
    is_search_field,
)
from tests.inference.screens import button as _button
from tests.inference.screens import element, screen_of


def _field(element_id: str, hint: str, top: int = 300, resource_id: str = "") -> UIElement:
    return element(element_id, hint, top=top, height=120, editable=True, clickable=True,
                   class_name="android.widget.EditText", resource_id=resource_id)


@pytest.mark.parametrize(("hint", "button"), [
    ("Enter phone number or email", "Continue"),
    ("请输入手机号", "获取验证码"),
    ("Verification code", "Verify"),
    ("휴대폰 번호", "다음"),
    ("メールアドレス", "次へ"),
])
def test_an_account_or_code_field_with_a_way_on_is_a_sign_in_wall(hint: str, button: str) -> None:
    screen = screen_of(element("t", "Welcome", top=100), _field("f", hint), _button("b", button, 500))
    assert find_login_wall(screen) is not None
    assert detect_page_type(screen) is PageType.LOGIN
    finding = find_risk(screen)
    assert finding is not None and finding.category is RiskCategory.LOGIN
    assert find_search_field(screen) is None  # the skills never take it for the search box
    refused = check_action(Input(text="boba", target="f", submit=True), screen)
    assert refused is not None and refused.category is RiskCategory.LOGIN


def test_a_choice_of_accounts_to_continue_with_is_a_sign_in_wall() -> None:
    screen = screen_of(element("t", "Sign in to continue", top=100), _button("g", "Continue with Google", 400),
                       _button("a", "Continue with Apple", 520))
    assert find_login_wall(screen) is not None


@pytest.mark.parametrize(("hint", "resource_id"), [
    ("搜索商家、商品名称", ""),
    ("What do you want to listen to?", ""),  # neutral words, the only field, at the top
    ("Where to?", "com.example:id/destination"),
    ("Big Mac", "com.example:id/search_box"),  # a term typed in an earlier run: the id says search
])
def test_the_apps_search_field_is_known_by_its_role(hint: str, resource_id: str) -> None:
    screen = screen_of(element("t", "Home", top=100), _field("f", hint, resource_id=resource_id),
                       _button("b", "Go", 500))
    field = screen.element("f")
    assert field is not None and is_search_field(field, screen)
    assert check_action(Input(text="boba", target="f", submit=True), screen) is None
    assert find_risk(screen) is None


def test_a_form_field_is_never_typed_into_even_without_a_sign_in_button() -> None:
    screen = screen_of(element("t", "Delivery details", top=100), _field("n", "Your name", top=300),
                       _field("a", "Street address", top=500))
    refused = check_action(Input(text="boba", target="a"), screen)
    assert refused is not None and refused.category is RiskCategory.PERSONAL_INFO
    lone_low = screen_of(element("t", "Notes", top=100), _field("f", "Add a note", top=1800))
    assert check_action(Input(text="boba", target="f"), lone_low) is not None  # not where search bars sit


def test_a_search_field_holding_risky_words_typed_earlier_is_not_read_as_a_label() -> None:
    screen = screen_of(element("t", "Home", top=100),
                       _field("f", "话费充值", resource_id="com.example:id/search_bar"))
    assert find_risk(screen) is None


def test_a_page_offering_sign_in_beside_other_ways_on_is_no_wall() -> None:
    # A profile page: "Sign up to save your bookmarks!" with account choices, and its Settings.
    screen = screen_of(element("t", "Sign up to save your bookmarks!", top=100),
                       _button("up", "Navigate up", 20), _button("s", "Settings", 20),
                       _button("f", "Continue with Facebook", 400),
                       _button("g", "Continue with Google", 520), _button("l", "Log In", 640))
    assert find_login_wall(screen) is None
    assert check_action(Tap(target="s"), screen) is None  # its Settings is a way on
    assert check_action(Tap(target="g"), screen) is not None  # a sign-in choice never is
