"""``droidretriever api token | login``: the HTTP API's token, and a login link for a browser.

The dashboard is served by the local stack's ``api`` service
(``droidretriever up`` starts it and prints a login link). A login link holds
a one-time code valid for two minutes; the token itself never goes in a URL.
"""

from __future__ import annotations

import httpx
import typer
from rich.console import Console

from core.config import Settings, load_settings
from core.errors import ServiceError
from deploy.local import ApiService, ensure_api_token, read_api_token
from droidretriever.cli._app import app

__all__ = ["api_app", "dashboard_link", "login_link"]

console = Console()

api_app = typer.Typer(help="The HTTP API and dashboard: its token, a login link.",
                      no_args_is_help=True)
app.add_typer(api_app, name="api")


def login_link(settings: Settings) -> str:
    """A one-time login URL for the dashboard (asks the running API for a code)."""
    token = read_api_token(settings)
    base = settings.api.base_url
    if token is None:
        raise ServiceError("the API has no token yet", hint="start it with `droidretriever up`")
    try:
        response = httpx.post(f"{base}/auth/codes", timeout=5.0,
                              headers={"authorization": f"Bearer {token}"})
    except httpx.HTTPError as exc:
        raise ServiceError(f"the API at {base} does not answer ({type(exc).__name__})",
                           hint="start it with `droidretriever up`") from exc
    if response.status_code != 200:
        raise ServiceError(f"the API at {base} refused a login link ({response.status_code})",
                           hint="is DROIDRETRIEVER_API_TOKEN the token the API was started with?")
    return str(response.json()["url"])


def dashboard_link(settings: Settings, run_id: str) -> str | None:
    """The run's page in the dashboard, when the API is up (None otherwise)."""
    if not ApiService(settings).check_health().healthy:
        return None
    return f"{settings.api.base_url}/#/runs/{run_id}"


@api_app.command("token")
def token() -> None:
    """Print the API's bearer token (generated into the state folder if there is none yet)."""
    console.print(ensure_api_token(load_settings()), highlight=False, soft_wrap=True)


@api_app.command("login")
def login() -> None:
    """Print a one-time link that logs a browser in to the dashboard (valid two minutes)."""
    console.print(login_link(load_settings()), highlight=False, soft_wrap=True)
