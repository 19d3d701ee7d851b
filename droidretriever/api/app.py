"""The FastAPI app: routes, error answers, security headers, body limits, optional CORS.

    create_app(settings) -> FastAPI     (``python -m droidretriever.api`` serves it with uvicorn)

Every route needs credentials (:mod:`droidretriever.api.auth`), the OpenAPI
schema included; only ``/login`` answers without them (it shows a form).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from core.config import Settings
from core.errors import DroidRetrieverError
from droidretriever import __version__
from droidretriever.api import control, devices, events, evidence, maps, pages, runs, subscriptions
from droidretriever.api.auth import CSRF_HEADER
from droidretriever.api.context import ApiContext, open_context
from droidretriever.api.errors import status_for
from droidretriever.api.uploads import BodyLimit

__all__ = ["create_app"]

log = logging.getLogger(__name__)

_CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data: blob:; connect-src 'self'; frame-src 'self'; object-src 'none'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'self'")
_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"SAMEORIGIN"),
]


class SecurityHeaders:
    """ASGI middleware: no sniffing, no referrer, same-origin framing, a CSP unless the route set one."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {name.lower() for name, _ in headers}
                headers += [h for h in _HEADERS if h[0] not in names]
                if b"content-security-policy" not in names:
                    headers.append((b"content-security-policy", _CSP.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


def _error_answer(request: Request, exc: Exception) -> JSONResponse:
    if not isinstance(exc, DroidRetrieverError):  # pragma: no cover - registered for those only
        raise exc
    code = status_for(exc)
    if code >= 500:
        log.warning("%s %s: %s: %s", request.method, request.url.path, type(exc).__name__, exc)
    headers = {"www-authenticate": "Bearer"} if code == 401 else None
    return JSONResponse({"error": str(exc), "hint": exc.hint}, status_code=code, headers=headers)


def _invalid_answer(request: Request, exc: Exception) -> JSONResponse:
    """422 naming each bad field, without echoing what was sent (it may be typed text)."""
    problems = exc.errors() if isinstance(exc, RequestValidationError | ValidationError) else []
    parts = ["/".join(str(p) for p in e.get("loc", ())) + f": {e.get('msg', 'invalid')}"
             for e in problems[:5]]
    return JSONResponse({"error": "invalid request: " + "; ".join(parts),
                         "hint": "see /openapi.json for what this route takes"}, status_code=422)


def create_app(settings: Settings, *, context: ApiContext | None = None) -> FastAPI:
    """The API and dashboard for ``settings`` (``context``: clients built already, e.g. in tests)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.context = context or open_context(settings)
        try:
            yield
        finally:
            app.state.context.close()
            await app.state.context.aredis.aclose()

    app = FastAPI(title="DroidRetriever", version=__version__, lifespan=lifespan,
                  docs_url=None, redoc_url=None, openapi_url=None,
                  description="Ask questions answered inside phone apps; watch and steer the "
                              "farm's phones. Every route needs the bearer token "
                              "(`droidretriever api token`) or a dashboard session.")
    if context is not None:
        app.state.context = context
    for module in (runs, evidence, events, control, devices, maps, subscriptions, pages):
        app.include_router(module.router)
    app.add_exception_handler(DroidRetrieverError, _error_answer)
    app.add_exception_handler(RequestValidationError, _invalid_answer)
    # A value each field allows but the whole does not (a cron that is not one, two schedules).
    app.add_exception_handler(ValidationError, _invalid_answer)
    if settings.api.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(settings.api.cors_origins),
                           allow_methods=["GET", "POST", "DELETE"],
                           allow_headers=["authorization", "content-type", CSRF_HEADER])
    app.add_middleware(SecurityHeaders)
    app.add_middleware(BodyLimit, max_body_bytes=settings.api.max_body_bytes,
                       max_audio_bytes=settings.api.max_audio_bytes)
    _add_bearer_scheme(app)
    return app


def _add_bearer_scheme(app: FastAPI) -> None:
    """Say in the schema that every operation takes the bearer token."""
    original = app.openapi

    def openapi() -> dict[str, object]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = original()
        components = schema.setdefault("components", {})
        components.setdefault("securitySchemes", {})["bearer"] = {"type": "http", "scheme": "bearer"}
        schema["security"] = [{"bearer": []}]
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
