"""The farm's shared OCR service: started with a generated secret, repaired, ridden out by a client."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from core.config import Settings, load_settings
from core.secrets import StackSecret
from deploy.farm import (
    FarmManifest,
    is_running,
    repair_farm,
    shared_ocr_engine,
    start_shared_ocr,
    stop_process,
    worker_ocr_args,
)
from droidretriever.testing import free_port
from inference.perception import OcrServiceClient, RapidOcrEngine, check_ocr_service
from inference.perception.image import RGBImage


def _settings(**perception: object) -> Settings:
    shared = perception.pop("shared", True)
    return Settings.model_validate({"farm": {"shared_ocr": shared}, "perception": perception})


def test_the_farm_shares_one_engine_unless_told_otherwise() -> None:
    assert shared_ocr_engine(_settings()) == "rapidocr"  # the default: one service per host
    assert worker_ocr_args(_settings()) == ["--ocr-backend", "service"]
    assert shared_ocr_engine(_settings(ocr_backend="paddle")) == "paddle"
    assert shared_ocr_engine(_settings(shared=False)) is None
    assert worker_ocr_args(_settings(shared=False)) == []
    assert shared_ocr_engine(_settings(ocr_backend="none")) is None
    explicit = _settings(shared=False, ocr_backend="service", ocr_service_engine="paddle")
    assert shared_ocr_engine(explicit) == "paddle"
    assert worker_ocr_args(explicit) == []  # the workers' own settings already say service
    elsewhere = _settings(ocr_backend="service", ocr_service_url="http://10.0.0.5:8710")
    assert shared_ocr_engine(elsewhere) is None  # that host's service: nothing to start here


def _line_image() -> RGBImage:
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (600, 90), "white")
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 40)
    ImageDraw.Draw(image).text((20, 20), "Shared engine 42", fill="black", font=font)
    return np.asarray(image)


@pytest.mark.slow
def test_the_farm_starts_its_ocr_service_and_a_client_rides_out_its_restart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [k for k in os.environ if k.startswith("DROIDRETRIEVER_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("DROIDRETRIEVER_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("DROIDRETRIEVER_PERCEPTION__OCR_BACKEND", "service")
    monkeypatch.setenv("DROIDRETRIEVER_PERCEPTION__OCR_SERVICE_URL", f"http://127.0.0.1:{free_port()}")
    (record,) = start_shared_ocr(load_settings())
    try:
        settings = load_settings()  # as a worker reads them: the generated token filled in
        token = settings.perception.ocr_service_token
        assert token is not None
        assert token.get_secret_value() == settings.secrets.read(StackSecret.OCR_TOKEN)
        client = OcrServiceClient(settings.perception)
        image = _line_image()
        first = client.read(image)
        assert first == RapidOcrEngine().read(image)
        assert any("42" in line.text for line in first)

        os.kill(record.pid, signal.SIGKILL)  # as a crash: no goodbye to the client
        while is_running(record):
            time.sleep(0.05)
        manifest = FarmManifest(mode="adb", adb_host="127.0.0.1", adb_port=free_port(),
                                processes=(record,))
        repaired: list[FarmManifest] = []
        later = threading.Timer(1.0, lambda: repaired.append(repair_farm(settings, manifest)[0]))
        later.start()
        again = client.read(image)  # sent while the service is down: retried until it is back
        later.join()
        record = repaired[0].processes[0]
        assert is_running(record)
        assert again == first
        assert check_ocr_service(settings.perception).reads == 1  # the new process's
    finally:
        stop_process(record)
