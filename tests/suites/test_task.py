"""Suites load by name and never mix; task files say what is wrong with them."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from core.models import PageMode
from suites import SUITES, Study, SuiteError, load_suite, load_task

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
                       "general": {Study.GENERAL}, "heldout": {Study.HELDOUT}, "dev": {Study.DEV}}
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



def _written_in_chinese(query: str) -> bool:
    """More Chinese characters than twice the Latin words (an English question may name a Chinese page)."""
    return len(re.findall(r"[\u4e00-\u9fff]", query)) > 2 * len(re.findall(r"[A-Za-z]+", query))


def test_the_held_out_suite_keeps_the_study_3_protocol() -> None:
    """Counts only: the questions themselves are not for reading while the mechanism is built."""
    tasks = load_suite("heldout")
    assert len(tasks) == 40 and all(t.id.startswith("h_") for t in tasks)
    assert sum(1 for t in tasks if _written_in_chinese(t.query)) == 20, "half Chinese, half English"
    per_app = Counter(a for t in tasks for a in t.apps)
    assert max(per_app.values()) <= 3, f"no app in more than 3 questions: {per_app.most_common(3)}"
    assert sum(1 for t in tasks if len(t.apps) > 1) >= 4
    assert 1 <= sum(1 for t in tasks if t.pauses) <= 3
    assert {t.page_mode for t in tasks} == set(PageMode)
    assert not {t.id for t in tasks} & {t.id for t in load_suite("paper", "general")}


def test_the_dev_suite_keeps_the_study_3_protocol() -> None:
    tasks = load_suite("dev")
    assert len(tasks) == 30 and all(t.id.startswith("d_") for t in tasks)
    assert sum(1 for t in tasks if _written_in_chinese(t.query)) == 15, "half Chinese, half English"
    per_app = Counter(a for t in tasks for a in t.apps)
    assert max(per_app.values()) <= 2, f"no app in more than 2 questions: {per_app.most_common(3)}"
    assert sum(1 for t in tasks if len(t.apps) > 1) >= 4
    assert sum(1 for t in tasks if t.pauses) <= 2
    assert {t.page_mode for t in tasks} == set(PageMode)
    assert not {t.id for t in tasks} & {t.id for t in load_suite("paper", "general", "heldout")}
