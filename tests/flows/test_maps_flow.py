"""The build-maps flow's choices: which apps, and the deployment `up` serves (no services)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from prefect.client.schemas.schedules import IntervalSchedule

from core.errors import InputError
from core.models import InstalledApp
from flows.maps import MAPS_DEPLOYMENT, choose_apps, maps_deployment

INSTALLED = (InstalledApp(package="com.zhihu.android", label="Zhihu"),
             InstalledApp(package="com.android.settings", label="Settings"))


def test_apps_are_named_by_label_or_package_in_any_case_and_all_by_default() -> None:
    assert [a.label for a in choose_apps(INSTALLED, None)] == ["Settings", "Zhihu"]
    assert choose_apps(INSTALLED, ["zhihu", "com.android.settings", "Zhihu"]) == [INSTALLED[0], INSTALLED[1]]


def test_an_app_no_phone_has_is_refused_with_the_apps_there_are() -> None:
    with pytest.raises(InputError) as refused:
        choose_apps(INSTALLED, ["Zhihu", "Nope"])
    assert "'Nope'" in str(refused.value) and "Settings, Zhihu" in refused.value.hint


def test_up_serves_the_build_every_refresh_interval() -> None:
    deployment = maps_deployment(6.0)
    assert deployment.name == MAPS_DEPLOYMENT
    schedules = [s.schedule for s in deployment.schedules or ()]
    assert [s.interval for s in schedules if isinstance(s, IntervalSchedule)] == [timedelta(hours=6)]
    assert len(schedules) == 1
