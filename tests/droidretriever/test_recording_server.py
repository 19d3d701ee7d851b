"""The shipped recording server (a test double) checks requests as vLLM would and answers as scripted."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator

import httpx
import pytest
from PIL import Image

from droidretriever.testing import Answer, RecordingOpenAIServer, ServedModel

SCHEMA = {"type": "object", "required": ["complete", "page_type", "risk_category"], "properties": {
    "complete": {"type": "boolean"}, "page_type": {"enum": ["details", "home"]},
    "risk_category": {"anyOf": [{"enum": ["login"]}, {"type": "null"}]},
    "items": {"type": "array", "items": {"type": "string"}}}}


def png(width: int, height: int) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "white").save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def chat(server: RecordingOpenAIServer, **body: object) -> httpx.Response:
    payload = {"model": "vl", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 64, **body}
    return httpx.post(f"{server.base_url}/chat/completions", json=payload, timeout=5)


@pytest.fixture
def server() -> Iterator[RecordingOpenAIServer]:
    with RecordingOpenAIServer([ServedModel("vl", vision=True, max_pixels=200_704),
                                ServedModel("text"), ServedModel("whisper", transcription=True)]) as running:
        yield running


def test_valid_json_is_built_from_the_requests_own_schema(server: RecordingOpenAIServer) -> None:
    answer = chat(server, response_format={"type": "json_schema", "json_schema": {"name": "V", "schema": SCHEMA}})
    body = answer.json()
    assert json.loads(body["choices"][0]["message"]["content"]) == {
        "complete": False, "page_type": "details", "risk_category": None, "items": []}
    assert body["choices"][0]["finish_reason"] == "stop" and body["usage"]["prompt_tokens"] > 0
    assert server.problems == []


def test_requests_off_vllms_shape_are_refused_and_logged(server: RecordingOpenAIServer) -> None:
    image = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": png(56, 56)}},
                                         {"type": "text", "text": "what is it?"}]}
    assert chat(server, model="nope").status_code == 404
    assert chat(server, model="text", messages=[image]).status_code == 400  # a text-only model
    assert chat(server, guided_json=SCHEMA).status_code == 400  # removed from vLLM
    assert chat(server, messages=[image, image]).status_code == 400  # --limit-mm-per-prompt image=1
    assert chat(server, max_tokens=40_000).status_code == 400  # over --max-model-len
    problems = " | ".join(server.problems)
    for said in ("does not exist", "not a multimodal model", "guided_json", "At most 1 image",
                 "maximum context length"):
        assert said in problems


def test_images_are_decoded_and_priced_at_the_models_max_pixels(server: RecordingOpenAIServer) -> None:
    image = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": png(1080, 2340)}},
                                         {"type": "text", "text": "what is it?"}]}
    assert chat(server, messages=[image]).status_code == 200
    (recorded,) = server.requests
    assert len(recorded.images) == 1 and recorded.image_tokens == 230 and recorded.text_tokens > 0


@pytest.mark.parametrize(("answer", "status", "finish"), [
    (Answer.SERVER_ERROR, 500, None), (Answer.CLIENT_ERROR, 400, None), (Answer.CUT_OFF, 200, "length"),
    (Answer.EMPTY_JSON, 200, "stop"), (Answer.INVALID_JSON, 200, "stop")])
def test_scripted_faults(server: RecordingOpenAIServer, answer: Answer, status: int, finish: str | None) -> None:
    server.script("vl", answer)
    response = chat(server)
    assert response.status_code == status
    if finish is not None:
        assert response.json()["choices"][0]["finish_reason"] == finish
    assert server.requests[-1].answer == answer.value


def test_a_hang_outlasts_the_clients_patience(server: RecordingOpenAIServer) -> None:
    server.script("vl", Answer.HANG)
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(f"{server.base_url}/chat/completions", timeout=0.3,
                   json={"model": "vl", "messages": [{"role": "user", "content": "hi"}]})


def test_models_and_transcriptions(server: RecordingOpenAIServer) -> None:
    listed = httpx.get(f"{server.base_url}/models", timeout=5).json()
    assert [m["id"] for m in listed["data"]] == ["vl", "text", "whisper"]
    server.script("whisper", "is a big mac cheaper")
    heard = httpx.post(f"{server.base_url}/audio/transcriptions", data={"model": "whisper"},
                       files={"file": ("q.wav", b"RIFF....", "audio/wav")}, timeout=5)
    assert heard.json() == {"text": "is a big mac cheaper"}
