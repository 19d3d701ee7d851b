"""Is each configured role's model usable? Checked once, before a run, not discovered per step.

For a chat role (decomposer, navigator, evaluator, synthesizer):

1. ``GET /v1/models``: the server answers, accepts the API key, and serves the
   configured model name (vLLM answers 404 to any other name unless started
   with ``--served-model-name``);
2. the role's ``max_tokens`` plus its prompt budget (:func:`prompt_budget`: its
   template, the input its settings allow, an image at ``max_pixels``) fit the
   ``max_model_len`` the server lists for the model (vLLM lists it per model);
   otherwise every such request would be refused with HTTP 400 mid-run;
3. a tiny structured request through the role's own client: the answer is JSON
   fitting a ``response_format`` ``json_schema`` (guided decoding works);
4. with ``vision`` on, the same with a small image: the model takes images.

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
from pathlib import Path

import httpx
from PIL import Image
from pydantic import BaseModel, ConfigDict

from core.config import LLMEndpoint, Settings
from core.text import mask_url
from inference.asr import HttpTranscriber
from inference.errors import (
    LLMError,
    LLMOutputError,
    LLMRequestError,
    LLMUnavailable,
    TranscriberUnavailableError,
    TranscriptionError,
)
from inference.llm.client import DEFAULT_MAX_TOKENS, INPUT_SETTINGS, ChatMessage, LLMClient
from inference.llm.meter import describe_failure
from inference.perception.tokens import count_tokens

__all__ = [
    "ALL_ROLES", "ProbeResult", "ProbeStatus", "check_roles", "probe_role", "probe_roles", "prompt_budget",
]

ALL_ROLES = ("decomposer", "navigator", "evaluator", "synthesizer", "transcriber")
_PROBE_S = 30.0  # at most this per request of a probe (a cold server compiles its first schema)
_PROMPTS = Path(__file__).resolve().parent.parent / "prompts"
# Prompt tokens no setting bounds, allowed for on top of a template: the question, the action
# history (a sub-task's steps, labels clipped) and, for the decomposer, a farm phone's
# installed apps (34 apps list in about 600 tokens).
_FREE_INPUT = {"decomposer": 1200, "navigator": 400, "evaluator": 400, "synthesizer": 300}


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


def probe_role(role: str, endpoint: LLMEndpoint, *, transport: httpx.BaseTransport | None = None,
               prompt_tokens: int | None = None) -> ProbeResult:
    """Probe one role's endpoint (see the module doc); never raises for what it finds.

    ``prompt_tokens``: the role's prompt budget (:func:`prompt_budget`), checked with
    ``max_tokens`` against the served ``max_model_len``; None skips that check.
    """
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
    names, context = served
    found = found.model_copy(update={"served": names, "passed": ("served",)})
    if role == "transcriber":
        return _probe_transcription(found, endpoint, transport)
    if context is not None and prompt_tokens is not None:
        found = _check_context(found, endpoint, env, context, prompt_tokens)
        if not found.usable:
            return found
    return _probe_chat(found, endpoint, env)


def probe_roles(settings: Settings, roles: Iterable[str] = ALL_ROLES) -> tuple[ProbeResult, ...]:
    """Probe every role in ``roles`` (absent ones are reported as such)."""
    return tuple(probe_role(role, getattr(settings.llm, role), prompt_tokens=prompt_budget(settings, role))
                 for role in roles)


def prompt_budget(settings: Settings, role: str) -> int | None:
    """The most prompt tokens one of ``role``'s requests carries, as far as settings bound it.

    Its template (counted as written, so a little over), the input its settings allow
    (the synthesizer's ``budgets.synthesis_input_tokens``, a screen's
    ``perception.description_token_budget``), an allowance for what no setting bounds
    (the question, the action history, the installed apps) and, with ``vision`` on, an
    image at the role's ``max_pixels``. None for the transcriber.
    """
    if role not in _FREE_INPUT:
        return None
    endpoint: LLMEndpoint = getattr(settings.llm, role)
    template = count_tokens((_PROMPTS / f"{role}.j2").read_text(encoding="utf-8"))
    bounded = {"synthesizer": settings.budgets.synthesis_input_tokens,
               "navigator": settings.perception.description_token_budget,
               "evaluator": settings.perception.description_token_budget}.get(role, 0)
    image = endpoint.max_pixels // (28 * 28) if endpoint.vision and role in ("navigator", "evaluator") else 0
    return template + bounded + _FREE_INPUT[role] + image


def _check_context(found: ProbeResult, endpoint: LLMEndpoint, env: str, context: int,
                   prompt_tokens: int) -> ProbeResult:
    """``max_tokens`` plus the prompt budget against the served ``max_model_len``."""
    max_tokens = endpoint.max_tokens or DEFAULT_MAX_TOKENS.get(found.role, 1024)
    need = max_tokens + prompt_tokens
    if need > context:
        room = context - prompt_tokens
        lower = f"lower {env}MAX_TOKENS to at most {room}, or " if room > 0 else ""
        return found.model_copy(update={
            "status": ProbeStatus.REFUSED,
            "detail": f"max_tokens {max_tokens} + a prompt of up to {prompt_tokens} tokens = {need} > the "
                      f"server's max_model_len {context}: such requests would be refused (HTTP 400)",
            "fix": f"{lower}shorten the input ({INPUT_SETTINGS.get(found.role, 'the prompt')}), or start "
                   f"vLLM with --max-model-len {need} or more"})
    retry = "" if need + max_tokens <= context else (
        f"; a cut-off answer's retry ({2 * max_tokens} tokens) would not fit")
    return found.model_copy(update={
        "passed": (*found.passed, "context"),
        "detail": f"max_tokens {max_tokens} + prompt up to {prompt_tokens} of max_model_len {context}{retry}"})


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


def _served_models(found: ProbeResult, endpoint: LLMEndpoint, env: str, transport: httpx.BaseTransport | None
                   ) -> tuple[tuple[str, ...], int | None] | ProbeResult:
    """The served model names and the configured model's ``max_model_len`` (None when not listed)."""
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
        listed = response.json()["data"]
        served = tuple(str(m["id"]) for m in listed)
        contexts = {str(m["id"]): m.get("max_model_len") for m in listed}
    except (ValueError, KeyError, TypeError, AttributeError):
        return found.model_copy(update={
            "status": ProbeStatus.REFUSED, "detail": f"{shown} is not an OpenAI-compatible model list",
            "fix": f"point {env}BASE_URL at an OpenAI-compatible server (vLLM: http://host:8000/v1)"})
    if endpoint.model not in served:
        names = ", ".join(served) or "nothing"
        return found.model_copy(update={
            "status": ProbeStatus.REFUSED, "served": served,
            "detail": f"the server serves {names}, not {endpoint.model!r}",
            "fix": f"set {env}MODEL to one of: {names}; or start vLLM with --served-model-name {endpoint.model}"})
    context = contexts.get(endpoint.model)
    return served, context if isinstance(context, int) and context > 0 else None


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
