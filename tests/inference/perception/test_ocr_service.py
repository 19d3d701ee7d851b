"""The host's shared OCR service on loopback: same lines as in-process, a secret, bounds, no engine in workers."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import numpy as np
import pytest
from pydantic import SecretStr

from core.config import PerceptionSettings
from device_farm.sim import load_catalog
from device_farm.sim.phone import Phone, PhoneIdentity
from device_farm.sim.state import Page
from droidretriever.testing import free_port
from inference.errors import OcrServiceError
from inference.perception import (
    OcrServiceClient,
    RapidOcrEngine,
    check_ocr_service,
    create_ocr_engine,
)
from inference.perception.image import RGBImage
from inference.perception.ocr_wire import HEIGHT_HEADER, WIDTH_HEADER

_TOKEN = "test-ocr-token-not-a-real-secret"


def _service_env(port: int, token: str = _TOKEN, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DROIDRETRIEVER_")}
    return {**env, "DROIDRETRIEVER_PERCEPTION__OCR_SERVICE_URL": f"http://127.0.0.1:{port}",
            "DROIDRETRIEVER_PERCEPTION__OCR_SERVICE_TOKEN": token, **more}


def _settings(port: int, token: str | None = _TOKEN, retry_s: float = 30.0) -> PerceptionSettings:
    return PerceptionSettings.model_validate({
        "ocr_backend": "service", "ocr_service_url": f"http://127.0.0.1:{port}",
        "ocr_service_token": token, "ocr_service_retry_s": retry_s})


def _wait_ready(settings: PerceptionSettings, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 90
    while process.poll() is None and time.monotonic() < deadline:
        try:
            check_ocr_service(settings)
            return
        except OcrServiceError:
            time.sleep(0.25)
    process.kill()
    raise AssertionError(f"the OCR service did not start: {process.communicate()[0].decode()[-2000:]}")


@pytest.fixture(scope="module")
def service() -> Iterator[PerceptionSettings]:
    """A real OCR service process on a free loopback port (8 MB reads at most)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "inference.perception.ocr_service"], stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, env=_service_env(port, DROIDRETRIEVER_PERCEPTION__OCR_SERVICE_MAX_REQUEST_MB="8"))
    settings = _settings(port)
    try:
        _wait_ready(settings, process)
        yield settings
    finally:
        process.terminate()
        process.wait(timeout=15)


@pytest.fixture(scope="module")
def screenshot() -> RGBImage:
    """A virtual phone's screen (1080x2340) as the simulator renders it: the first app's home."""
    catalog = load_catalog()
    package = sorted(catalog.apps)[0]
    phone = Phone(PhoneIdentity("emulator-5554"), catalog)
    phone.state.foreground = package
    phone.state.stacks[package] = [Page(catalog.apps[package].home)]
    phone.touch()
    return np.asarray(phone.screenshot_image().convert("RGB"))


@pytest.mark.slow
def test_the_service_reads_a_screenshot_as_the_engine_in_this_process_does(
        service: PerceptionSettings, screenshot: RGBImage) -> None:
    served = OcrServiceClient(service).read(screenshot)
    local = RapidOcrEngine().read(screenshot)
    assert len(served) >= 5
    assert served == local


def test_every_route_refuses_a_client_without_the_secret(service: PerceptionSettings,
                                                           screenshot: RGBImage) -> None:
    url = str(service.ocr_service_url).rstrip("/")
    crop = screenshot[:200]
    headers = {WIDTH_HEADER: "1080", HEIGHT_HEADER: "200"}
    assert httpx.get(f"{url}/health").status_code == 401
    assert httpx.post(f"{url}/read", content=crop.tobytes(), headers=headers).status_code == 401
    wrong = {"authorization": "Bearer " + _TOKEN[:-1] + "x"}
    assert httpx.get(f"{url}/health", headers=wrong).status_code == 401
    with pytest.raises(OcrServiceError) as refused:
        OcrServiceClient(service.model_copy(update={"ocr_service_token": SecretStr("wrong")})).read(crop)
    assert "refused this client's secret" in str(refused.value)
    assert "OCR_SERVICE_TOKEN" in refused.value.hint
    assert _TOKEN not in str(refused.value) + refused.value.hint


def test_reads_past_the_size_bound_are_refused(service: PerceptionSettings) -> None:
    url = str(service.ocr_service_url).rstrip("/")
    auth = {"authorization": f"Bearer {_TOKEN}"}
    big = np.zeros((2000, 1500, 3), dtype=np.uint8)  # 9 MB: over the service's 8 MB
    with pytest.raises(OcrServiceError, match="too large"):
        OcrServiceClient(service).read(big)
    lying = httpx.post(f"{url}/read", content=big.tobytes(),  # headers claim a small image
                       headers={**auth, WIDTH_HEADER: "10", HEIGHT_HEADER: "10"})
    assert lying.status_code == 413
    short = httpx.post(f"{url}/read", content=b"\0" * 100, headers={**auth, WIDTH_HEADER: "10",
                                                                    HEIGHT_HEADER: "10"})
    assert short.status_code == 400
    assert check_ocr_service(service).engine == "rapidocr"  # still serving


def test_a_service_that_is_down_fails_in_one_clear_line() -> None:
    settings = _settings(free_port(), retry_s=0.5)
    with pytest.raises(OcrServiceError) as down:
        OcrServiceClient(settings).read(np.full((40, 200, 3), 255, dtype=np.uint8))
    message = str(down.value)
    assert "\n" not in message
    assert "did not answer" in message and str(settings.ocr_service_url).rstrip("/") in message
    assert "farm up" in down.value.hint
    with pytest.raises(OcrServiceError, match="no secret"):
        create_ocr_engine(_settings(free_port(), token=None))


@pytest.mark.slow
def test_a_worker_with_the_service_backend_imports_no_ocr_engine(service: PerceptionSettings,
                                                                screenshot: RGBImage) -> None:
    """The worker's own modules and perceiver, in a fresh process: its reads go to the service."""
    probe = (
        "import sys, numpy as np\n"
        "import tasks.worker.device_worker, tasks.navigate.task as task\n"
        "from core.config import load_settings\n"
        "ocr = task._perceiver(load_settings()).ocr\n"
        "image = np.frombuffer(sys.stdin.buffer.read(), dtype=np.uint8).reshape(-1, 1080, 3)\n"
        "lines = ocr.read(image)\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('onnxruntime', 'rapidocr_onnxruntime'))\n"
        "print(len(lines), ocr.name, loaded)\n"
    )
    port = service.ocr_service_url.port
    assert port is not None
    done = subprocess.run([sys.executable, "-c", probe], input=screenshot[:400].tobytes(),
                          capture_output=True, env=_service_env(port, DROIDRETRIEVER_PERCEPTION__OCR_BACKEND="service"),
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    count, name, loaded = done.stdout.decode().split(maxsplit=2)
    assert int(count) >= 1 and name == "service"
    assert loaded.strip() == "[]"
