"""What is drawn matches the dump (checked with real OCR), and 16 phones run at once."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import adbutils
import numpy as np
import pytest
from rapidfuzz import fuzz

from device_farm.sim import SimServer
from tests.device_farm.sim.conftest import bounds, nodes, open_app
from tests.support.example_apps import example_catalog


@pytest.fixture(scope="module")
def ocr() -> object:
    from rapidocr_onnxruntime import RapidOCR

    return RapidOCR()


def _read(ocr: object, image: np.ndarray) -> str:
    result, _ = ocr(image)  # type: ignore[operator]
    return " ".join(text for _, text, _ in (result or []))


@pytest.mark.slow
@pytest.mark.parametrize("package", ["com.mcdonalds.gma.cn", "com.sankuai.meituan"])
def test_dumped_text_is_drawn_at_its_bounds(device: adbutils.AdbDevice, ocr: object, package: str) -> None:
    open_app(device, package)
    shot = np.asarray(device.screenshot())
    texts = [n for n in nodes(device) if n["text"].strip() and n["class"] != "android.widget.EditText"]
    sample = texts[:: max(len(texts) // 6, 1)][:6]
    assert len(sample) >= 4
    for node in sample:
        left, top, right, bottom = bounds(node)
        seen = _read(ocr, shot[top:bottom, left:right])
        assert fuzz.partial_ratio(node["text"], seen) >= 80, (node["text"], seen)
    # an image caption is pixels only: OCR finds it, the dump does not
    banner = next(n for n in nodes(device) if n["resource-id"].endswith(("banner", "home_banner")))
    left, top, right, bottom = bounds(banner)
    caption = _read(ocr, shot[top:bottom, left:right])
    assert caption and banner["text"] == ""
    assert all(caption not in n["text"] for n in nodes(device))


def test_sixteen_phones_driven_concurrently() -> None:
    with SimServer(phones=16, port=0, seed=7, catalog=example_catalog()) as sim:
        client = adbutils.AdbClient("127.0.0.1", sim.port)
        errors: list[str] = []
        lock = threading.Lock()

        def drive(serial: str) -> str:
            d = client.device(serial)
            open_app(d, "com.mcdonalds.gma.cn")
            d.swipe(540, 1600, 540, 900, 0.4)
            image = d.screenshot()
            xml = d.dump_hierarchy()
            if image.size[0] != 1080 or "Big Mac" not in xml:
                with lock:
                    errors.append(serial)
            return str(d.app_current().package)

        with ThreadPoolExecutor(max_workers=16) as pool:
            results = list(pool.map(drive, sim.serials))
        assert not errors
        assert results == ["com.mcdonalds.gma.cn"] * 16
