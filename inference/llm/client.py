"""OpenAI-compatible chat client for the four model roles (LLM1-LLM4).

One :class:`LLMClient` per role, built from that role's :class:`LLMEndpoint`
by :func:`client_for`, which returns ``None`` when the role has no model: the
caller then uses its rule-based fallback, nothing is faked here.

Structured answers use ``response_format`` ``json_schema`` (vLLM turns it into
guided decoding) and are validated by pydantic. A bad answer gets exactly one
repair round that shows the model its validation error; a second bad answer
raises :class:`LLMOutputError`. An answer cut off at ``max_tokens``
(``finish_reason: length``) is asked again once with twice the limit, then
raises :class:`LLMCutOffError`.

Every call has one deadline, derived from the tokens it asks for: at least
the role's ``timeout_s``, and at least the time ``max_tokens`` take at the
role's stated ``tokens_per_s``. A request that follows an answer (the cut-off
retry at twice the limit, the repair round) moves the deadline to give it the
time its own limit needs; the retry of a dropped connection or a 5xx fits in
the deadline as it stands. The caller's ``deadline_s`` (the model time its
sub-task or run has left) caps all of it. Transport faults are translated
once, here: timeouts -> :class:`LLMTimeout`, refused / dropped connections,
5xx and 429 -> :class:`LLMUnavailable`, a prompt too long for the served
context -> :class:`LLMContextError`, other 4xx -> :class:`LLMRequestError` (a
configuration error). Each request becomes a :class:`ModelCall` with its
tokens (estimated locally when the server reports none, and for requests that
failed), on the reply or on the error; one slower than the role's
``slow_call_s`` beyond its tokens' own time is counted ``slow``.
"""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Any, Generic, Literal, TypeVar

import httpx
import openai
from pydantic import BaseModel, ConfigDict, ValidationError

from core.config import LLMEndpoint, Settings
from core.errors import ConfigError
from core.models import CallOutcome, ModelCall, TokenUsage
from core.text import mask_url
from inference.errors import (
    LLMContextError,
    LLMCutOffError,
    LLMError,
    LLMOutputError,
    LLMRequestError,
    LLMTimeout,
    LLMUnavailable,
)
from inference.llm.images import fit_image
from inference.perception.tokens import count_tokens

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "ChatMessage",
    "JsonCheck",
    "LLMClient",
    "LLMReply",
    "Role",
    "client_for",
]

T = TypeVar("T")
U = TypeVar("U")
M = TypeVar("M", bound=BaseModel)

# A semantic check the schema cannot express (e.g. "the element id exists on this
# screen"): returns an error message for the repair round, or None when fine.
JsonCheck = Callable[[M], str | None]

_FENCE_RE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)
_MAX_LIMIT = 32768
_RETRY_PAUSE_S = 0.2
_MESSAGE_OVERHEAD = 4  # tokens a chat template adds per message (role markers)
# vLLM's words for a prompt plus max_tokens over --max-model-len (several versions' wordings).
_CONTEXT_RE = re.compile(r"context length|max_model_len|context window|prompt is too long", re.IGNORECASE)
# Where each role's input is bounded, for the fix of a prompt too long for the served context.
INPUT_SETTINGS: dict[str, str] = {
    "decomposer": "the question (and the installed apps listed with it)",
    "navigator": "DROIDRETRIEVER_PERCEPTION__DESCRIPTION_TOKEN_BUDGET",
    "evaluator": "DROIDRETRIEVER_PERCEPTION__DESCRIPTION_TOKEN_BUDGET",
    "synthesizer": "DROIDRETRIEVER_BUDGETS__SYNTHESIS_INPUT_TOKENS",
}


class Role(StrEnum):
    """The model roles of DroidRetriever, each with its own endpoint in settings."""

    DECOMPOSER = "decomposer"  # LLM1
    NAVIGATOR = "navigator"  # LLM2
    EVALUATOR = "evaluator"  # LLM3
    SYNTHESIZER = "synthesizer"  # LLM4


