"""A recording OpenAI-compatible server, shaped like vLLM's: a test double, named as one.

A real HTTP server on a free loopback port, serving what DroidRetriever uses
of vLLM's OpenAI-compatible API:

- ``GET /v1/models``: the served model names (``--served-model-name``);
- ``POST /v1/chat/completions``: each request body is checked against the shape
  vLLM documents (model served; messages with text parts and ``image_url``
  data URLs, images only for a vision model and at most ``limit_images`` of
  them, as ``--limit-mm-per-prompt``; ``response_format`` ``json_schema`` with a
  name and a schema; no removed ``guided_*`` fields; ``max_tokens`` within the
  context length) and refused with HTTP 400 (404 for an unknown model) naming
  the problem, as vLLM would;
- ``POST /v1/audio/transcriptions``: multipart with ``file`` and ``model``.

Every request is logged (:class:`RecordedRequest`: body, text and image tokens,
the decoded images, problems); model listings, which carry no tokens, are only
counted (``listings``). Answers are scripted per model: a queue of
:class:`Answer` kinds or literal contents, then a default kind. ``VALID``
builds JSON from the request's own schema (or, for free text, a report citing
one line of each ``<interface>`` it was given); ``INVALID_JSON``, ``EMPTY_JSON``,
``CLIENT_ERROR`` (400), ``SERVER_ERROR`` (500), ``HANG`` (no answer until the
client gives up), ``CUT_OFF`` (``finish_reason: length``) and ``UNCITED``
(text without a citation) provoke the faults a real server can produce.
Usage is reported like vLLM: prompt tokens = text tokens (cl100k here) + one
token per 28x28 patch of each image at the model's ``max_pixels``.
"""

from __future__ import annotations

import base64
import io
import json
import re
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from email.parser import BytesParser
from email.policy import HTTP
from enum import StrEnum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from PIL import Image

from droidretriever.testing.loopback import send_json, start_loopback, stop_loopback
from inference.llm import estimate_image_tokens
from inference.perception import count_tokens

__all__ = ["Answer", "RecordedRequest", "RecordingOpenAIServer", "ServedModel", "build_from_schema"]

QWEN_MAX_PIXELS = 12_845_056  # Qwen2.5-VL's processor default (16384 patches of 28x28)
_REMOVED = ("guided_json", "guided_regex", "guided_choice", "guided_grammar")
_ROLES = frozenset({"system", "user", "assistant", "tool"})
_INTERFACE = re.compile(r'<interface id="([^"]+)"[^>]*>\n(.*?)\n</interface>', re.DOTALL)
_MESSAGE_OVERHEAD = 4


class Answer(StrEnum):
    """What the server answers to one request."""

    VALID = "valid"  # JSON built from the request's schema; a cited report for free text
    INVALID_JSON = "invalid_json"
    EMPTY_JSON = "empty_json"  # "{}": fits a schema with nothing required
    CLIENT_ERROR = "client_error"  # HTTP 400
    SERVER_ERROR = "server_error"  # HTTP 500
    HANG = "hang"  # no answer until the client gives up (or the server stops)
    CUT_OFF = "cut_off"  # half an answer, finish_reason "length"
    UNCITED = "uncited"  # free text with no citation at all


@dataclass(frozen=True)
class ServedModel:
    """One model the server serves, as ``vllm serve`` would be started for it."""

    name: str
    vision: bool = False
    max_pixels: int = QWEN_MAX_PIXELS  # --mm-processor-kwargs '{"max_pixels": ...}'
    limit_images: int = 1  # --limit-mm-per-prompt '{"image": 1}'
    max_model_len: int = 32_768  # --max-model-len
    transcription: bool = False  # a speech model: /v1/audio/transcriptions only


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it, and what it made of it."""

    path: str
    model: str
    body: dict[str, Any]
    text_tokens: int = 0
    image_tokens: int = 0
    images: tuple[bytes, ...] = ()  # decoded image bytes, as the model would see them
    problems: tuple[str, ...] = ()  # where the request broke vLLM's documented shape
    answer: str = ""  # the Answer kind served ("" when refused for its shape)
    status: int = 200
    completion_tokens: int = 0  # of the answer served

    @property
    def text(self) -> str:
        """Every text part of the request's messages, joined."""
        parts: list[str] = []
        for message in self.body.get("messages", []):
            content = message.get("content", "")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                parts += [str(p.get("text", "")) for p in content if isinstance(p, dict)]
        return "\n".join(parts)


