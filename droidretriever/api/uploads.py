"""Request size limits, and reading a recording from a request body.

Every request body is limited (``api.max_body_bytes``; recordings
``api.max_audio_bytes``): a declared length over the limit is refused before
anything is read, and a body that keeps coming is cut off at the limit, both
with 413.
"""

from __future__ import annotations

import json

from fastapi import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from droidretriever.api.errors import ApiError

__all__ = ["AUDIO_PATHS", "BodyLimit", "PayloadTooLargeError", "UnsupportedMediaError", "read_audio"]

AUDIO_PATHS = frozenset({"/runs/audio", "/transcripts"})
_AUDIO_TYPES = ("audio/", "application/octet-stream")


class PayloadTooLargeError(ApiError):
    status = 413


class UnsupportedMediaError(ApiError):
    status = 415


class _OverLimitError(Exception):
    pass


class BodyLimit:
    """ASGI middleware: 413 for a body over the limit of its path."""

    def __init__(self, app: ASGIApp, *, max_body_bytes: int, max_audio_bytes: int) -> None:
        self.app = app
        self.max_body = max_body_bytes
        self.max_audio = max_audio_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_audio if scope["path"] in AUDIO_PATHS else self.max_body
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            await _refuse(send, limit)
            return
        seen = 0
        over = False
        refused = False

        async def counted() -> Message:
            nonlocal seen, over
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    over = True
                    raise _OverLimitError
            return message

        async def answered(message: Message) -> None:
            nonlocal refused
            # The app may turn the cut-off body into an error of its own: 413 all the same.
            if not over:
                await send(message)
            elif message["type"] == "http.response.start" and not refused:
                refused = True
                await _refuse(send, limit)

        try:
            await self.app(scope, counted, answered)
        except _OverLimitError:
            if not refused:
                await _refuse(send, limit)


async def _refuse(send: Send, limit: int) -> None:
    body = json.dumps({"error": f"the request body is larger than {limit} bytes",
                       "hint": "send less; limits are api.max_body_bytes / api.max_audio_bytes"})
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body.encode()})


async def read_audio(request: Request, limit: int) -> bytes:
    """The recording in the request body (WAV for the offline engine); 413 / 415 / 422 when not."""
    kind = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if not kind.startswith(_AUDIO_TYPES):
        raise UnsupportedMediaError(f"a recording must be sent as audio/wav, not {kind or 'nothing'}",
                               hint="send the WAV file as the body with Content-Type: audio/wav")
    audio = await request.body()
    if len(audio) > limit:
        raise PayloadTooLargeError(f"the recording is larger than {limit} bytes")
    if len(audio) < 44:
        raise ApiError("the recording is empty", hint="record again, or type the question")
    return audio
