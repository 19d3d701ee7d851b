"""``--apps`` is checked against the farm's apps before a run exists, read as a plan reads it."""

from __future__ import annotations

import pytest

from core.errors import InputError
from core.models import InstalledApp, PageMode, Query
from flows.retrieve import check_apps_installed
from inference.rules.plan import build_plan

INSTALLED = (InstalledApp(package="com.sankuai.meituan", label="Meituan"),
             InstalledApp(package="com.mcdonalds.app", label="McDonald's"))


@pytest.mark.parametrize("name", ["Meituan", "meituan", "com.sankuai.meituan", "McDonalds", "麦当劳",
                                  " McDonald's "])
def test_a_label_a_package_or_an_alias_any_case_passes_and_the_plan_keeps_it(name: str) -> None:
    check_apps_installed([name], INSTALLED)
    plan = build_plan(Query(text="Big Mac price", apps=(name,)), INSTALLED, ["Big Mac"],
                      PageMode.FOCUSED, decomposer="rules")
    assert plan.subtasks, plan.notes


def test_an_unknown_app_names_the_installed_ones_and_a_near_miss() -> None:
    with pytest.raises(InputError) as refused:
        check_apps_installed(["Meituan", "Meituann", "NoSuchApp"], INSTALLED, option="--apps")
    assert str(refused.value) == "--apps 'Meituann', 'NoSuchApp': no phone of the farm has them"
    assert refused.value.hint == ("did you mean Meituan? name installed apps (labels or "
                                  "packages): McDonald's, Meituan")


def test_nothing_is_checked_while_no_phone_is_online() -> None:
    check_apps_installed(["NoSuchApp"], ())
