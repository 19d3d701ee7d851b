"""How the scripted operator reads a sign-in form: its empty fields, top to bottom, and its submit button."""

from __future__ import annotations

from core.models import Bounds, UIElement
from flows.bench.operator import read_login_form


def _element(eid: str, text: str, top: int, **flags: bool) -> UIElement:
    return UIElement(id=eid, text=text, bounds=Bounds(left=40, top=top, right=1040, bottom=top + 120), **flags)


def test_fields_top_to_bottom_and_the_submit_button_below_them() -> None:
    elements = [
        _element("help", "Help", 100, clickable=True),
        _element("pw", "Password", 900, editable=True, password=True, clickable=True),
        _element("user", "Email or phone", 700, editable=True, clickable=True),
        _element("next", "Next", 1200, clickable=True),
        _element("sign-in-top", "Sign in", 300),  # a title, not a button
    ]
    form = read_login_form(elements)
    assert [f.id for f in form.fields] == ["user", "pw"]
    assert form.submit is not None and form.submit.id == "next"


def test_chinese_labels_and_a_disabled_field_left_alone() -> None:
    elements = [
        _element("phone", "请输入手机号", 600, editable=True),
        _element("old", "验证码", 800, editable=True, enabled=False),
        _element("go", "登录", 1000, clickable=True),
        _element("above", "登录", 200, clickable=True),  # a tab above the form: not its button
    ]
    form = read_login_form(elements)
    assert [f.id for f in form.fields] == ["phone"]
    assert form.submit is not None and form.submit.id == "go"


def test_a_screen_without_a_form_has_no_fields_and_no_button() -> None:
    form = read_login_form([_element("t", "Welcome", 100), _element("b", "Buy now", 900, clickable=True)])
    assert form.fields == [] and form.submit is None
