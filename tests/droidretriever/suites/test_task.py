"""Suites load by name and never mix; task files say what is wrong with them."""

from __future__ import annotations

from pathlib import Path

import pytest

from droidretriever.suites import SUITES, Study, SuiteError, load_suite, load_task

_TASK = """id: g_demo_price
study: general
query: How much is a latte?
apps: [Meituan]
page_mode: focused
access: open_web
scoring_points: ["¥18.0"]
paths:
  Meituan: [{open_app: Meituan}]
"""


def test_suites_load_by_name_and_the_default_is_the_papers_and_the_examples() -> None:
    studies = {name: {t.study for t in load_suite(name)} for name in SUITES}
    assert studies == {"paper": {Study.STUDY1, Study.STUDY2}, "examples": {Study.EXAMPLES},
                       "general": {Study.GENERAL}}
    assert {t.id for t in load_suite()} == {t.id for t in load_suite("paper", "examples")}
    assert len(load_suite("paper")) == 35
    assert len(load_suite("general")) >= 40
    with pytest.raises(SuiteError, match="no suite named study3"):
        load_suite("study3")


def test_a_task_filed_in_another_suites_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "study2").mkdir()
    (tmp_path / "study2" / "g_demo_price.yaml").write_text(_TASK, encoding="utf-8")
    with pytest.raises(SuiteError, match="a general task in the study2 folder"):
        load_suite("paper", root=tmp_path)


@pytest.mark.parametrize(("extra", "message"), [
    ("signed_out: [Gmail]\n", "signed_out names apps the task does not use"),
    ("pauses: [Gmail]\n", "pauses names apps the task does not use"),
    ("wrong_points: ['¥18.0']\n", "values both right and wrong"),
    ("tolerances: {'¥19.0': '5%'}\n", "tolerances name values that are not points"),
])
def test_invalid_optional_fields_name_the_problem(tmp_path: Path, extra: str, message: str) -> None:
    path = tmp_path / "g_demo_price.yaml"
    path.write_text(_TASK + extra, encoding="utf-8")
    with pytest.raises(SuiteError, match=message):
        load_task(path)