# Completion limits when a role's max_tokens is not set: a plan or a verdict is a
# small JSON object; a report with a table and citations runs to thousands.
DEFAULT_MAX_TOKENS: dict[str, int] = {
    Role.DECOMPOSER: 512,
    Role.NAVIGATOR: 256,
    Role.EVALUATOR: 384,
    Role.SYNTHESIZER: 4096,
}


class ChatMessage(BaseModel):
    """One chat turn. ``image_png`` is sent only to endpoints marked ``vision``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["system", "user", "assistant"]
    content: str
    image_png: bytes | None = None


class LLMReply(BaseModel, Generic[T]):
    """A validated answer with what it cost: every request (all rounds), wall time, model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: T
    usage: TokenUsage
    calls: tuple[ModelCall, ...] = ()
    latency_ms: float
    model: str
    role: str
    repaired: bool = False  # True when the repair round was needed
    prompt_version: str = ""  # set by the role that rendered the prompt

    def converted(self, value: U, *, prompt_version: str) -> LLMReply[U]:
        """The same call's costs carried by what a role made of the answer."""
        return LLMReply[U](
            value=value, usage=self.usage, calls=self.calls, latency_ms=self.latency_ms,
            model=self.model, role=self.role, repaired=self.repaired, prompt_version=prompt_version,
        )


class LLMClient:
    """Chat with one role's OpenAI-compatible endpoint (vLLM, or any such server)."""

    def __init__(
        self,
        endpoint: LLMEndpoint,
        *,
        role: str,
        http_client: httpx.Client | None = None,
        max_retries: int = 1,
    ) -> None:
        if not endpoint.configured or endpoint.base_url is None:
            raise ConfigError(
                f"the {role} role has no model configured",
                hint=f"set DROIDRETRIEVER_LLM__{role.upper()}__BASE_URL and __MODEL, "
                "or use client_for(), which returns None for an absent role",
            )
        self.endpoint = endpoint
        self.role = role
        self.model = endpoint.model
        self.max_tokens = endpoint.max_tokens or DEFAULT_MAX_TOKENS.get(role, 1024)
        # Retries of a dropped connection or a 5xx happen here, inside the call's deadline;
        # the SDK's own retries are off, so nothing retries the same request twice over.
        self.max_retries = max_retries
        self._openai = openai.OpenAI(
            base_url=str(endpoint.base_url),
            api_key=endpoint.api_key.get_secret_value(),
            timeout=endpoint.timeout_s,
            max_retries=0,
            http_client=http_client,  # type: ignore[arg-type]  # the SDK accepts httpx and httpx2
        )

    @property
    def name(self) -> str:
        """How traces and reports name this policy: ``llm:<model>``."""
        return f"llm:{self.model}"

    def request_s(self, limit: int) -> float:
        """The time one request with ``limit`` completion tokens is given: ``timeout_s`` at least,
        and at least what the tokens take at the role's stated ``tokens_per_s``."""
        return max(self.endpoint.timeout_s, limit / self.endpoint.tokens_per_s)

    def is_slow(self, latency_s: float, completion: int) -> bool:
        """Whether a request took ``slow_call_s`` longer than its completion tokens need."""
        endpoint = self.endpoint
        return latency_s > endpoint.slow_call_s + completion / endpoint.tokens_per_s

    def chat_json(
        self,
        messages: Sequence[ChatMessage],
        schema: type[M],
        *,
        check: JsonCheck[M] | None = None,
        deadline_s: float | None = None,
    ) -> LLMReply[M]:
        """Ask for a JSON object fitting ``schema``; one repair round, then :class:`LLMOutputError`."""
        response_format = {
            "type": "json_schema",
            # strict stays off: OpenAI's strict mode rejects optional fields, and
            # vLLM applies the schema as guided decoding either way.
            "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema()},
        }
        call = _Call(self, deadline_s)
        conversation = [self._to_openai(m) for m in messages]
        error = ""
        for round_no in (1, 2):
            content = call.complete(conversation, response_format)
            value, error = _parse_json(content, schema, check)
            if value is not None:
                return call.reply(value, repaired=round_no == 2)
            call.mark_last(CallOutcome.INVALID)
            conversation += [
                {"role": "assistant", "content": content},
                {
                    "role": "user",
                    "content": (
                        f"Your answer is not valid for the required JSON schema "
                        f"{schema.__name__}: {error}. Reply again with only the corrected "
                        "JSON object, nothing else."
                    ),
                },
            ]
        raise call.fail(LLMOutputError(
            f"the {self.role} model {self.model} answered twice without a valid "
            f"{schema.__name__}: {error}",
            hint="check that the server supports response_format json_schema (vLLM guided "
            "decoding), or configure a stronger model for this role",
        ))

    def chat_text(self, messages: Sequence[ChatMessage], *, deadline_s: float | None = None) -> LLMReply[str]:
        """Ask for free text (the synthesizer's Markdown report)."""
        call = _Call(self, deadline_s)
        content = call.complete([self._to_openai(m) for m in messages], None)
        if not content.strip():
            call.mark_last(CallOutcome.INVALID)
            raise call.fail(LLMOutputError(
                f"the {self.role} model {self.model} returned an empty answer",
                hint="raise max_tokens for this role or check the server's logs",
            ))
        return call.reply(content)

    def close(self) -> None:
        """Release the HTTP connection pool."""
        self._openai.close()

    def _to_openai(self, message: ChatMessage) -> dict[str, Any]:
        if message.image_png is None or not self.endpoint.vision:
            # A text-only endpoint never gets the screenshot: it could not read it.
            return {"role": message.role, "content": message.content}
        fitted = fit_image(message.image_png, self.endpoint.max_pixels)
        data_url = "data:image/png;base64," + base64.b64encode(fitted.png).decode("ascii")
        # The image first, then the text, as Qwen-VL's own examples order them.
        return {
            "role": message.role,
            "content": [
                {"type": "image_url", "image_url": {"url": data_url}},
                {"type": "text", "text": message.content},
            ],
            "_image_tokens": fitted.tokens,  # removed before sending; counted per request
        }


