"""The stack's Prefect server answers a stranger on nothing but its health check and the UI's files.

Prefect 3.8.8's own basic auth leaves ``/api/ready`` and the root app's schema and docs open;
the stack serves the same app behind ``deploy.local.prefect_server.OnlyHealthOpen``. The real
server is started as ``droidretriever up`` starts it, in a temporary state folder.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from core.config import Settings, load_settings
from deploy.local import PrefectService, ensure_stack_secrets
from deploy.local.prefect_server import CLOSED_PATHS
from droidretriever.testing import free_port

pytestmark = [pytest.mark.services, pytest.mark.slow]

# Open without the auth string, and why: the health check; the page that asks for it.
OPEN = ("/api/health", "/", "/ui-settings")
CLOSED = (*sorted(CLOSED_PATHS), "/api/docs", "/api/openapi.json", "/api/version",
          "/api/admin/settings", "/api/static/prefect-logo-mark-gradient.png")


@pytest.fixture(scope="module")
def prefect(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Settings]]:
    patch = pytest.MonkeyPatch()
    patch.setenv("DROIDRETRIEVER_STATE_DIR", str(tmp_path_factory.mktemp("state")))
    patch.setenv("DROIDRETRIEVER_PREFECT__API_URL", f"http://127.0.0.1:{free_port()}/api")
    # The small-laptop setting: the server's HTTP surface is the same on either database.
    patch.setenv("DROIDRETRIEVER_PREFECT__DATABASE", "sqlite")
    try:
        settings = ensure_stack_secrets(load_settings())
    finally:
        patch.undo()
    service = PrefectService(settings)
    service.start()
    try:
        service.wait_healthy(120)
        yield str(settings.prefect.api_url).rstrip("/").removesuffix("/api"), settings
    finally:
        service.stop()


def test_only_the_health_check_and_the_ui_answer_without_the_auth_string(
        prefect: tuple[str, Settings]) -> None:
    root, settings = prefect
    assert settings.prefect.auth_string is not None
    user, _, password = settings.prefect.auth_string.get_secret_value().partition(":")
    for path in OPEN:
        assert httpx.get(root + path, timeout=10).status_code == 200, path
    for path in CLOSED:
        for auth in (None, (user, "wrong"), ("nobody", password)):
            answer = httpx.get(root + path, auth=auth, timeout=10)
            assert answer.status_code == 401, (path, auth, answer.status_code)
        assert httpx.get(root + path, auth=(user, password), timeout=10).status_code == 200, path
    stranger = httpx.post(f"{root}/api/flow_runs/filter", json={}, timeout=10)
    assert stranger.status_code == 401
    assert (settings.state_dir / "prefect" / "prefect.db").is_file()  # prefect.database = sqlite

