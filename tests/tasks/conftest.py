"""Virtual phones with a fixed set of apps and a perceiver, for the navigate and capture tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.config import PerceptionSettings
from device_farm.sim import APPS_DIR, Catalog, SimServer, load_app
from inference.perception import Perceiver

APP_FILES = ("meituan.yaml", "settings.yaml", "mcdonalds.yaml", "jd.yaml", "amap.yaml")


@pytest.fixture(scope="session")
def sim() -> Iterator[SimServer]:
    # Only the apps these tests navigate: the rest of the catalog is still being written.
    catalog = Catalog(apps={a.package: a for a in (load_app(APPS_DIR / f) for f in APP_FILES)})
    with SimServer(phones=1, port=0, seed=7, catalog=catalog) as server:
        yield server


@pytest.fixture(scope="session")
def perceiver() -> Perceiver:
    return Perceiver(PerceptionSettings(ocr_backend="none"))
