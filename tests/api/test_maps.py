"""The app maps over HTTP: listed, served whole, their screenshots (PNG and thumbnails), and what an
unknown app, version or screen answers; nothing without the token or a session.

The app runs in this process (Starlette's test client) on the session's real Redis and S3; the
map is stored through :class:`storage.MapStore`, as a build stores it.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from PIL import Image

from core.config import RedisSettings, S3Settings, load_settings
from core.models import AppMap
from droidretriever.api import create_app
from storage import MapStore, ObjectStore
from tests.api.conftest import DEALS, HOME, SHOP, SHOP_VERSION, SIGN_IN, shop_map, store_shop_map

pytestmark = pytest.mark.services


@pytest.fixture()
def client(tmp_path: Path, redis_url: str, s3_settings: S3Settings) -> Iterator[TestClient]:
    settings = load_settings(state_dir=tmp_path, redis=RedisSettings(url=redis_url),
                             s3=s3_settings.model_copy(update={"bucket": "dr-api-maps"}))
    with TestClient(create_app(settings), base_url="http://127.0.0.1:8700") as test_client:
        yield test_client


def _store(client: TestClient) -> ObjectStore:
    store: ObjectStore = client.app.state.context.store  # type: ignore[attr-defined]
    return store


def _token(client: TestClient) -> dict[str, str]:
    return {"authorization": f"Bearer {client.app.state.context.token}"}  # type: ignore[attr-defined]


def _forget_maps(store: ObjectStore) -> None:
    for info in store.list_objects("maps/"):  # damaged maps too, which MapStore.list refuses to read
        store.delete(info.key)


@pytest.fixture()
def stored(client: TestClient) -> Iterator[AppMap]:
    _forget_maps(_store(client))
    yield store_shop_map(_store(client))
    _forget_maps(_store(client))


def test_the_maps_need_the_token_or_a_session(client: TestClient, stored: AppMap) -> None:
    for path in ("/maps", f"/maps/{SHOP}", f"/maps/{SHOP}/screens/{HOME}", f"/maps/{SHOP}/screens/{HOME}?width=120"):
        for headers in ({}, {"authorization": "Bearer not-the-token"}):
            answer = client.get(path, headers=headers)
            assert answer.status_code == 401, (path, answer.text)
            assert "Shop" not in answer.text and answer.headers["www-authenticate"] == "Bearer"


def test_a_stored_map_is_listed_and_served_whole(client: TestClient, stored: AppMap) -> None:
    listed = client.get("/maps", headers=_token(client))
    assert listed.status_code == 200
    assert listed.json() == [{"package": SHOP, "label": "Shop", "version": SHOP_VERSION, "screens": 6, "walls": 1,
                              "complete": True, "built_at": stored.built_at.isoformat().replace("+00:00", "Z"),
                              "stopped": "explored everything"}]
    served = client.get(f"/maps/{SHOP}", headers=_token(client))
    assert served.status_code == 200
    assert AppMap.model_validate(served.json()) == stored
    assert served.json()["screens"][SIGN_IN]["wall"] == "login"
    by_version = client.get(f"/maps/{SHOP}", params={"version": SHOP_VERSION}, headers=_token(client))
    assert by_version.status_code == 200 and by_version.json()["start"] == HOME


def test_the_latest_build_is_served_unless_a_version_is_asked_for(client: TestClient, stored: AppMap) -> None:
    newer = shop_map().model_copy(update={"version": "2.2.0", "label": "Shop 2.2"})
    MapStore(_store(client)).save(newer)
    assert client.get(f"/maps/{SHOP}", headers=_token(client)).json()["version"] == "2.2.0"
    older = client.get(f"/maps/{SHOP}", params={"version": SHOP_VERSION}, headers=_token(client))
    assert older.json()["label"] == "Shop"
    assert [m["version"] for m in client.get("/maps", headers=_token(client)).json()] == [SHOP_VERSION, "2.2.0"]


def test_a_screen_is_served_as_png_or_as_a_jpeg_thumbnail(client: TestClient, stored: AppMap) -> None:
    png = client.get(f"/maps/{SHOP}/screens/{DEALS}", params={"version": SHOP_VERSION}, headers=_token(client))
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    assert png.content == _store(client).get_bytes(stored.screens[DEALS].screenshot_key)
    thumb = client.get(f"/maps/{SHOP}/screens/{DEALS}", params={"width": 120}, headers=_token(client))
    assert thumb.status_code == 200 and thumb.headers["content-type"] == "image/jpeg"
    with Image.open(io.BytesIO(thumb.content)) as image:
        assert image.size == (120, 213)  # 540 x 960 scaled, the aspect kept
        red, _, blue = image.convert("RGB").getpixel((60, 20))  # type: ignore[misc]
        assert blue < 100 < red  # the deals page's orange title bar


def test_an_unknown_app_version_or_screen_answers_404_with_what_to_do(client: TestClient, stored: AppMap) -> None:
    unknown = client.get("/maps/com.example.nothing", headers=_token(client))
    assert unknown.status_code == 404
    assert unknown.json() == {
        "error": "no map of com.example.nothing is stored",
        "hint": "`droidretriever map build APP` explores the app on the farm and stores its map; GET /maps lists the maps"}
    version = client.get(f"/maps/{SHOP}", params={"version": "9.9"}, headers=_token(client))
    assert version.status_code == 404 and "at version '9.9'" in version.json()["error"]
    assert "GET /maps lists the versions" in version.json()["hint"]
    screen = client.get(f"/maps/{SHOP}/screens/ffff000000000000", headers=_token(client))
    assert screen.status_code == 404 and "has no screen ffff000000000000" in screen.json()["error"]
    shot = client.get("/maps/com.example.nothing/screens/ffff000000000000?width=80", headers=_token(client))
    assert shot.status_code == 404 and "no map of com.example.nothing" in shot.json()["error"]


def test_an_empty_store_lists_no_maps(client: TestClient) -> None:
    _forget_maps(_store(client))
    assert client.get("/maps", headers=_token(client)).json() == []


def test_paths_and_versions_cannot_reach_other_keys(client: TestClient, stored: AppMap) -> None:
    for path, params in (("/maps/..%2F..%2Fruns", {}), (f"/maps/{SHOP}/screens/..%2Fmap.json", {}),
                         (f"/maps/{SHOP}", {"version": ".."}), (f"/maps/{SHOP}", {"version": "2.1.0/../x"}),
                         (f"/maps/{SHOP}/screens/{HOME}", {"version": "."}), ("/maps/%2E%2E", {}),
                         (f"/maps/{SHOP}/screens/{HOME}", {"width": 5000})):
        answer = client.get(path, params=params, headers=_token(client))
        assert answer.status_code in (404, 422), (path, params, answer.status_code)


def test_a_screenshot_key_outside_its_map_is_not_served(client: TestClient, stored: AppMap) -> None:
    """A damaged map cannot make the route read another object (a run's manifest, say)."""
    _store(client).put_bytes("runs/run-x/manifest.json", b"{}", "application/json")
    screens = {**stored.screens, HOME: stored.screens[HOME].model_copy(
        update={"screenshot_key": "runs/run-x/manifest.json"})}
    MapStore(_store(client)).save(stored.model_copy(update={"screens": screens}))
    answer = client.get(f"/maps/{SHOP}/screens/{HOME}", headers=_token(client))
    assert answer.status_code == 404 and "has no screenshot" in answer.json()["error"]


def test_a_map_this_release_cannot_read_says_how_to_rebuild_it(client: TestClient, stored: AppMap) -> None:
    _store(client).put_bytes(f"maps/{SHOP}/{SHOP_VERSION}/map.json", b'{"package": 3}', "application/json")
    answer = client.get(f"/maps/{SHOP}", params={"version": SHOP_VERSION}, headers=_token(client))
    assert answer.status_code == 500
    assert "is not a map this release reads" in answer.json()["error"]
    assert "droidretriever map build --rebuild" in answer.json()["hint"]
