"""The API's Redis keys, in one place (secrets are kept only as SHA-256 digests).

    api:session:<sha256(session id)>     STR   Session JSON (actor, expiry), TTL = api.session_ttl_s
    api:login-code:<sha256(code)>        STR   "1" while a one-time login code is unused, TTL = api.login_code_ttl_s
"""

from __future__ import annotations

import hashlib

__all__ = ["login_code_key", "session_key"]


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def session_key(session_id: str) -> str:
    """Where a browser session lives; the cookie's value never appears in Redis."""
    return f"api:session:{_digest(session_id)}"


def login_code_key(code: str) -> str:
    """Where an unused one-time login code is remembered."""
    return f"api:login-code:{_digest(code)}"
