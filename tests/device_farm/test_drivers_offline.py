"""Driver pieces that need no phone: raw frames, scroll geometry, U2Driver over recorded RPC, no SDK."""

from __future__ import annotations

import base64
import struct
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
import uiautomator2.exceptions as u2e

from core.models import Point, ScrollDirection
from device_farm.adb_client import parse_focus, parse_wm_size
from device_farm.adb_driver import AdbDriver
from device_farm.driver import plan_scroll
from device_farm.emulators import find_emulator_binary
from device_farm.errors import (
    DeviceCommandFailed,
    DeviceLost,
    DeviceTimeout,
    FarmSetupError,
    InputNotApplied,
)
from device_farm.screencap import decode_raw_screencap, encode_png
from device_farm.u2_driver import U2Driver


def _raw_frame(width: int, height: int, header_words: int) -> tuple[bytes, np.ndarray]:
    rng = np.random.default_rng(1)
    rgba = rng.integers(0, 255, size=(height, width, 4), dtype=np.uint8)
    header = struct.pack("<III", width, height, 1) + (b"\x00\x00\x00\x00" if header_words == 4 else b"")
    return header + rgba.tobytes(), rgba


@pytest.mark.parametrize("header_words", [3, 4])
def test_raw_screencap_round_trips_to_png(header_words: int) -> None:
    data, rgba = _raw_frame(36, 64, header_words)
    frame = decode_raw_screencap(data)
    png = encode_png(frame)
    decoded = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
    assert decoded is not None and decoded.shape == (64, 36, 3)
    assert np.array_equal(decoded[..., ::-1], rgba[..., :3])  # BGR back to RGB, alpha dropped


def test_truncated_screencap_is_refused() -> None:
    data, _ = _raw_frame(36, 64, 4)
    with pytest.raises(ValueError, match="expected"):
        decode_raw_screencap(data[:-10])


def test_scroll_down_drags_finger_up_inside_the_screen() -> None:
    start, end = plan_scroll(1080, 2400, ScrollDirection.DOWN, 0.67)
    assert start.x == end.x == 540
    assert start.y > end.y and start.y - end.y == pytest.approx(0.67 * 2400, abs=2)
    start, end = plan_scroll(1080, 2400, ScrollDirection.UP, 1.0)
    assert 0 < start.y < end.y < 2400  # clamped away from the bars


def test_shell_output_parsers() -> None:
    window = ("  mCurrentFocus=Window{8d1c2e3 u0 com.sankuai.meituan/"
              "com.meituan.android.pt.homepage.activity.MainActivity}\n")
    assert parse_focus(window) == (
        "com.sankuai.meituan", "com.meituan.android.pt.homepage.activity.MainActivity")
    resumed = "mResumedActivity: ActivityRecord{1 u0 com.android.settings/.Settings t12}"
    assert parse_focus(resumed) == ("com.android.settings", ".Settings")
    assert parse_focus("mCurrentFocus=null") is None
    assert parse_wm_size("Physical size: 1080x2400\nOverride size: 720x1600") == (720, 1600)
    assert parse_wm_size("Physical size: 1080x2400") == (1080, 2400)


class CannedU2Rpc:
    """Test double for the uiautomator2 agent: answers with canned responses written by hand in
    the shapes uiautomator2 3.7 expects (XML string, base64 JPEG, booleans; see its
    ``__init__.py``), not captured from a phone; it logs every request it was sent."""

    def __init__(self, responses: dict[str, Any]) -> None:
        self.responses = responses
        self.requests: list[tuple[str, Any]] = []

    def jsonrpc_call(self, method: str, params: Any = None, timeout: float = 10) -> Any:
        self.requests.append((method, params))
        response = self.responses[method]
        if isinstance(response, Exception):
            raise response
        return response


_CANNED_XML = (
    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
    "<node index=\"0\" text=\"麦当劳\" class=\"android.widget.EditText\" package=\"com.sankuai.meituan\" "
    "focused=\"true\" bounds=\"[0,0][1080,160]\" /></hierarchy>"
)


def _jpeg_b64() -> str:
    ok, buffer = cv2.imencode(".jpg", np.full((40, 20, 3), 200, np.uint8))
    assert ok
    return base64.b64encode(buffer.tobytes()).decode()


def _u2(rpc: CannedU2Rpc) -> U2Driver:
    # The AdbDriver only opens sockets when called; these tests never reach it.
    return U2Driver(AdbDriver("R58M12ABCDE", host="127.0.0.1", port=1), rpc)


def test_u2_builds_agent_requests() -> None:
    rpc = CannedU2Rpc({"click": True, "swipe": True, "setClipboard": None,
                         "pasteClipboard": None, "dumpWindowHierarchy": _CANNED_XML,
                         "takeScreenshot": _jpeg_b64()})
    driver = _u2(rpc)
    driver.tap(Point(x=10, y=20))
    driver.long_press(Point(x=10, y=20), 900)
    driver.swipe(Point(x=1, y=2), Point(x=3, y=4), duration_ms=300)
    entry = driver.input_text("麦当劳")
    assert entry.landed and entry.field_text == "麦当劳"
    assert rpc.requests[:5] == [
        ("click", [10, 20]), ("click", [10, 20, 900]), ("swipe", [1, 2, 3, 4, 60]),
        ("setClipboard", ["droidretriever", "麦当劳"]), ("pasteClipboard", []),
    ]
    assert driver._jpeg_to_png(_jpeg_b64())[1:] == (20, 40)


def test_u2_input_that_did_not_land_is_reported() -> None:
    rpc = CannedU2Rpc({"setClipboard": None, "pasteClipboard": None,
                         "dumpWindowHierarchy": _CANNED_XML})
    with pytest.raises(InputNotApplied, match="Big Mac"):
        _u2(rpc).input_text("Big Mac")


@pytest.mark.parametrize(("raised", "expected"), [
    (u2e.HTTPTimeoutError("timeout"), DeviceTimeout),
    (u2e.ConnectError("refused"), DeviceLost),
    (u2e.UiAutomationNotConnectedError("gone"), DeviceLost),
    (u2e.RPCUnknownError("boom"), DeviceCommandFailed),
])
def test_u2_errors_are_translated_once(raised: Exception, expected: type[Exception]) -> None:
    with pytest.raises(expected) as info:
        _u2(CannedU2Rpc({"click": raised})).tap(Point(x=1, y=1))
    assert info.value.__cause__ is raised


def test_adb_driver_without_server_is_device_lost() -> None:
    from droidretriever.testing import free_port

    driver = AdbDriver("emulator-5554", port=free_port(), timeout_s=2)
    with pytest.raises(DeviceLost, match="cannot reach"):
        driver.ping()


def test_emulators_without_sdk_say_how_to_get_one(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    monkeypatch.delenv("ANDROID_SDK_ROOT", raising=False)
    monkeypatch.delenv("ANDROID_HOME", raising=False)
    with pytest.raises(FarmSetupError) as info:
        find_emulator_binary(tmp_path)
    assert "no Android SDK emulator" in str(info.value)
    assert "ANDROID_SDK_ROOT" in info.value.hint