@dataclass
class RecordingOpenAIServer:
    """Context manager: ``with RecordingOpenAIServer([ServedModel("m")]) as server: server.base_url``."""

    models: Sequence[ServedModel]
    api_key: str | None = None  # vLLM's --api-key: requests without it get 401
    requests: list[RecordedRequest] = field(default_factory=list)
    listings: int = 0  # GET /v1/models answered (no tokens: not in ``requests``)
    _queues: dict[str, deque[Answer | str]] = field(default_factory=dict)
    _defaults: dict[str, Answer] = field(default_factory=dict)
    _responders: dict[str, Callable[[RecordedRequest], Answer | str]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: threading.Event = field(default_factory=threading.Event)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    # ------------------------------------------------------------------ scripting

    def script(self, model: str, *answers: Answer | str) -> None:
        """Queue answers for ``model``: an :class:`Answer` kind, or a literal (valid) content."""
        with self._lock:
            self._queues.setdefault(model, deque()).extend(answers)

    def answer_by_default(self, model: str, answer: Answer) -> None:
        """What ``model`` answers once its queue is empty (``VALID`` unless set)."""
        with self._lock:
            self._defaults[model] = answer

    def respond_with(self, model: str, responder: Callable[[RecordedRequest], Answer | str]) -> None:
        """Let ``responder`` answer each request to ``model`` once its queue is empty.

        A benchmark's scripted role, for instance: it reads the request (the screen the
        navigator is shown) and answers as a person's path through the app would.
        """
        with self._lock:
            self._responders[model] = responder

    def pending(self, model: str) -> int:
        """Scripted answers not yet served for ``model``."""
        with self._lock:
            return len(self._queues.get(model, ()))

    def requests_for(self, model: str, path: str = "/v1/chat/completions") -> list[RecordedRequest]:
        """The logged requests to ``model`` on ``path``."""
        with self._lock:
            return [r for r in self.requests if r.model == model and r.path == path]

    @property
    def problems(self) -> list[str]:
        """Every shape problem of every request (a test asserts this is empty)."""
        with self._lock:
            return [p for r in self.requests for p in r.problems]

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("the server is not running: use it as a context manager")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> RecordingOpenAIServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return  # keep test output clean

            def do_GET(self) -> None:
                if not server._authorized(self.headers.get("Authorization", "")):
                    self._send(401, _error("invalid API key", "AuthenticationError", 401))
                elif self.path.rstrip("/") == "/v1/models":
                    with server._lock:
                        server.listings += 1
                    self._send(200, {"object": "list", "data": [
                        {"id": m.name, "object": "model", "owned_by": "vllm", "max_model_len": m.max_model_len}
                        for m in server.models]})
                else:
                    self._send(404, _error(f"no route {self.path}", "NotFoundError", 404))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                if not server._authorized(self.headers.get("Authorization", "")):
                    self._send(401, _error("invalid API key", "AuthenticationError", 401))
                    return
                path = self.path.rstrip("/")
                if path == "/v1/chat/completions":
                    status, payload = server._chat(raw, self._client_gone)
                elif path == "/v1/audio/transcriptions":
                    status, payload = server._transcribe(raw, self.headers.get("Content-Type", ""))
                else:
                    status, payload = 404, _error(f"no route {self.path}", "NotFoundError", 404)
                if status:
                    self._send(status, payload)

            def _client_gone(self, wait_s: float) -> bool:
                return server._stopping.wait(wait_s)

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                send_json(self, status, payload)

        self._server, self._thread = start_loopback(Handler)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stopping.set()
        stop_loopback(self._server, self._thread)

    # ------------------------------------------------------------------ routes

    def _authorized(self, header: str) -> bool:
        return self.api_key is None or header == f"Bearer {self.api_key}"

    def _served(self, name: str) -> ServedModel | None:
        return next((m for m in self.models if m.name == name), None)

    def _chat(self, raw: bytes, wait: Any) -> tuple[int, dict[str, Any]]:
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._log(RecordedRequest("/v1/chat/completions", "", {}, problems=("body is not JSON",), status=400))
            return 400, _error("the body is not JSON", "BadRequestError", 400)
        if not isinstance(body, dict):
            body = {"_": body}
        name = str(body.get("model", ""))
        served = self._served(name)
        if served is None or served.transcription:
            problem = f"The model `{name}` does not exist."
            self._log(RecordedRequest("/v1/chat/completions", name, body, problems=(problem,), status=404))
            return 404, _error(problem, "NotFoundError", 404)
        problems, text_tokens, images = _check_chat(body, served)
        image_tokens = sum(estimate_image_tokens(w, h, served.max_pixels) for _, w, h in images)
        record = RecordedRequest("/v1/chat/completions", name, body, text_tokens, image_tokens,
                                 tuple(data for data, _, _ in images), tuple(problems))
        if problems:
            self._log(replace(record, status=400))
            return 400, _error("; ".join(problems), "BadRequestError", 400)
        try:
            answer = self._next(name, record)
        except Exception as exc:  # a scripted responder's bug: a 500 the client sees, not a dead socket
            self._log(replace(record, problems=(f"the responder failed: {exc!r}",), status=500))
            return 500, _error(f"the scripted responder failed: {exc!r}", "InternalServerError", 500)
        logged = replace(record, answer=str(answer if isinstance(answer, Answer) else Answer.VALID))
        if answer is Answer.HANG:
            self._log(logged)
            wait(600.0)  # until the server stops; the client's deadline ends the request first
            return 0, {}
        status, payload = self._respond(answer, body, text_tokens + image_tokens)
        self._log(replace(logged, status=status,
                          completion_tokens=int(payload.get("usage", {}).get("completion_tokens", 0))))
        return status, payload

    def _respond(self, answer: Answer | str, body: dict[str, Any], prompt_tokens: int) -> tuple[int, dict[str, Any]]:
        if answer is Answer.CLIENT_ERROR:
            return 400, _error("scripted client error", "BadRequestError", 400)
        if answer is Answer.SERVER_ERROR:
            return 500, _error("scripted server error", "InternalServerError", 500)
        content = answer if isinstance(answer, str) and not isinstance(answer, Answer) else ""
        finish = "stop"
        if not content:
            content = {
                Answer.INVALID_JSON: "Sure! Here is what I found: {not json",
                Answer.EMPTY_JSON: "{}",
                Answer.UNCITED: "The cheapest option is the first one. Prices vary by app and time.",
            }.get(answer, "") if isinstance(answer, Answer) else ""
        if not content:
            content = _valid_content(body)
        limit = int(body.get("max_tokens") or body.get("max_completion_tokens") or 16)
        completion = count_tokens(content)
        if answer is Answer.CUT_OFF or completion > limit:
            content = content[: max(1, len(content) // 2)] if answer is Answer.CUT_OFF else content
            finish, completion = "length", limit
        return 200, {
            "id": f"chatcmpl-rec-{len(self.requests)}", "object": "chat.completion", "created": 0,
            "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion,
                      "total_tokens": prompt_tokens + completion},
        }

    def _transcribe(self, raw: bytes, content_type: str) -> tuple[int, dict[str, Any]]:
        path = "/v1/audio/transcriptions"
        if not content_type.startswith("multipart/form-data"):
            self._log(RecordedRequest(path, "", {}, problems=("not multipart/form-data",), status=400))
            return 400, _error("send the audio as multipart/form-data", "BadRequestError", 400)
        parsed = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
        fields: dict[str, bytes] = {}
        for part in parsed.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            if isinstance(name, str):
                fields[name] = payload if isinstance(payload, bytes) else b""
        name = fields.get("model", b"").decode()
        served = self._served(name)
        body = {"model": name, "file_bytes": len(fields.get("file", b""))}
        if served is None or not served.transcription:
            problem = f"The model `{name}` does not exist."
            self._log(RecordedRequest(path, name, body, problems=(problem,), status=404))
            return 404, _error(problem, "NotFoundError", 404)
        problems = () if fields.get("file") else ("no file part",)
        answer = self._next(name) if not problems else Answer.CLIENT_ERROR
        self._log(RecordedRequest(path, name, body, problems=problems, answer=str(answer)))
        if problems or answer is Answer.CLIENT_ERROR:
            return 400, _error("; ".join(problems) or "scripted client error", "BadRequestError", 400)
        if answer is Answer.SERVER_ERROR:
            return 500, _error("scripted server error", "InternalServerError", 500)
        text = answer if isinstance(answer, str) and not isinstance(answer, Answer) else "hello"
        return 200, {"text": text}

    def _next(self, model: str, request: RecordedRequest | None = None) -> Answer | str:
        with self._lock:
            queue = self._queues.get(model)
            if queue:
                return queue.popleft()
            responder = self._responders.get(model)
            default = self._defaults.get(model, Answer.VALID)
        return responder(request) if responder is not None and request is not None else default

    def _log(self, record: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(record)


def _error(message: str, kind: str, code: int) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _check_chat(body: dict[str, Any], served: ServedModel) -> tuple[list[str], int, list[tuple[bytes, int, int]]]:
    """Shape problems of a chat request, its text tokens, and its decoded images (bytes, w, h)."""
    problems = [f"{key} is not supported any more: use response_format" for key in _REMOVED if key in body]
    messages = body.get("messages")
    images: list[tuple[bytes, int, int]] = []
    tokens = 0
    if not isinstance(messages, list) or not messages:
        return [*problems, "messages must be a non-empty list"], 0, images
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in _ROLES:
            problems.append(f"messages[{index}] needs a role of {sorted(_ROLES)}")
            continue
        content = message.get("content")
        tokens += _MESSAGE_OVERHEAD
        if isinstance(content, str):
            tokens += count_tokens(content)
            continue
        if not isinstance(content, list):
            problems.append(f"messages[{index}].content must be a string or a list of parts")
            continue
        for part in content:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text" and isinstance(part.get("text"), str):
                tokens += count_tokens(part["text"])
            elif kind == "image_url" and isinstance(part.get("image_url"), dict):
                decoded = _decode_image(str(part["image_url"].get("url", "")))
                if decoded is None:
                    problems.append(f"messages[{index}]: image_url.url is not a base64 image data URL")
                else:
                    images.append(decoded)
            else:
                problems.append(f"messages[{index}]: unknown content part {part!r:.80}")
    if images and not served.vision:
        problems.append(f"The model `{served.name}` is not a multimodal model: it takes no image input")
    elif len(images) > served.limit_images:
        problems.append(f"At most {served.limit_images} image(s) may be provided in one prompt.")
    problems += _check_options(body, served, tokens + sum(
        estimate_image_tokens(w, h, served.max_pixels) for _, w, h in images))
    return problems, tokens, images


def _check_options(body: dict[str, Any], served: ServedModel, prompt_tokens: int) -> list[str]:
    problems: list[str] = []
    fmt = body.get("response_format")
    if fmt is not None:
        if not isinstance(fmt, dict) or fmt.get("type") not in ("text", "json_object", "json_schema"):
            problems.append("response_format.type must be text, json_object or json_schema")
        elif fmt["type"] == "json_schema":
            spec = fmt.get("json_schema")
            if not isinstance(spec, dict) or not isinstance(spec.get("name"), str) or not isinstance(
                    spec.get("schema"), dict):
                problems.append("response_format.json_schema needs a name and a schema object")
    limit = body.get("max_tokens", body.get("max_completion_tokens"))
    if limit is not None and (not isinstance(limit, int) or limit < 1):
        problems.append("max_tokens must be a positive integer")
    elif isinstance(limit, int) and prompt_tokens + limit > served.max_model_len:
        problems.append(f"This model's maximum context length is {served.max_model_len} tokens. However, you "
                        f"requested {prompt_tokens + limit} tokens ({prompt_tokens} in the messages, {limit} in "
                        "the completion).")
    temperature = body.get("temperature")
    if temperature is not None and not (isinstance(temperature, int | float) and 0 <= temperature <= 2):
        problems.append("temperature must be between 0 and 2")
    return problems


def _decode_image(url: str) -> tuple[bytes, int, int] | None:
    match = re.match(r"data:image/[a-z]+;base64,(.*)$", url, re.DOTALL)
    if match is None:
        return None
    try:
        data = base64.b64decode(match.group(1), validate=True)
        with Image.open(io.BytesIO(data)) as image:
            return data, image.width, image.height
    except (ValueError, OSError):
        return None


def _valid_content(body: dict[str, Any]) -> str:
    """A valid answer: JSON from the request's schema, or a report citing each interface it got."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = fmt["json_schema"]["schema"]
        return json.dumps(build_from_schema(schema, schema), ensure_ascii=False)
    text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []) if isinstance(m, dict))
    lines = []
    for capture_id, block in _INTERFACE.findall(text):
        first = next((line.strip() for line in block.splitlines() if line.strip()), "")
        if first:
            lines.append(f"- {first} [{capture_id}({first})]")
    return "\n".join(lines) or "OK"


def build_from_schema(node: Any, root: dict[str, Any]) -> Any:
    """The simplest instance of a JSON schema: required and optional properties, first enum values."""
    if not isinstance(node, dict):
        return None
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        return build_from_schema(root.get("$defs", {}).get(name, {}), root)
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return node["enum"][0]
    if "default" in node:
        return node["default"]
    for key in ("anyOf", "oneOf"):
        if key in node:
            options: Iterable[Any] = node[key]
            nullable = any(isinstance(o, dict) and o.get("type") == "null" for o in options)
            if nullable:
                return None
            return build_from_schema(next(iter(node[key])), root)
    kind = node.get("type")
    if kind == "object":
        return {name: build_from_schema(prop, root) for name, prop in node.get("properties", {}).items()}
    if kind == "array":
        return []
    return {"string": "", "boolean": False, "integer": 0, "number": 0}.get(str(kind))
