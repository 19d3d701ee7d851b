"""Who may call the API: the token or a session on every route (found in the OpenAPI schema, so a
new route cannot be forgotten), one-time login links, CSRF, size limits, ids, CORS, headers.

The app runs in this process (Starlette's test client) on the session's real Redis and S3.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.routing import APIRoute, APIWebSocketRoute
from fastapi.testclient import TestClient
from starlette.routing import Route
from starlette.websockets import WebSocketDisconnect

from core.config import ApiSettings, RedisSettings, S3Settings, Settings, load_settings
from droidretriever.api import create_app

pytestmark = pytest.mark.services

# An example for each path parameter: valid in form, so only credentials decide the answer.
EXAMPLES = {"run_id": "run-20260101T000000-abcdef", "serial": "sim-1", "capture_id": "c1",
            "subtask_id": "s1", "name": "0001.png", "index": "0", "subscription_id": "sub-abcdef12",
            "path": "js/main.js", "package": "com.example.shop", "screen_id": "a1f0000000000001"}
# Routes that answer without credentials, and why: the login page shows a form and nothing else.
PUBLIC = {("GET", "/login"), ("POST", "/login")}


def _settings(tmp: Path, redis_url: str, s3: S3Settings, **api: Any) -> Settings:
    return load_settings(state_dir=tmp, redis=RedisSettings(url=redis_url),
                         s3=s3.model_copy(update={"bucket": "dr-api-auth"}),
                         api=ApiSettings(max_body_bytes=4096, max_audio_bytes=8192, **api))


@pytest.fixture()
def client(tmp_path: Path, redis_url: str, s3_settings: S3Settings) -> Iterator[TestClient]:
    with TestClient(create_app(_settings(tmp_path, redis_url, s3_settings)),
                    base_url="http://127.0.0.1:8700") as test_client:
        yield test_client


def _token(client: TestClient) -> str:
    token: str = client.app.state.context.token  # type: ignore[attr-defined]
    return token


def _routes(routes: list[Any]) -> Iterator[Any]:
    """Every route, also those of included routers (FastAPI keeps those as their routers)."""
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from _routes(inner.routes)
        else:
            yield route


def _fill(path: str) -> str:
    return re.sub(r"\{(\w+)(?::path)?\}", lambda m: EXAMPLES[m.group(1)], path)


def test_every_route_answers_401_without_credentials(client: TestClient) -> None:
    schema = client.get("/openapi.json", headers={"authorization": f"Bearer {_token(client)}"})
    assert schema.status_code == 200
    operations = [(method.upper(), path) for path, item in schema.json()["paths"].items()
                  for method in item]
    assert len(operations) >= 25, operations
    # Every HTTP route of the app is in the schema, or on the short list of those that are not.
    routes = {(method, r.path) for r in _routes(client.app.routes)  # type: ignore[attr-defined]
              if isinstance(r, APIRoute | Route) for method in set(r.methods or ()) - {"HEAD"}}
    unlisted = {("GET", "/"), ("GET", "/static/{path:path}"), ("GET", "/openapi.json"), *PUBLIC}
    assert routes - set(operations) == unlisted
    for method, path in [*operations, *(unlisted - PUBLIC)]:
        for headers in ({}, {"authorization": "Bearer not-the-token"}):
            answer = client.request(method, _fill(path), headers=headers)
            assert answer.status_code == 401, (method, path, headers, answer.text)
            assert "www-authenticate" in answer.headers or path == "/"
    for method, path in PUBLIC:
        assert client.request(method, path).status_code in (200, 401)  # the form, or a bad token


def test_the_live_screen_websocket_needs_credentials_too(client: TestClient) -> None:
    sockets = [r.path for r in _routes(client.app.routes)  # type: ignore[attr-defined]
               if isinstance(r, APIWebSocketRoute)]
    assert sockets == ["/devices/{serial}/live"]
    for headers in ({}, {"authorization": "Bearer wrong"}, {"cookie": "dr_session=forged"}):
        with pytest.raises(WebSocketDisconnect) as closed, \
                client.websocket_connect(_fill(sockets[0]), headers=headers):
            pass
        assert closed.value.code == 4401


def test_a_login_link_works_once_and_gives_a_strict_httponly_session(client: TestClient) -> None:
    token = {"authorization": f"Bearer {_token(client)}"}
    link = client.post("/auth/codes", headers=token).json()
    assert link["url"].startswith("http://127.0.0.1:8700/login?code=") and link["expires_in_s"] == 120
    first = client.get(f"/login?code={link['code']}")
    assert first.status_code == 200
    cookie = first.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and "path=/" in cookie
    me = client.get("/auth/me").json()
    assert me.keys() == {"kind", "actor", "session_id"}
    assert me["kind"] == "session" and me["session_id"] is None
    assert re.fullmatch(r"browser [0-9a-f]{4}", me["actor"]), me  # who acted, never the token
    assert client.get("/").status_code == 200
    client.cookies.clear()
    again = client.get(f"/login?code={link['code']}")
    assert again.status_code == 401 and "used already or has expired" in again.text
    assert "dr_session" not in again.headers.get("set-cookie", "")


def test_a_browser_changes_nothing_without_the_csrf_header_or_from_another_site(
    client: TestClient,
) -> None:
    code = client.post("/auth/codes", headers={"authorization": f"Bearer {_token(client)}"}).json()
    client.get(f"/login?code={code['code']}")
    control = f"/runs/{EXAMPLES['run_id']}/control"
    body = {"action": "pause"}
    assert client.post(control, json=body).status_code == 403
    foreign = client.post(control, json=body,
                          headers={"x-droidretriever": "1", "origin": "https://evil.example"})
    assert foreign.status_code == 403 and "another site" in foreign.json()["error"]
    own = client.post(control, json=body,
                      headers={"x-droidretriever": "1", "origin": "http://127.0.0.1:8700"})
    assert own.status_code == 404  # past the checks: the run does not exist
    assert client.post("/auth/codes", headers={"x-droidretriever": "1"}).status_code == 403


def test_the_login_form_takes_the_token(client: TestClient) -> None:
    wrong = client.post("/login", content="token=nope",
                        headers={"content-type": "application/x-www-form-urlencoded"})
    assert wrong.status_code == 401 and "That is not this API" in wrong.text
    right = client.post("/login", content=f"token={_token(client)}", follow_redirects=False,
                        headers={"content-type": "application/x-www-form-urlencoded"})
    assert right.status_code == 303 and right.headers["location"] == "/"
    assert client.get("/health").json()["ok"] is True


def test_bodies_over_the_limit_are_refused(client: TestClient) -> None:
    token = {"authorization": f"Bearer {_token(client)}"}
    big = client.post("/runs", json={"text": "x" * 5000}, headers=token)
    assert big.status_code == 413 and "larger than 4096 bytes" in big.json()["error"]
    audio = client.post("/transcripts", content=b"RIFF" + b"\0" * 9000,
                        headers={**token, "content-type": "audio/wav"})
    assert audio.status_code == 413
    chunked = client.post("/runs", content=iter([b"{" + b" " * 3000, b" " * 3000 + b"}"]),
                          headers={**token, "content-type": "application/json"})
    assert chunked.status_code == 413


def test_ids_cannot_reach_other_keys(client: TestClient) -> None:
    token = {"authorization": f"Bearer {_token(client)}"}
    for path in ("/runs/..%2F..%2Fsecrets", "/runs/run-1/screens/s1/..%2Fmanifest.json",
                 "/runs/run-1/captures/..", "/devices/..%2Fsim-1/screen", "/runs/%2E%2E/report",
                 "/static/..%2Fapp.py"):
        answer = client.get(path, headers=token)
        assert answer.status_code in (404, 422), (path, answer.status_code)


def test_typed_text_that_fails_validation_is_not_echoed(client: TestClient) -> None:
    token = {"authorization": f"Bearer {_token(client)}"}
    marker = "typed-secret-" * 40
    answer = client.post("/devices/sim-1/input", json={"kind": "text", "text": marker}, headers=token)
    assert answer.status_code == 422
    assert "typed-secret" not in answer.text and "text must be 1 to 500" in answer.text


def test_no_cors_unless_configured(client: TestClient, tmp_path: Path, redis_url: str,
                                   s3_settings: S3Settings) -> None:
    preflight = {"origin": "https://elsewhere.example", "access-control-request-method": "POST"}
    assert "access-control-allow-origin" not in client.options("/runs", headers=preflight).headers
    allowed = _settings(tmp_path / "cors", redis_url, s3_settings,
                        cors_origins=("https://elsewhere.example",))
    with TestClient(create_app(allowed)) as other:
        answer = other.options("/runs", headers=preflight)
    assert answer.headers["access-control-allow-origin"] == "https://elsewhere.example"


def test_pages_say_what_they_may_load(client: TestClient) -> None:
    answer = client.get("/login")
    policy = answer.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "frame-ancestors 'self'" in policy
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["referrer-policy"] == "no-referrer"