class _Call:
    """One model call: its deadline, its requests as :class:`ModelCall` s, its reply or error."""

    def __init__(self, client: LLMClient, deadline_s: float | None) -> None:
        self.client = client
        self.started = time.perf_counter()
        # The caller's cap (the model time its sub-task or run has left), never moved.
        self.cap = None if deadline_s is None else self.started + max(0.0, deadline_s)
        self.deadline = self._capped(self.started + client.request_s(client.max_tokens))
        self.calls: list[ModelCall] = []

    @property
    def limit_s(self) -> float:
        """The call's deadline as seconds from its start."""
        return round(self.deadline - self.started, 3)

    def _capped(self, deadline: float) -> float:
        return deadline if self.cap is None else min(deadline, self.cap)

    def allow(self, limit: int) -> None:
        """A request following an answer gets the time its own ``limit`` needs (within the cap)."""
        self.deadline = self._capped(max(self.deadline, time.perf_counter() + self.client.request_s(limit)))

    @property
    def where(self) -> str:
        c = self.client
        return f"the {c.role} model {c.model} at {mask_url(str(c.endpoint.base_url))}"

    def complete(self, payload: list[dict[str, Any]], response_format: dict[str, Any] | None) -> str:
        """The answer's content; a cut-off answer is asked again once with twice the limit."""
        limit = self.client.max_tokens
        for retried in (False, True):
            if self.calls:  # a repair round or the cut-off retry: its own tokens' time
                self.allow(limit)
            content, finish = self._request(payload, response_format, limit)
            if finish != "length":
                return content
            self.mark_last(CallOutcome.CUT_OFF)
            if retried or limit >= _MAX_LIMIT:
                break
            limit = min(_MAX_LIMIT, limit * 2)
        raise self.fail(LLMCutOffError(
            f"{self.where} was cut off at {limit} tokens (finish_reason length), also after a retry "
            "with a higher limit",
            hint=f"raise DROIDRETRIEVER_LLM__{self.client.role.upper()}__MAX_TOKENS, or ask the model "
            "for a shorter answer",
        ))

    def reply(self, value: T, *, repaired: bool = False) -> LLMReply[T]:
        usage = TokenUsage()
        for call in self.calls:
            usage = usage + call.usage
        return LLMReply[T](
            value=value, usage=usage, calls=tuple(self.calls),
            latency_ms=(time.perf_counter() - self.started) * 1000, model=self.client.model,
            role=self.client.role, repaired=repaired,
        )

    def fail(self, error: LLMError) -> LLMError:
        """``error`` carrying this call's requests, for the caller to raise."""
        error.calls = tuple(self.calls)
        return error

    def mark_last(self, outcome: CallOutcome) -> None:
        """The last request brought no usable answer after all (bad JSON, cut off, empty)."""
        last = self.calls[-1]
        usage = last.usage.model_copy(update={"failed": 1})
        self.calls[-1] = last.model_copy(update={"outcome": outcome, "usage": usage})

    def _request(self, payload: list[dict[str, Any]], response_format: dict[str, Any] | None,
                 limit: int) -> tuple[str, str]:
        """One answer (content, finish_reason), retrying a dropped connection or 5xx in time."""
        client = self.client
        messages = [{k: v for k, v in m.items() if not k.startswith("_")} for m in payload]
        image_tokens = sum(int(m.get("_image_tokens", 0)) for m in payload)
        extra: dict[str, Any] = {} if response_format is None else {"response_format": response_format}
        for attempt in range(client.max_retries + 1):
            remaining = self.deadline - time.perf_counter()
            if remaining <= 0:
                raise self.fail(self._timeout())
            tick = time.perf_counter()
            try:
                response = client._openai.with_options(timeout=remaining).chat.completions.create(
                    model=client.model,
                    messages=messages,  # type: ignore[arg-type]  # plain dicts in the SDK's shape
                    temperature=client.endpoint.temperature,
                    max_tokens=limit,
                    **extra,
                )
            except openai.APITimeoutError as exc:
                self._record_failure(messages, image_tokens, limit, tick, CallOutcome.TIMEOUT)
                raise self.fail(self._timeout()) from exc
            except openai.APIConnectionError as exc:
                self._record_failure(messages, image_tokens, limit, tick, CallOutcome.UNAVAILABLE)
                if self._may_retry(attempt):
                    continue
                raise self.fail(LLMUnavailable(
                    f"cannot reach {self.where}: {exc}",
                    hint="start the model server (vLLM) or fix base_url for this role",
                )) from exc
            except openai.APIStatusError as exc:
                transient = exc.status_code >= 500 or exc.status_code == 429
                outcome = CallOutcome.UNAVAILABLE if transient else CallOutcome.REFUSED
                self._record_failure(messages, image_tokens, limit, tick, outcome)
                if transient and self._may_retry(attempt):
                    continue
                raise self.fail(_status_error(self.where, client, exc)) from exc
            content, finish = self._record_answer(response, messages, image_tokens, limit, tick)
            return content, finish
        raise self.fail(self._timeout())  # pragma: no cover  (the loop always returns or raises)

    def _may_retry(self, attempt: int) -> bool:
        if attempt >= self.client.max_retries or self.deadline - time.perf_counter() <= 2 * _RETRY_PAUSE_S:
            return False
        time.sleep(_RETRY_PAUSE_S)
        return True

    def _timeout(self) -> LLMTimeout:
        role = self.client.role.upper()
        capped = self.cap is not None and self.deadline >= self.cap
        hint = ("the model time left to the sub-task or run ended the call: see budgets.model_s_per_subtask "
                "and budgets.model_s_per_run" if capped else
                f"the server may be overloaded: check it, or raise DROIDRETRIEVER_LLM__{role}__TIMEOUT_S "
                f"(or __TOKENS_PER_S, the speed the deadline assumes)")
        left = ", the model time its sub-task or run had left" if capped else ""
        return LLMTimeout(f"{self.where} did not answer within {self.limit_s:g} s{left}", hint=hint)

    def _record_failure(self, messages: list[dict[str, Any]], image_tokens: int, limit: int,
                        tick: float, outcome: CallOutcome) -> None:
        prompt = _estimate_prompt(messages) + image_tokens
        latency_s = time.perf_counter() - tick
        slow = int(self.client.is_slow(latency_s, 0))
        self.calls.append(ModelCall(
            role=self.client.role, model=self.client.model, outcome=outcome, estimated=True,
            usage=TokenUsage(prompt=prompt, image=image_tokens, calls=1, failed=1, slow=slow),
            latency_ms=latency_s * 1000, max_tokens=limit,
        ))

    def _record_answer(self, response: Any, messages: list[dict[str, Any]], image_tokens: int,
                       limit: int, tick: float) -> tuple[str, str]:
        choice = response.choices[0] if response.choices else None
        content = (choice.message.content or "") if choice is not None else ""
        finish = (choice.finish_reason or "") if choice is not None else ""
        reported = response.usage
        if reported is not None:
            usage = TokenUsage(prompt=reported.prompt_tokens, completion=reported.completion_tokens,
                               image=image_tokens, calls=1)
        else:
            usage = TokenUsage(prompt=_estimate_prompt(messages) + image_tokens,
                               completion=count_tokens(content), image=image_tokens, calls=1)
        latency_s = time.perf_counter() - tick
        if self.client.is_slow(latency_s, usage.completion):
            usage = usage.model_copy(update={"slow": 1})
        self.calls.append(ModelCall(
            role=self.client.role, model=self.client.model, usage=usage, estimated=reported is None,
            latency_ms=latency_s * 1000, max_tokens=limit,
        ))
        if choice is None:
            self.mark_last(CallOutcome.INVALID)
            raise self.fail(LLMOutputError(f"{self.where} returned no choices", hint="check the server's logs"))
        return content, finish


