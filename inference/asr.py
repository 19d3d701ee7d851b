"""Speech to text for spoken queries: one :class:`Transcriber` protocol, two backends.

- :class:`HttpTranscriber`: an OpenAI-compatible ``POST /v1/audio/transcriptions``
  (vLLM serving Whisper, SenseVoice, or OpenAI itself), from ``settings.llm.transcriber``.
- :class:`PocketsphinxTranscriber`: offline, CPU, the US-English model shipped in
  the ``pocketsphinx`` wheel. Its accuracy is low, and every transcript it makes
  says so (``low_accuracy=True``) so the caller can ask the person to confirm.

:func:`transcriber_for` picks the HTTP backend when an endpoint is configured,
pocketsphinx otherwise; nothing branches on tests. Errors:

    InferenceError                 inference.errors
     +-- TranscriptionError        audio unreadable, or the backend failed
          +-- TranscriberUnavailableError  the endpoint refused, timed out or answered 5xx

(These two live here until ``inference/errors.py`` adopts them.)
"""

from __future__ import annotations

import io
import time
import wave
from typing import Protocol

import httpx
import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from core.config import LLMEndpoint, Settings
from core.text import mask_url
from inference.errors import TranscriberUnavailableError, TranscriptionError

__all__ = [
    "HttpTranscriber",
    "PocketsphinxTranscriber",
    "Transcriber",
    "TranscriberUnavailableError",
    "Transcript",
    "TranscriptionError",
    "transcriber_for",
]

_SPHINX_RATE = 16_000


