"""Suites as a benchmark run names them: built-in names, the smoke suite, a user's folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from suites import BENCH_SUITES, Study, SuiteError, resolve_suite

_TASK = """\
id: g_demo_price
study: general
query: How much is a Big Mac on Meituan?
apps: [Meituan]
page_mode: focused
access: open_web
scoring_points: ["¥18.0"]
paths:
  Meituan: [{open_app: Meituan}]
"""


def test_every_built_in_suite_resolves_and_the_paper_splits_by_study() -> None:
    sizes = {name: len(resolve_suite(name).tasks) for name in BENCH_SUITES}
    assert sizes["paper"] == sizes["paper-study1"] + sizes["paper-study2"] == 35
    assert {t.study for t in resolve_suite("paper-study2").tasks} == {Study.STUDY2}
    smoke = resolve_suite("smoke")
    assert sizes["smoke"] == 3 and set(smoke.expect) == {t.id for t in smoke.tasks}


def test_a_users_folder_with_its_own_tasks_and_included_ones(tmp_path: Path) -> None:
    (tmp_path / "g_demo_price.yaml").write_text(_TASK, encoding="utf-8")
    (tmp_path / "suite.yaml").write_text("name: nightly\ninclude: [g_spotify_vaundy]\n"
                                         "expect: {g_demo_price: 0.5}\n", encoding="utf-8")
    suite = resolve_suite(str(tmp_path))
    assert suite.name == "nightly" and suite.expect == {"g_demo_price": 0.5}
    assert [t.id for t in suite.tasks] == ["g_demo_price", "g_spotify_vaundy"]


@pytest.mark.parametrize(("suite_file", "error"), [
    ("include: [g_no_such_task]\n", "includes tasks no suite has: g_no_such_task"),
    ("expect: {g_other: 1.0}\n", "expects scores of tasks it lacks: g_other"),
    ("include: [g_demo_price]\n", "no suite has: g_demo_price"),
    ("colour: blue\n", "is not a valid suite file"),
])
def test_a_bad_suite_folder_is_refused_saying_why(tmp_path: Path, suite_file: str, error: str) -> None:
    (tmp_path / "g_demo_price.yaml").write_text(_TASK, encoding="utf-8")
    (tmp_path / "suite.yaml").write_text(suite_file, encoding="utf-8")
    with pytest.raises(SuiteError, match=error):
        resolve_suite(str(tmp_path))


def test_an_unknown_name_or_an_empty_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="no suite named 'study3'"):
        resolve_suite("study3")
    with pytest.raises(SuiteError, match="holds no task file"):
        resolve_suite(str(tmp_path))
