"""ASR: pocketsphinx on a WAV synthesized with espeak-ng, and the HTTP backend against a local stub."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from pydantic import AnyHttpUrl

from core.config import LLMEndpoint, LLMSettings, load_settings
from inference.asr import (
    HttpTranscriber,
    PocketsphinxTranscriber,
    TranscriberUnavailableError,
    TranscriptionError,
    transcriber_for,
)


def speak(text: str, path: Path) -> bytes:
    binary = shutil.which("espeak-ng")
    if binary is None:
        pytest.fail("espeak-ng is not installed: apt-get install -y espeak-ng (scripts/setup does it)")
    subprocess.run([binary, "-v", "en-us", "-s", "140", "-w", str(path), text], check=True)
    return path.read_bytes()


def test_pocketsphinx_hears_a_synthesized_query_and_says_it_is_rough(tmp_path: Path) -> None:
    audio = speak("one two three four five", tmp_path / "digits.wav")  # 22.05 kHz: resampled
    transcriber = transcriber_for(load_settings(llm=LLMSettings()))
    assert isinstance(transcriber, PocketsphinxTranscriber)
    transcript = transcriber.transcribe(audio)
    assert transcript.low_accuracy and transcript.backend == "pocketsphinx:en-us"
    heard = set(transcript.text.split())
    assert len(heard & {"one", "two", "three", "four", "five"}) >= 3, transcript.text


def test_pocketsphinx_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    transcriber = PocketsphinxTranscriber()
    with pytest.raises(TranscriptionError, match="WAV"):
        transcriber.transcribe(b"ID3\x03 not a wav")
    with pytest.raises(TranscriptionError, match="only knows English"):
        transcriber.transcribe(speak("hello", tmp_path / "h.wav"), language="zh")


class _StubHandler(BaseHTTPRequestHandler):
    """A test double of /v1/audio/transcriptions: answers from ``server.script``, records requests."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        server: _Stub = self.server  # type: ignore[assignment]
        server.requests.append((self.path, self.headers.get("Authorization", ""), body))
        status, payload, delay = server.script.pop(0)
        time.sleep(delay)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        return


class _Stub(ThreadingHTTPServer):
    script: list[tuple[int, bytes, float]]
    requests: list[tuple[str, str, bytes]]


@pytest.fixture
def stub() -> Iterator[_Stub]:
    server = _Stub(("127.0.0.1", 0), _StubHandler)
    server.script, server.requests = [], []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def endpoint(stub: _Stub, timeout_s: float = 5.0) -> LLMEndpoint:
    return LLMEndpoint(base_url=AnyHttpUrl(f"http://127.0.0.1:{stub.server_address[1]}/v1"),
                       model="whisper-large-v3", timeout_s=timeout_s)


def test_http_backend_uploads_and_reads_the_text(stub: _Stub) -> None:
    stub.script.append((200, json.dumps({"text": " Is a Big Mac cheaper on Meituan? ",
                                         "language": "en"}).encode(), 0.0))
    settings = load_settings(llm=LLMSettings(transcriber=endpoint(stub)))
    transcriber = transcriber_for(settings)
    assert isinstance(transcriber, HttpTranscriber)
    transcript = transcriber.transcribe(b"RIFF-fake-wav-bytes", filename="q.wav", language="en")
    transcriber.close()
    assert transcript.text == "Is a Big Mac cheaper on Meituan?"
    assert not transcript.low_accuracy and transcript.backend == "http:whisper-large-v3"
    path, auth, body = stub.requests[0]
    assert path == "/v1/audio/transcriptions" and auth == "Bearer EMPTY"
    assert b'name="model"' in body and b"whisper-large-v3" in body
    assert b'filename="q.wav"' in body and b"RIFF-fake-wav-bytes" in body


@pytest.mark.parametrize(("status", "payload", "delay", "error", "words"), [
    (503, b'{"error": "overloaded"}', 0.0, TranscriberUnavailableError, "HTTP 503"),
    (400, b'{"error": "bad audio"}', 0.0, TranscriptionError, "rejected the audio"),
    (200, b'{"segments": []}', 0.0, TranscriptionError, "without a 'text' field"),
    (200, b'{"text": "late"}', 1.0, TranscriberUnavailableError, "did not answer within"),
])
def test_http_backend_failures_are_translated(stub: _Stub, status: int, payload: bytes, delay: float,
                                              error: type[Exception], words: str) -> None:
    stub.script.append((status, payload, delay))
    transcriber = HttpTranscriber(endpoint(stub, timeout_s=0.3))
    with pytest.raises(error, match=words) as caught:
        transcriber.transcribe(b"audio")
    transcriber.close()
    assert isinstance(caught.value, TranscriptionError)
    assert caught.value.hint


def test_http_backend_unreachable() -> None:
    dead = LLMEndpoint(base_url=AnyHttpUrl("http://127.0.0.1:9/v1"), model="m", timeout_s=1.0)
    transcriber = HttpTranscriber(dead)
    with pytest.raises(TranscriberUnavailableError, match="cannot reach"):
        transcriber.transcribe(b"audio")
    transcriber.close()
