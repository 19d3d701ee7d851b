"""Is each configured role's model usable? Checked once, before a run, not discovered per step.

For a chat role (decomposer, navigator, evaluator, synthesizer):

1. ``GET /v1/models``: the server answers, accepts the API key, and serves the
   configured model name (vLLM answers 404 to any other name unless started
   with ``--served-model-name``);
2. a tiny structured request through the role's own client: the answer is JSON
   fitting a ``response_format`` ``json_schema`` (guided decoding works);
3. with ``vision`` on, the same with a small image: the model takes images.

For the transcriber: ``GET /v1/models`` and a short silent WAV through
``/v1/audio/transcriptions``. A 4xx, a model the server does not serve, or
an answer that ignores the schema is a configuration error (``refused``); no
answer at all is ``unreachable``. :func:`check_roles` raises on either, with
one line naming the role and the fix; ``droidretriever doctor`` prints
:func:`probe_roles` as a table.
"""

from __future__ import annotations

import io
import wave
from collections.abc import Iterable
from enum import StrEnum

import httpx
from PIL import Image
from pydantic import BaseModel, ConfigDict

from droidretriever.config import LLMEndpoint, Settings
from droidretriever.text import mask_url
from inference.asr import HttpTranscriber
from inference.errors import (
    LLMError,
    LLMOutputError,
    LLMRequestError,
    LLMUnavailable,
    TranscriberUnavailableError,
    TranscriptionError,
)
from inference.llm.client import ChatMessage, LLMClient
from inference.llm.meter import describe_failure

__all__ = ["ALL_ROLES", "ProbeResult", "ProbeStatus", "check_roles", "probe_role", "probe_roles"]

ALL_ROLES = ("decomposer", "navigator", "evaluator", "synthesizer", "transcriber")
_PROBE_S = 30.0  # at most this per request of a probe (a cold server compiles its first schema)


class ProbeStatus(StrEnum):
    OK = "ok"
    ABSENT = "absent"  # no model configured: the rules decide, and reports say so
    REFUSED = "refused"  # a configuration error: the run would stop on it
    UNREACHABLE = "unreachable"  # no answer: the server is down, or base_url is wrong


class ProbeResult(BaseModel):
    """What the probe of one role found."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: str
    status: ProbeStatus
    base_url: str = ""
    model: str = ""
    served: tuple[str, ...] = ()  # the model names the server serves
    passed: tuple[str, ...] = ()  # checks passed: served, json_schema, image, transcription
    detail: str = ""
    fix: str = ""

    @property
    def usable(self) -> bool:
        return self.status in (ProbeStatus.OK, ProbeStatus.ABSENT)


class _ProbeAnswer(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    ok: bool


def probe_role(role: str, endpoint: LLMEndpoint, *, transport: httpx.BaseTransport | None = None) -> ProbeResult:
    """Probe one role's endpoint (see the module doc); never raises for what it finds."""
    if not endpoint.configured or endpoint.base_url is None:
        return ProbeResult(role=role, status=ProbeStatus.ABSENT,
                           detail="no model configured: the rules decide" if role != "transcriber"
                           else "no server configured: offline pocketsphinx (English, low accuracy)")
    base = str(endpoint.base_url).rstrip("/")
    found = ProbeResult(role=role, status=ProbeStatus.OK, base_url=mask_url(base), model=endpoint.model)
    env = f"DROIDRETRIEVER_LLM__{role.upper()}__"
    served = _served_models(found, endpoint, env, transport)
    if isinstance(served, ProbeResult):
        return served
    found = found.model_copy(update={"served": served, "passed": ("served",)})
    if role == "transcriber":
        return _probe_transcription(found, endpoint, transport)
    return _probe_chat(found, endpoint, env)


def probe_roles(settings: Settings, roles: Iterable[str] = ALL_ROLES) -> tuple[ProbeResult, ...]:
    """Probe every role in ``roles`` (absent ones are reported as such)."""
    return tuple(probe_role(role, getattr(settings.llm, role)) for role in roles)


def check_roles(settings: Settings, roles: Iterable[str] = ALL_ROLES) -> tuple[ProbeResult, ...]:
    """Probe the configured ``roles``; raise on the first one a run could not use.

    Raises :class:`LLMRequestError` for a configuration error and :class:`LLMUnavailable`
    for a server that does not answer, each one line with the fix.
    """
    results = probe_roles(settings, roles)
    failed = [r for r in results if not r.usable]
    if not failed:
        return results
    first = failed[0]
    more = f" (and {len(failed) - 1} more role(s): run `droidretriever doctor`)" if len(failed) > 1 else ""
    message = f"the {first.role}'s model {first.model!r} at {first.base_url} is not usable: {first.detail}{more}"
    if first.status is ProbeStatus.UNREACHABLE:
        raise LLMUnavailable(message, hint=first.fix)
    raise LLMRequestError(message, hint=first.fix)


