"""A copilot over the virtual phones of ``tests/tasks/conftest.py``, with a real Redis for events."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import redis

from core.config import BudgetSettings
from core.models import PageMode, SubTask
from device_farm.adb_driver import AdbDriver
from device_farm.sim import SimServer, load_catalog
from inference.memory import RouteMemory
from inference.perception import Perceiver
from storage import FakeObjectStore, RunEventPublisher
from tasks.control import RedisControlChannel
from tasks.navigate import Copilot, ObjectStoreBlobs

MEITUAN = "com.sankuai.meituan"
MCDONALDS = "com.mcdonalds.gma.cn"
SETTINGS = "com.android.settings"


def subtask(sid: str, label: str, package: str, goal: str, term: str | None,
            mode: PageMode = PageMode.FOCUSED, limit: int = 3) -> SubTask:
    return SubTask(id=sid, app_label=label, package=package, goal=goal, search_term=term,
                   page_mode=mode, browsing_limit=limit)


@dataclass
class Rig:
    copilot: Copilot
    store: FakeObjectStore
    sim: SimServer
    redis: redis.Redis[bytes]


@pytest.fixture()
def rig(sim: SimServer, perceiver: Perceiver, redis_url: str) -> Iterator[Rig]:
    sim.control.reset("boot")
    sim.control.clear_faults()
    driver = AdbDriver(sim.serials[0], port=sim.port)
    store = FakeObjectStore()
    client = redis.Redis.from_url(redis_url)
    copilot = Copilot(
        driver=driver, perceiver=perceiver, store=store, budgets=BudgetSettings(),
        events=RunEventPublisher(client, store), control=RedisControlChannel(client),
        memory=RouteMemory(ObjectStoreBlobs(store)), pause_poll_s=0.1,
    )
    try:
        yield Rig(copilot, store, sim, client)
    finally:
        driver.close()
        client.close()


@pytest.fixture(scope="module")
def catalog_phone() -> Iterator[tuple[SimServer, AdbDriver]]:
    """One virtual phone with every app of the catalog (the suites' apps), for one test module."""
    with SimServer(phones=1, port=0, seed=7, catalog=load_catalog()) as server:
        driver = AdbDriver(server.serials[0], port=server.port)
        try:
            yield server, driver
        finally:
            driver.close()
