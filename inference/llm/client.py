"""OpenAI-compatible chat client for the four model roles (LLM1-LLM4).

One :class:`LLMClient` per role, built from that role's :class:`LLMEndpoint`
by :func:`client_for`, which returns ``None`` when the role has no model: the
caller then uses its rule-based fallback, nothing is faked here.

Structured answers use ``response_format`` ``json_schema`` (vLLM turns it into
guided decoding) and are validated by pydantic. A bad answer gets exactly one
repair round that shows the model its validation error; a second bad answer
raises :class:`LLMOutputError`. Transport faults are translated once, here:
timeouts -> :class:`LLMTimeout`, refused / dropped connections, 5xx and 429 ->
:class:`LLMUnavailable`, other 4xx -> :class:`LLMRequestError`.
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

from droidretriever.config import LLMEndpoint, Settings
from droidretriever.errors import ConfigError
from droidretriever.models import TokenUsage
from inference.errors import LLMOutputError, LLMRequestError, LLMTimeout, LLMUnavailable

__all__ = [
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


class Role(StrEnum):
    """The model roles of DroidRetriever, each with its own endpoint in settings."""

    DECOMPOSER = "decomposer"  # LLM1
    NAVIGATOR = "navigator"  # LLM2
    EVALUATOR = "evaluator"  # LLM3
    SYNTHESIZER = "synthesizer"  # LLM4


class ChatMessage(BaseModel):
    """One chat turn. ``image_png`` is sent only to endpoints marked ``vision``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["system", "user", "assistant"]
    content: str
    image_png: bytes | None = None


class LLMReply(BaseModel, Generic[T]):
    """A validated answer with what it cost: tokens (all rounds), wall time, model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    value: T
    usage: TokenUsage
    latency_ms: float
    model: str
    role: str
    repaired: bool = False  # True when the repair round was needed
    prompt_version: str = ""  # set by the role that rendered the prompt

    def converted(self, value: U, *, prompt_version: str) -> LLMReply[U]:
        """The same call's costs carried by what a role made of the answer."""
        return LLMReply[U](
            value=value, usage=self.usage, latency_ms=self.latency_ms, model=self.model,
            role=self.role, repaired=self.repaired, prompt_version=prompt_version,
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
        # The SDK's own bounded retry covers transient connection faults; nothing
        # above this client retries the same call again.
        self._openai = openai.OpenAI(
            base_url=str(endpoint.base_url),
            api_key=endpoint.api_key.get_secret_value(),
            timeout=endpoint.timeout_s,
            max_retries=max_retries,
            http_client=http_client,  # type: ignore[arg-type]  # the SDK accepts httpx and httpx2
        )

    @property
    def name(self) -> str:
        """How traces and reports name this policy: ``llm:<model>``."""
        return f"llm:{self.model}"

    def chat_json(
        self,
        messages: Sequence[ChatMessage],
        schema: type[M],
        *,
        check: JsonCheck[M] | None = None,
    ) -> LLMReply[M]:
        """Ask for a JSON object fitting ``schema``; one repair round, then :class:`LLMOutputError`."""
        response_format = {
            "type": "json_schema",
            # strict stays off: OpenAI's strict mode rejects optional fields, and
            # vLLM applies the schema as guided decoding either way.
            "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema()},
        }
        started = time.perf_counter()
        conversation = list(messages)
        usage = TokenUsage()
        error = ""
        for round_no in (1, 2):
            content, round_usage = self._complete(conversation, response_format)
            usage = usage + round_usage
            value, error = _parse_json(content, schema, check)
            if value is not None:
                return LLMReply[M](
                    value=value,
                    usage=usage,
                    latency_ms=(time.perf_counter() - started) * 1000,
                    model=self.model,
                    role=self.role,
                    repaired=round_no == 2,
                )
            conversation += [
                ChatMessage(role="assistant", content=content),
                ChatMessage(
                    role="user",
                    content=(
                        f"Your answer is not valid for the required JSON schema "
                        f"{schema.__name__}: {error}. Reply again with only the corrected "
                        "JSON object, nothing else."
                    ),
                ),
            ]
        raise LLMOutputError(
            f"the {self.role} model {self.model} answered twice without a valid "
            f"{schema.__name__}: {error}",
            hint="check that the server supports response_format json_schema (vLLM guided "
            "decoding), or configure a stronger model for this role",
        )

    def chat_text(self, messages: Sequence[ChatMessage]) -> LLMReply[str]:
        """Ask for free text (the synthesizer's Markdown report)."""
        started = time.perf_counter()
        content, usage = self._complete(list(messages), None)
        if not content.strip():
            raise LLMOutputError(
                f"the {self.role} model {self.model} returned an empty answer",
                hint="raise max_tokens for this role or check the server's logs",
            )
        return LLMReply[str](
            value=content,
            usage=usage,
            latency_ms=(time.perf_counter() - started) * 1000,
            model=self.model,
            role=self.role,
        )

    def close(self) -> None:
        """Release the HTTP connection pool."""
        self._openai.close()

    # ------------------------------------------------------------------ transport

    def _complete(
        self, messages: Sequence[ChatMessage], response_format: dict[str, Any] | None
    ) -> tuple[str, TokenUsage]:
        payload = [self._to_openai(m) for m in messages]
        extra: dict[str, Any] = {}
        if response_format is not None:
            extra["response_format"] = response_format
        where = f"the {self.role} model {self.model} at {self.endpoint.base_url}"
        try:
            response = self._openai.chat.completions.create(
                model=self.model,
                messages=payload,  # type: ignore[arg-type]  # plain dicts in the SDK's shape
                temperature=self.endpoint.temperature,
                max_tokens=self.endpoint.max_tokens,
                **extra,
            )
        except openai.APITimeoutError as exc:
            raise LLMTimeout(
                f"{where} did not answer within {self.endpoint.timeout_s:g} s",
                hint="the server may be overloaded: raise timeout_s for this role, or check it",
            ) from exc
        except openai.APIConnectionError as exc:
            raise LLMUnavailable(
                f"cannot reach {where}: {exc}",
                hint="start the model server (vLLM) or fix base_url for this role",
            ) from exc
        except openai.APIStatusError as exc:
            if exc.status_code >= 500 or exc.status_code == 429:
                raise LLMUnavailable(
                    f"{where} answered HTTP {exc.status_code}: {_short(exc.message)}",
                    hint="the server is failing or saturated; retry later or check its logs",
                ) from exc
            raise LLMRequestError(
                f"{where} refused the request with HTTP {exc.status_code}: {_short(exc.message)}",
                hint="check the model name, the API key and that the server is OpenAI-compatible",
            ) from exc
        if not response.choices:
            raise LLMOutputError(f"{where} returned no choices", hint="check the server's logs")
        content = response.choices[0].message.content or ""
        usage = TokenUsage(calls=1)
        if response.usage is not None:
            usage = TokenUsage(
                prompt=response.usage.prompt_tokens,
                completion=response.usage.completion_tokens,
                calls=1,
            )
        return content, usage

    def _to_openai(self, message: ChatMessage) -> dict[str, Any]:
        if message.image_png is None or not self.endpoint.vision:
            # A text-only endpoint never gets the screenshot: it could not read it.
            return {"role": message.role, "content": message.content}
        data_url = "data:image/png;base64," + base64.b64encode(message.image_png).decode("ascii")
        return {
            "role": message.role,
            "content": [
                {"type": "text", "text": message.content},
                {"type": "image_url", "image_url": {"url": data_url}},
            ],
        }


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
