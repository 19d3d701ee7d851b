"""The local stack's Prefect server: Prefect's own app, with nothing but its health and UI open.

Prefect 3.8.8's basic auth (``PREFECT_SERVER_API_AUTH_STRING``) guards its REST API
under ``/api`` except ``GET /api/health`` and ``GET /api/ready``, and not at all the
root app's schema and docs (``/openapi.json``, ``/docs``, ``/redoc``): those answer
anyone. ``python -m deploy.local.prefect_server`` serves the app ``prefect server
start`` serves (same settings, same in-process services, read from the ``PREFECT_*``
environment) behind :class:`OnlyHealthOpen`, which answers 401 on those paths to a
request without the auth string. Open without it, and why:

    GET /api/health             the stack's health check (deploy.local.builtin.PrefectService)
    the UI's files              /, its scripts and styles, /ui-settings: the page that asks
                                for the auth string; they hold no data (every call the UI
                                makes goes to /api, which refuses without it)
"""

from __future__ import annotations

import base64
import hmac

from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["CLOSED_PATHS", "OnlyHealthOpen", "main"]

# What Prefect leaves open besides the health check and the UI (exact paths, as Prefect matches).
CLOSED_PATHS = frozenset({"/api/ready", "/openapi.json", "/docs", "/docs/oauth2-redirect",
                          "/redoc"})


class OnlyHealthOpen:
    """ASGI middleware: 401 on :data:`CLOSED_PATHS` unless the request carries ``auth_string``."""

    def __init__(self, app: ASGIApp, auth_string: str) -> None:
        self.app = app
        self._auth = auth_string.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in CLOSED_PATHS and not self._carries_auth(scope):
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"), (b"www-authenticate", b"Basic")]})
            await send({"type": "http.response.body", "body": b'{"exception_message":"Unauthorized"}'})
            return
        await self.app(scope, receive, send)

    def _carries_auth(self, scope: Scope) -> bool:
        header = dict(scope["headers"]).get(b"authorization", b"")
        scheme, _, credentials = header.partition(b" ")
        if scheme.lower() != b"basic":
            return False
        try:
            decoded = base64.b64decode(credentials.strip(), validate=True)
        except ValueError:
            return False
        return hmac.compare_digest(decoded, self._auth)


def main() -> None:
    """Serve Prefect's app as ``prefect server start`` does, behind :class:`OnlyHealthOpen`."""
    import prefect
    import uvicorn
    from prefect.server.api.server import create_app
    from prefect.settings import get_current_settings

    settings = get_current_settings().server
    auth = settings.api.auth_string
    if auth is None:
        raise SystemExit("PREFECT_SERVER_API_AUTH_STRING is not set: the stack's Prefect never "
                         "runs without its basic auth (`droidretriever up` sets it)")
    app = OnlyHealthOpen(create_app(final=True), auth.get_secret_value())
    uvicorn.run(app, app_dir=str(prefect.__module_path__.parent), host=settings.api.host,
                port=settings.api.port, timeout_keep_alive=settings.api.keepalive_timeout,
                ws_ping_interval=settings.api.websocket_ping_interval,
                ws_ping_timeout=settings.api.websocket_ping_timeout,
                log_level=settings.logging_level.lower())


if __name__ == "__main__":
    main()
