"""What a question is planned over: the apps of the farm's live phones, and, when there are none,
one line saying which is missing (phones, or apps on them), said once. Real Redis and Prefect."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from core.config import FarmSettings, RedisSettings
from core.models import InstalledApp
from core.redis_client import open_redis
from device_farm.models import DeviceInfo
from device_farm.registry import DeviceRegistry
from flows.errors import NoAppsError
from flows.retrieve import decompose_task, farm_apps, retry_unless_no_apps
from tests.support.farm import own_database

pytestmark = pytest.mark.services

FARM_APPS_DB = 9


@pytest.fixture()
def registry(redis_url: str) -> Iterator[DeviceRegistry]:
    client = open_redis(RedisSettings(url=own_database(redis_url, FARM_APPS_DB)))
    client.flushdb()
    yield DeviceRegistry(client, FarmSettings(heartbeat_s=0.1, heartbeat_missed=3))
    client.flushdb()


def test_no_phone_online_is_said_as_such(registry: DeviceRegistry) -> None:
    with pytest.raises(NoAppsError) as raised:
        farm_apps(registry)
    assert str(raised.value).startswith("no phone of the farm is online")
    assert "farm up" in (raised.value.hint or "")


def test_phones_online_without_apps_are_not_called_offline(registry: DeviceRegistry) -> None:
    registry.register(DeviceInfo(serial="phone-bare", width=1080, height=2340), worker="w1")
    with pytest.raises(NoAppsError) as raised:
        farm_apps(registry)
    assert str(raised.value) == "the farm's phones are online but list no installed app"
    assert "farm status" in (raised.value.hint or "")


def test_the_apps_of_live_phones_each_once(registry: DeviceRegistry) -> None:
    maps = InstalledApp(package="com.example.maps", label="Maps")
    mail = InstalledApp(package="com.example.mail", label="Mail")
    registry.register(DeviceInfo(serial="p1", width=1080, height=2340, apps=(maps, mail)), "w1")
    registry.register(DeviceInfo(serial="p2", width=1080, height=2340, apps=(maps,)), "w2")
    assert sorted(a.package for a in farm_apps(registry)) == ["com.example.mail", "com.example.maps"]


def test_planning_is_not_tried_again_when_no_app_fits(prefect_harness: str) -> None:
    """Real Prefect: a fault is tried once more; "no app" is answered once."""
    tries: list[str] = []

    @task(retries=1, retry_condition_fn=retry_unless_no_apps, cache_policy=NO_CACHE)
    def plan(error: str) -> None:
        tries.append(error)
        raise NoAppsError("no phone of the farm is online") if error == "no apps" else \
            RuntimeError("the model server hung up")

    @flow
    def ask(error: str) -> None:
        plan(error)

    for error in ("no apps", "fault"):
        with pytest.raises((NoAppsError, RuntimeError)):
            ask(error)
    assert tries == ["no apps", "fault", "fault"]
    assert decompose_task.retry_condition_fn is retry_unless_no_apps
