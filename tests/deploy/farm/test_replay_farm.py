"""``farm up --sim N --recordings DIR``: replay phones run beside the simulated ones, with workers."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import load_settings
from core.recordings import find_data_dir
from deploy.farm import bring_down, bring_up_sim, wait_for_workers
from device_farm.adb_driver import AdbDriver
from device_farm.registry import DeviceRegistry
from droidretriever.testing import free_port
from tests.support.farm import farm_env

DATA = find_data_dir(load_settings())


@pytest.mark.slow
@pytest.mark.skipif(DATA is None, reason="the real recordings (shared/data) are not on this machine")
def test_recorded_apps_run_through_the_farm_like_any_app(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert DATA is not None
    env = {**farm_env(redis_url, tmp_path), "DROIDRETRIEVER_SIM__ADB_PORT": str(free_port()),
           "DROIDRETRIEVER_PERCEPTION__OCR_SERVICE_URL": f"http://127.0.0.1:{free_port()}"}
    for name, value in env.items():  # the farm's processes read their settings from the environment
        monkeypatch.setenv(name, value)
    settings = load_settings()
    manifest = bring_up_sim(settings, 1, [DATA / "droidbot-real"])
    try:
        assert len(manifest.serials) == 3  # one simulated phone + a replay phone per recorded screen size
        registry = DeviceRegistry.from_settings(settings)
        wait_for_workers(registry, manifest.serials, timeout_s=120)
        by_serial = {s.info.serial: s.info for s in registry.statuses()}
        replay = next(info for info in by_serial.values() if info.model == "Replay 1440x2560")
        labels = {app.label for app in replay.apps}
        assert {"Reuters", "Smartnews", "Etsy"} <= labels
        assert "Reuters" not in {app.label for app in by_serial[manifest.serials[0]].apps}
        driver = AdbDriver.for_device(replay)  # by its adb serial, on the farm's adb server
        try:
            driver.open_app("com.thomsonreuters.reuters")
            seen = driver.observe()
            assert (seen.package, seen.width, seen.height) == ("com.thomsonreuters.reuters", 1440, 2560)
        finally:
            driver.close()
    finally:
        bring_down(settings)