def _status_error(where: str, client: LLMClient, exc: openai.APIStatusError) -> LLMError:
    if exc.status_code >= 500 or exc.status_code == 429:
        return LLMUnavailable(
            f"{where} answered HTTP {exc.status_code}: {_short(exc.message)}",
            hint="the server is failing or saturated; retry later or check its logs",
        )
    role = client.role.upper()
    if _CONTEXT_RE.search(exc.message):
        return LLMContextError(
            f"{where} refused the request with HTTP {exc.status_code}: the prompt and max_tokens exceed "
            f"the served context ({_short(exc.message)})",
            hint=f"shorten the input ({INPUT_SETTINGS.get(client.role, 'the prompt')}) or lower "
                 f"DROIDRETRIEVER_LLM__{role}__MAX_TOKENS, or raise the server's max_model_len "
                 "(vLLM: --max-model-len); `droidretriever doctor` checks both",
        )
    hint = (f"check DROIDRETRIEVER_LLM__{role}__MODEL against the server's served model names "
            "(`droidretriever doctor` lists them), the API key, and that the server is OpenAI-compatible")
    if client.endpoint.vision and re.search(r"image|multimodal|modalit", exc.message, re.IGNORECASE):
        hint = (f"this model does not take images: set DROIDRETRIEVER_LLM__{role}__VISION=false, or "
                "serve a vision-language model (e.g. Qwen2.5-VL) for this role")
    return LLMRequestError(
        f"{where} refused the request with HTTP {exc.status_code}: {_short(exc.message)}", hint=hint,
    )


def _estimate_prompt(messages: Sequence[dict[str, Any]]) -> int:
    """Prompt tokens of ``messages`` counted here (text parts; images are added by the caller)."""
    total = 0
    for message in messages:
        content = message.get("content", "")
        if isinstance(content, list):
            content = "\n".join(str(p.get("text", "")) for p in content if p.get("type") == "text")
        total += count_tokens(str(content)) + _MESSAGE_OVERHEAD
    return total


def client_for(settings: Settings, role: Role) -> LLMClient | None:
    """The client for ``role``, or ``None`` when settings give it no model."""
    endpoint: LLMEndpoint = getattr(settings.llm, role.value)
    if not endpoint.configured:
        return None
    return LLMClient(endpoint, role=role.value)


def _parse_json(
    content: str, schema: type[M], check: JsonCheck[M] | None
) -> tuple[M | None, str]:
    """The validated value, or None and the error to show the model."""
    fenced = _FENCE_RE.match(content)
    text = fenced.group(1) if fenced else content
    try:
        value = schema.model_validate_json(text)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}"
            for err in exc.errors(include_url=False)[:5]
        ]
        return None, "; ".join(problems)
    if check is not None:
        problem = check(value)
        if problem:
            return None, problem
    return value, ""


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
