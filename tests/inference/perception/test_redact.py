"""Planted secrets never reach a cloud model; screenshots can be blurred."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from core.config import LLMEndpoint, PerceptionSettings, load_settings
from core.errors import ConfigError
from droidretriever.testing.drawing import FONT_PATH
from inference.perception import (
    Observation,
    Perceiver,
    Redactor,
    count_exposure,
    describe_screen,
    redactor_for,
)
from inference.perception.image import decode_screenshot
from inference.perception.ocr import RapidOcrEngine

SECRETS = {
    "phone": ["+1 (415) 555-0132", "138 0013 8000", "010-62345678"],
    "email": ["jane.doe@example.com"],
    "id_number": ["11010519491231002X", "078-05-1120"],
    "card": ["4111 1111 1111 1111", "5500-0000-0000-0004"],
    "address": ["1600 Amphitheatre Parkway", "742 Evergreen Terrace", "南京路100号"],
}
PASSWORD = "hunter2-S3cret"


def _node(text: str, top: int, *, password: bool = False) -> str:
    cls = "android.widget.EditText" if password else "android.widget.TextView"
    return (
        f'<node index="0" text="{text}" resource-id="" class="{cls}" package="com.x" '
        f'content-desc="" clickable="{str(password).lower()}" password="{str(password).lower()}" '
        f'bounds="[0,{top}][1080,{top + 80}]" />'
    )


def _observation() -> Observation:
    texts = [f"Contact: {s}" for values in SECRETS.values() for s in values]
    texts += ["Order #20231227 total $1,234.56", "Open 9:00-21:00"]
    nodes = "".join(_node(t, 100 + 90 * i) for i, t in enumerate(texts))
    nodes += _node(PASSWORD, 100 + 90 * len(texts), password=True)
    xml = (
        "<hierarchy rotation='0'><node class='android.widget.FrameLayout' package='com.x' "
        f"bounds='[0,0][1080,2400]'>{nodes}</node></hierarchy>"
    )
    image = Image.fromarray(np.random.default_rng(1).integers(0, 255, (2400, 1080, 3), dtype=np.uint8))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return Observation(
        serial="sim-1", step=3, package="com.x", width=1080, height=2400,
        screenshot_png=buffer.getvalue(), hierarchy_xml=xml,
    )


def test_cloud_description_carries_no_planted_secret() -> None:
    settings = PerceptionSettings(ocr_backend="none")
    result = Perceiver(settings).perceive(_observation())
    cloud = LLMEndpoint(locality="cloud")
    redactor = redactor_for(cloud, settings)
    assert redactor is not None
    text = describe_screen(result.screen, result.blocks, redactor=redactor)
    for kind, values in SECRETS.items():
        for value in values:
            assert value not in text.text, f"{kind} {value!r} leaked"
        assert f"[{kind}]" in text.text
    assert PASSWORD not in text.text
    assert "$1,234.56" in text.text and "9:00-21:00" in text.text  # not personal: kept
    assert text.sensitive_masked == sum(len(v) for v in SECRETS.values()) + 1
    # a local model sees the text (but never the password value)
    assert redactor_for(LLMEndpoint(locality="local"), settings) is None
    local = describe_screen(result.screen, result.blocks)
    assert "jane.doe@example.com" in local.text and PASSWORD not in local.text
    _, sensitive = redactor.redact_elements(result.screen.elements)
    everything = tuple(b.id for b in result.blocks.blocks)
    assert count_exposure(result.blocks, everything, sensitive).sensitive_exposed == len(sensitive)


def test_kinds_are_configurable_and_luhn_spares_order_numbers() -> None:
    only_email = Redactor(("email",))
    out = only_email.redact_text("jane@example.com 4111 1111 1111 1111")
    assert out.text == "[email] 4111 1111 1111 1111" and out.kinds == ("email",)
    assert Redactor().redact_text("Order 1234 5678 9012 3456").text == "Order 1234 5678 9012 3456"


def test_blurred_screenshot_hides_sensitive_boxes_only() -> None:
    observation = _observation()
    result = Perceiver(PerceptionSettings(ocr_backend="none")).perceive(observation)
    blurred = Redactor().blur_screenshot(observation.screenshot_png, result.screen.elements)
    before = np.asarray(Image.open(io.BytesIO(observation.screenshot_png)).convert("RGB"), dtype=np.int16)
    after = np.asarray(Image.open(io.BytesIO(blurred)).convert("RGB"), dtype=np.int16)
    email = next(e for e in result.screen.elements if "example.com" in e.text)
    safe = next(e for e in result.screen.elements if "Order" in e.text)
    b, s = email.bounds, safe.bounds
    assert np.abs(after[b.top:b.bottom, b.left:b.right] - before[b.top:b.bottom, b.left:b.right]).mean() > 20
    assert np.array_equal(after[s.top:s.bottom, s.left:s.right], before[s.top:s.bottom, s.left:s.right])


def _drawn(*lines: tuple[str, int]) -> bytes:
    """A white screen with ``lines`` (text, top) drawn into its pixels only."""
    image = Image.new("RGB", (1080, 1200), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(FONT_PATH, 44)
    for text, top in lines:
        draw.text((60, top), text, fill=(20, 20, 20), font=font)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def test_text_drawn_only_in_pixels_is_found_by_ocr_and_blacked_out() -> None:
    """Issue 31: no element holds these texts; OCR of the masked screenshot reads none of them."""
    planted = ["Office (415)555-0132", "li.na@example.net", "Mobile 139 1234 5678"]
    png = _drawn(*((text, 100 + 200 * i) for i, text in enumerate(planted)), ("Opening hours 9:00-21:00", 800))
    engine = RapidOcrEngine()
    redactor = redactor_for(LLMEndpoint(locality="cloud", vision=True), PerceptionSettings(), ocr=engine)
    assert redactor is not None
    masked = redactor.mask_screenshot(png, ())
    assert masked is not None
    read = " ".join(line.text for line in engine.read(decode_screenshot(masked)))
    assert "9:00-21:00" in read  # not personal: kept
    for text in planted:
        assert text.split()[-1] not in read, read
    assert "(415)555-0132" not in Redactor().redact_text("Office (415)555-0132").text


def test_a_screenshot_no_ocr_can_check_is_not_sent() -> None:
    assert Redactor().mask_screenshot(_drawn(("Office (415)555-0132", 100)), ()) is None


def test_a_cloud_role_seeing_screenshots_needs_ocr() -> None:
    cloud = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "locality": "cloud", "vision": True}
    with pytest.raises(ConfigError, match="OCR finds the personal data drawn in their pixels") as error:
        load_settings(llm={"evaluator": cloud}, perception={"ocr_backend": "none"})
    assert "DROIDRETRIEVER_LLM__EVALUATOR__VISION=false" in error.value.hint
    load_settings(llm={"evaluator": {**cloud, "vision": False}}, perception={"ocr_backend": "none"})
