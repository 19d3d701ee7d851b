"""The dashboard's pages, its static files, logging in and out, and the health check.

    GET  /                the dashboard (401 and a pointer to /login without a session)
    GET  /login           the login page; ?code=<one-time code> logs in at once
    POST /login           the login form (the token pasted by a person) -> session cookie
    POST /auth/codes      a one-time login code (bearer token only): what `up` prints as a link
    GET  /auth/me         who this caller is (the actor name its actions are recorded under)
    POST /auth/logout     end this browser's session
    GET  /static/<file>   the dashboard's own JS and CSS (no CDN, no build step)
    GET  /health          for the local stack's health check
    GET  /openapi.json    the schema (it needs credentials too)
"""

from __future__ import annotations

import html
from importlib import resources
from typing import Annotated
from urllib.parse import parse_qs

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from droidretriever.api.auth import (
    SESSION_COOKIE,
    Caller,
    caller,
    end_session,
    issue_login_code,
    open_session,
    redeem_login_code,
    token_matches,
)
from droidretriever.api.context import ApiContext, get_context
from droidretriever.api.errors import Forbidden, NotAuthenticated, NotFound
from droidretriever.api.schemas import HealthView, LoginCode

__all__ = ["router"]

router = APIRouter()

_STATIC = resources.files("droidretriever.api") / "static"
_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
          ".svg": "image/svg+xml", ".html": "text/html; charset=utf-8"}
_LOGIN_STYLE = """
body{margin:0;min-height:100vh;display:grid;place-items:center;background:#0f172a;
font-family:system-ui,"Noto Sans CJK SC",sans-serif;color:#e2e8f0}
main{background:#1e293b;padding:32px 36px;border-radius:14px;width:min(420px,90vw);
box-shadow:0 20px 50px #0008}
h1{margin:0 0 6px;font-size:1.3rem}p{color:#94a3b8;font-size:.9rem;line-height:1.45}
code{background:#0f172a;padding:2px 6px;border-radius:4px;color:#fbbf24}
input{width:100%;box-sizing:border-box;padding:10px 12px;border-radius:8px;border:1px solid #475569;
background:#0f172a;color:#e2e8f0;font-size:.95rem;margin:10px 0}
button{width:100%;padding:10px;border:0;border-radius:8px;background:#3b82f6;color:white;
font-weight:600;font-size:.95rem;cursor:pointer}.err{color:#f87171}
"""


def _login_page(message: str = "", status_code: int = 200) -> HTMLResponse:
    note = f'<p class="err">{html.escape(message)}</p>' if message else ""
    body = f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>DroidRetriever: log in</title><style>{_LOGIN_STYLE}</style></head><body><main>
<h1>DroidRetriever</h1>
<p>Open the link <code>droidretriever up</code> or <code>droidretriever api login</code> printed,
or paste the API token (<code>droidretriever api token</code>).</p>{note}
<form method="post" action="/login"><input type="password" name="token" autocomplete="off"
placeholder="API token" aria-label="API token" required><button type="submit">Log in</button></form>
</main></body></html>"""
    return HTMLResponse(body, status_code=status_code, headers={"cache-control": "no-store"})


def _with_session(context: ApiContext, response: Response) -> Response:
    session_id, _ = open_session(context)
    response.set_cookie(SESSION_COOKIE, session_id, max_age=int(context.settings.api.session_ttl_s),
                        httponly=True, samesite="strict", secure=context.secure_cookies, path="/")
    return response


@router.get("/login", include_in_schema=False)
def login_page(code: Annotated[str | None, Query(max_length=100)] = None,
               context: ApiContext = Depends(get_context)) -> Response:
    if code is None:
        return _login_page()
    if not redeem_login_code(context, code):
        return _login_page("That login link was used already or has expired: ask for a new one "
                           "(droidretriever api login).", status_code=401)
    # A page of our own that moves on: a same-site navigation, so the Strict cookie goes along.
    landing = HTMLResponse('<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" '
                           'content="0;url=/"><title>DroidRetriever</title><a href="/">continue</a>',
                           headers={"cache-control": "no-store", "referrer-policy": "no-referrer"})
    return _with_session(context, landing)


@router.post("/login", include_in_schema=False)
async def login_form(request: Request, context: ApiContext = Depends(get_context)) -> Response:
    fields = parse_qs((await request.body()).decode("utf-8", errors="replace"))
    token = (fields.get("token") or [""])[0].strip()
    if not token or not token_matches(context, token):
        return _login_page("That is not this API's token.", status_code=401)
    return _with_session(context, RedirectResponse("/", status_code=303))


@router.post("/auth/codes", response_model=LoginCode, tags=["auth"],
             summary="A one-time login link for a browser (needs the bearer token)")
def create_login_code(context: ApiContext = Depends(get_context),
                      who: Caller = Depends(caller)) -> LoginCode:
    if who.kind != "token":
        raise Forbidden("only the API token can make login links",
                        hint="run `droidretriever api login` on the machine of the stack")
    code = issue_login_code(context)
    return LoginCode(code=code, url=f"{context.settings.api.base_url}/login?code={code}",
                     expires_in_s=int(context.settings.api.login_code_ttl_s))


@router.get("/auth/me", response_model=Caller, tags=["auth"],
            summary="Who this caller is (the actor name events record)")
def whoami(who: Caller = Depends(caller)) -> Caller:
    return who.model_copy(update={"session_id": None})


@router.post("/auth/logout", status_code=204, tags=["auth"], summary="End this browser's session")
def logout(context: ApiContext = Depends(get_context), who: Caller = Depends(caller)) -> Response:
    if who.session_id is not None:
        end_session(context, who.session_id)
    response = Response(status_code=204)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


@router.get("/health", response_model=HealthView, tags=["auth"], summary="Is the API up")
def health(who: Caller = Depends(caller)) -> HealthView:
    from droidretriever import __version__

    return HealthView(version=__version__)


@router.get("/", include_in_schema=False)
def index(request: Request, context: ApiContext = Depends(get_context)) -> Response:
    try:
        caller(request, context)
    except NotAuthenticated:
        return HTMLResponse('<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" '
                            'content="0;url=/login"><title>DroidRetriever</title>'
                            '<a href="/login">log in</a>', status_code=401)
    return _static_file("index.html")


@router.get("/static/{path:path}", include_in_schema=False)
def static(path: Annotated[str, Path(pattern=r"^[a-z0-9_\-]+(/[a-z0-9_\-]+)*\.(js|css|svg)$")],
           who: Caller = Depends(caller)) -> Response:
    return _static_file(path)


def _static_file(path: str) -> Response:
    resource = _STATIC.joinpath(*path.split("/"))
    if not resource.is_file():
        raise NotFound(f"no file {path}")
    suffix = "." + path.rsplit(".", 1)[-1]
    return Response(resource.read_bytes(), media_type=_TYPES[suffix],
                    headers={"cache-control": "no-cache"})


@router.get("/openapi.json", include_in_schema=False)
def openapi(request: Request, who: Caller = Depends(caller)) -> JSONResponse:
    return JSONResponse(request.app.openapi())