def _served_models(found: ProbeResult, endpoint: LLMEndpoint, env: str,
                   transport: httpx.BaseTransport | None) -> tuple[str, ...] | ProbeResult:
    headers = {"Authorization": f"Bearer {endpoint.api_key.get_secret_value()}"}
    url = str(endpoint.base_url).rstrip("/") + "/models"
    shown = mask_url(url)  # a key in the URL's user part is never shown
    try:
        with httpx.Client(timeout=min(endpoint.timeout_s, _PROBE_S), transport=transport) as client:
            response = client.get(url, headers=headers)
    except httpx.HTTPError as exc:
        return found.model_copy(update={
            "status": ProbeStatus.UNREACHABLE, "detail": f"no answer from {shown} ({type(exc).__name__})",
            "fix": f"start the model server (docs/models.md) or fix {env}BASE_URL"})
    if response.status_code in (401, 403):
        return found.model_copy(update={
            "status": ProbeStatus.REFUSED, "detail": f"the server refused the API key (HTTP {response.status_code})",
            "fix": f"set {env}API_KEY to the key the server was started with (vLLM: --api-key)"})
    if response.status_code == 404:
        return found.model_copy(update={
            "status": ProbeStatus.REFUSED, "detail": f"{shown} does not exist (HTTP 404)",
            "fix": f"{env}BASE_URL must end in /v1 (vLLM: http://host:8000/v1)"})
    if response.status_code >= 400:
        status = ProbeStatus.UNREACHABLE if response.status_code >= 500 else ProbeStatus.REFUSED
        return found.model_copy(update={
            "status": status, "detail": f"{shown} answered HTTP {response.status_code}",
            "fix": "check the server's log"})
    try:
        served = tuple(str(m["id"]) for m in response.json()["data"])
    except (ValueError, KeyError, TypeError):
        return found.model_copy(update={
            "status": ProbeStatus.REFUSED, "detail": f"{shown} is not an OpenAI-compatible model list",
            "fix": f"point {env}BASE_URL at an OpenAI-compatible server (vLLM: http://host:8000/v1)"})
    if endpoint.model not in served:
        names = ", ".join(served) or "nothing"
        return found.model_copy(update={
            "status": ProbeStatus.REFUSED, "served": served,
            "detail": f"the server serves {names}, not {endpoint.model!r}",
            "fix": f"set {env}MODEL to one of: {names}; or start vLLM with --served-model-name {endpoint.model}"})
    return served


def _probe_chat(found: ProbeResult, endpoint: LLMEndpoint, env: str) -> ProbeResult:
    client = LLMClient(endpoint, role=found.role, max_retries=0)
    ask = 'Reply with the JSON object {"ok": true} and nothing else.'
    passed = list(found.passed)
    checks: list[tuple[str, list[ChatMessage]]] = [("json_schema", [ChatMessage(role="user", content=ask)])]
    if endpoint.vision:
        checks.append(("image", [ChatMessage(role="user", content=ask, image_png=_probe_png())]))
    try:
        for name, messages in checks:
            client.chat_json(messages, _ProbeAnswer, deadline_s=min(endpoint.timeout_s, _PROBE_S))
            passed.append(name)
    except LLMRequestError as exc:
        return found.model_copy(update={"status": ProbeStatus.REFUSED, "passed": tuple(passed),
                                        "detail": describe_failure(exc), "fix": exc.hint})
    except LLMOutputError as exc:
        return found.model_copy(update={
            "status": ProbeStatus.REFUSED, "passed": tuple(passed),
            "detail": f"the answer ignored response_format json_schema ({describe_failure(exc)})",
            "fix": "serve the model with vLLM (structured outputs are on by default; docs/models.md), "
                   f"or raise {env}MAX_TOKENS if it was cut off"})
    except LLMError as exc:
        return found.model_copy(update={"status": ProbeStatus.UNREACHABLE, "passed": tuple(passed),
                                        "detail": describe_failure(exc), "fix": exc.hint})
    finally:
        client.close()
    return found.model_copy(update={"passed": tuple(passed)})


def _probe_transcription(found: ProbeResult, endpoint: LLMEndpoint,
                         transport: httpx.BaseTransport | None) -> ProbeResult:
    transcriber = HttpTranscriber(endpoint, transport=transport)
    try:
        transcriber.transcribe(_silence_wav(), filename="probe.wav", language="en")
    except TranscriberUnavailableError as exc:
        return found.model_copy(update={"status": ProbeStatus.UNREACHABLE, "detail": describe_failure(exc),
                                        "fix": exc.hint})
    except TranscriptionError as exc:
        return found.model_copy(update={"status": ProbeStatus.REFUSED, "detail": describe_failure(exc),
                                        "fix": exc.hint})
    finally:
        transcriber.close()
    return found.model_copy(update={"passed": (*found.passed, "transcription")})


def _probe_png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (56, 56), (220, 40, 40)).save(buffer, format="PNG")
    return buffer.getvalue()


def _silence_wav(seconds: float = 0.3, rate: int = 16_000) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(b"\x00\x00" * int(seconds * rate))
    return buffer.getvalue()
