"""Who is calling: a program with the bearer token, or a browser with a short-lived session.

    program   Authorization: Bearer <token>            compared in constant time
    browser   cookie dr_session (HttpOnly, SameSite=Strict, api.session_ttl_s), obtained by
              - a one-time login code (POST /auth/codes with the token; ``droidretriever up`` and
                ``droidretriever api login`` print it as /login?code=..., valid api.login_code_ttl_s)
              - or pasting the token into the /login form (POST /auth/session)

The token never travels in a URL; a login code works once, for two minutes. A
browser's state-changing request must also carry the ``X-DroidRetriever``
header (a cross-site form cannot set it, and without CORS a cross-site script
cannot either) and, when it sends an Origin, our own origin. Sessions and codes
live in Redis as SHA-256 digests only. Each session is one *actor* ("browser
3f2a"): the name the run's events record for what it did, and what a takeover
belongs to.
"""

from __future__ import annotations

import hmac
import secrets
from typing import Literal

from fastapi import Depends, Request, WebSocket
from pydantic import BaseModel, ConfigDict

from core.models import utcnow
from droidretriever.api.context import ApiContext, get_context
from droidretriever.api.errors import Forbidden, NotAuthenticated
from droidretriever.api.keys import login_code_key, session_key

__all__ = [
    "CSRF_HEADER",
    "SESSION_COOKIE",
    "Caller",
    "Session",
    "authenticate_websocket",
    "caller",
    "end_session",
    "issue_login_code",
    "open_session",
    "redeem_login_code",
    "token_matches",
]

SESSION_COOKIE = "dr_session"
CSRF_HEADER = "x-droidretriever"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class Caller(BaseModel):
    """Who sent a request."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["token", "session"]
    actor: str  # "api token", "browser 3f2a"
    session_id: str | None = None


class Session(BaseModel):
    """A browser session as stored (under the digest of its id)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    actor: str
    created_at: str


def token_matches(context: ApiContext, presented: str) -> bool:
    """Constant-time comparison with the API token."""
    return hmac.compare_digest(presented.encode(), context.token.encode())


def issue_login_code(context: ApiContext) -> str:
    """A one-time login code, valid ``api.login_code_ttl_s`` seconds."""
    code = secrets.token_urlsafe(24)
    context.redis.set(login_code_key(code), "1", ex=int(context.settings.api.login_code_ttl_s))
    return code


def redeem_login_code(context: ApiContext, code: str) -> bool:
    """Use up ``code``; True if it was valid (each code works once)."""
    if not 8 <= len(code) <= 100:
        return False
    return context.redis.getdel(login_code_key(code)) is not None


def open_session(context: ApiContext) -> tuple[str, Session]:
    """A new browser session: its id (the cookie's value) and what is stored."""
    session_id = secrets.token_urlsafe(32)
    session = Session(actor=f"browser {secrets.token_hex(2)}", created_at=utcnow().isoformat())
    context.redis.set(session_key(session_id), session.model_dump_json(),
                      ex=int(context.settings.api.session_ttl_s))
    return session_id, session


def end_session(context: ApiContext, session_id: str) -> None:
    """Forget a session (logout)."""
    context.redis.delete(session_key(session_id))


def _bearer(header: str | None) -> str | None:
    if header is None:
        return None
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def _from_token(context: ApiContext, header: str | None) -> Caller | None:
    presented = _bearer(header)
    if presented is None:
        return None
    if not token_matches(context, presented):
        raise NotAuthenticated("the bearer token is not this API's token")
    return Caller(kind="token", actor="api token")


def _from_cookie(context: ApiContext, session_id: str | None) -> Caller | None:
    if not session_id or len(session_id) > 100:
        return None
    raw = context.redis.get(session_key(session_id))
    if raw is None:
        return None
    session = Session.model_validate_json(raw)
    return Caller(kind="session", actor=session.actor, session_id=session_id)


def _check_origin(origin: str | None, host: str | None, scheme: str) -> None:
    if origin is None:
        return
    if host is None or not hmac.compare_digest(origin, f"{scheme}://{host}"):
        raise Forbidden("this request comes from another site",
                        hint="use the dashboard itself, or the bearer token from a program")


def caller(request: Request, context: ApiContext = Depends(get_context)) -> Caller:
    """The authenticated caller of an HTTP request (a FastAPI dependency); 401 / 403 otherwise."""
    found = _from_token(context, request.headers.get("authorization"))
    if found is not None:
        return found
    found = _from_cookie(context, request.cookies.get(SESSION_COOKIE))
    if found is None:
        raise NotAuthenticated("this needs the API token or a dashboard session")
    if request.method not in _SAFE_METHODS:
        if request.headers.get(CSRF_HEADER) != "1":
            raise Forbidden(f"a browser request that changes something needs the {CSRF_HEADER} "
                            "header", hint="the dashboard sends it; so should your script")
        _check_origin(request.headers.get("origin"), request.headers.get("host"),
                      request.url.scheme)
    return found


def authenticate_websocket(websocket: WebSocket, context: ApiContext) -> Caller:
    """The caller of a WebSocket: the token header, or the session cookie from our own origin."""
    found = _from_token(context, websocket.headers.get("authorization"))
    if found is not None:
        return found
    found = _from_cookie(context, websocket.cookies.get(SESSION_COOKIE))
    if found is None:
        raise NotAuthenticated("this needs the API token or a dashboard session")
    # Cross-site WebSocket hijacking: a browser always sends Origin on a WebSocket.
    scheme = "https" if websocket.url.scheme == "wss" else "http"
    origin = websocket.headers.get("origin")
    if origin is None:
        raise Forbidden("a browser WebSocket must say where it comes from")
    _check_origin(origin, websocket.headers.get("host"), scheme)
    return found