class Transcript(BaseModel):
    """What was heard, by which backend, and whether to trust it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    backend: str  # "http:<model>" or "pocketsphinx:en-us"
    low_accuracy: bool = False
    language: str | None = None
    latency_ms: float = 0.0


class Transcriber(Protocol):
    """Turns a recording (WAV, or any format the HTTP backend accepts) into a transcript."""

    @property
    def name(self) -> str: ...

    def transcribe(self, audio: bytes, *, filename: str = "query.wav",
                   language: str | None = None) -> Transcript: ...


class _TranscriptionBody(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str
    language: str | None = None


class HttpTranscriber:
    """OpenAI-compatible ``/audio/transcriptions`` client (multipart upload, JSON answer)."""

    def __init__(self, endpoint: LLMEndpoint, *, transport: httpx.BaseTransport | None = None) -> None:
        if endpoint.base_url is None or not endpoint.model:
            raise TranscriptionError(
                "the transcriber endpoint has no base_url or model",
                hint="set DROIDRETRIEVER_LLM__TRANSCRIBER__BASE_URL and __MODEL, or leave both "
                     "empty to use the offline pocketsphinx backend")
        self.endpoint = endpoint
        self.url = str(endpoint.base_url).rstrip("/") + "/audio/transcriptions"
        self.shown_url = mask_url(self.url)  # for messages: a key in the user part is never shown
        self._client = httpx.Client(timeout=endpoint.timeout_s, transport=transport)

    @property
    def name(self) -> str:
        return f"http:{self.endpoint.model}"

    def transcribe(self, audio: bytes, *, filename: str = "query.wav",
                   language: str | None = None) -> Transcript:
        """Upload ``audio`` and return the text the server heard."""
        data = {"model": self.endpoint.model, "response_format": "json",
                "temperature": str(self.endpoint.temperature)}
        if language:
            data["language"] = language
        headers = {"Authorization": f"Bearer {self.endpoint.api_key.get_secret_value()}"}
        started = time.perf_counter()
        try:
            response = self._client.post(self.url, data=data, headers=headers,
                                         files={"file": (filename, audio, "application/octet-stream")})
        except httpx.TimeoutException as exc:
            raise TranscriberUnavailableError(
                f"{self.shown_url} did not answer within {self.endpoint.timeout_s:g}s",
                hint="raise llm.transcriber.timeout_s or check the server's load") from exc
        except httpx.TransportError as exc:
            raise TranscriberUnavailableError(f"cannot reach {self.shown_url}: {exc}",
                                         hint="check that the transcription server is running") from exc
        if response.status_code == 429 or response.status_code >= 500:
            raise TranscriberUnavailableError(
                f"{self.shown_url} answered HTTP {response.status_code}: {response.text[:200]}",
                hint="the server is overloaded or failing; retry later or check its logs")
        if response.status_code >= 400:
            raise TranscriptionError(
                f"{self.shown_url} rejected the audio (HTTP {response.status_code}): {response.text[:200]}",
                hint="check the model name and that the audio format is one the server accepts")
        try:
            body = _TranscriptionBody.model_validate_json(response.content)
        except ValidationError as exc:
            raise TranscriptionError(f"{self.shown_url} answered without a 'text' field",
                                     hint="is this an OpenAI-compatible transcription endpoint?") from exc
        return Transcript(text=body.text.strip(), backend=self.name, low_accuracy=False,
                          language=body.language or language,
                          latency_ms=(time.perf_counter() - started) * 1000)

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._client.close()


def _read_wav_16k_mono(audio: bytes) -> bytes:
    """16-bit mono PCM at 16 kHz, as pocketsphinx's model expects; resampled if needed."""
    try:
        with wave.open(io.BytesIO(audio)) as wav:
            channels, width, rate = wav.getnchannels(), wav.getsampwidth(), wav.getframerate()
            frames = wav.readframes(wav.getnframes())
    except (wave.Error, EOFError) as exc:
        raise TranscriptionError(
            "the offline transcriber reads WAV files only and this is not one",
            hint="convert the recording to WAV (16 kHz mono is best), or configure "
                 "llm.transcriber for an endpoint that accepts other formats") from exc
    if width != 2:
        raise TranscriptionError(f"the WAV has {8 * width}-bit samples; 16-bit PCM is needed",
                                 hint="re-export the recording as 16-bit PCM WAV")
    samples = np.frombuffer(frames, dtype="<i2").astype(np.float64)
    if channels > 1:
        samples = samples.reshape(-1, channels).mean(axis=1)
    if rate != _SPHINX_RATE and samples.size:
        # Resample in the frequency domain: dropping the bins above 8 kHz is the
        # low-pass filter that keeps downsampling from aliasing.
        length = int(samples.size * _SPHINX_RATE / rate)
        spectrum = np.fft.rfft(samples)[: length // 2 + 1]
        samples = np.fft.irfft(spectrum, length) * (length / samples.size)
    return np.clip(samples, -32768, 32767).astype("<i2").tobytes()


class PocketsphinxTranscriber:
    """Offline English speech recognition; low accuracy, and labelled so."""

    def __init__(self) -> None:
        from pocketsphinx import Decoder  # heavy import (model load) only when used

        self._decoder = Decoder(samprate=_SPHINX_RATE, loglevel="FATAL")

    @property
    def name(self) -> str:
        return "pocketsphinx:en-us"

    def transcribe(self, audio: bytes, *, filename: str = "query.wav",
                   language: str | None = None) -> Transcript:
        """Decode a WAV recording; ``language`` other than English is refused, not guessed."""
        if language and not language.lower().startswith("en"):
            raise TranscriptionError(
                f"the offline transcriber only knows English, not {language!r}",
                hint="configure llm.transcriber (e.g. Whisper on vLLM) for other languages")
        pcm = _read_wav_16k_mono(audio)
        started = time.perf_counter()
        self._decoder.start_utt()
        self._decoder.process_raw(pcm, full_utt=True)
        self._decoder.end_utt()
        hypothesis = self._decoder.hyp()
        text = hypothesis.hypstr.strip() if hypothesis is not None else ""
        return Transcript(text=text, backend=self.name, low_accuracy=True, language="en",
                          latency_ms=(time.perf_counter() - started) * 1000)


def transcriber_for(settings: Settings) -> Transcriber:
    """The HTTP backend when ``llm.transcriber`` is configured, else offline pocketsphinx."""
    endpoint = settings.llm.transcriber
    if endpoint.configured:
        return HttpTranscriber(endpoint)
    return PocketsphinxTranscriber()
