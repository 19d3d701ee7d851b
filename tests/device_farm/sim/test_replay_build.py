"""How a recording becomes a replay graph: the rules that bridge holes in real recordings."""

from __future__ import annotations

import json
from pathlib import Path

from device_farm.sim import Outcome, load_recordings
from device_farm.sim.replay import ReplayCursor, ReplayPlayer


def _write_state(folder: Path, tag: str, name: str, activity: str, views: list[dict[str, object]],
                 package: str = "com.example.rec") -> None:
    state = {"tag": tag, "state_str": name, "state_str_content_free": name, "width": 400, "height": 800,
             "foreground_activity": f"{package}/{activity}", "views": [
                 {"temp_id": 0, "parent": -1, "children": list(range(1, len(views) + 1)), "class": "FrameLayout",
                  "bounds": [[0, 0], [400, 800]], "package": package},
                 *({"temp_id": i, "parent": 0, "package": package, **v} for i, v in enumerate(views, 1)),
             ]}
    (folder / "states" / f"state_{tag}.json").write_text(json.dumps(state))


def _write_event(folder: Path, tag: str, start: str, stop: str, event: dict[str, object]) -> None:
    body = {"tag": tag, "start_state": start, "stop_state": stop, "event": event}
    (folder / "events" / f"event_{tag}.json").write_text(json.dumps(body))


def test_holes_in_a_recording_are_bridged_by_the_rules_it_documents(tmp_path: Path) -> None:
    """A splash nobody acted on settles; an event whose next screen was not saved leads to the
    screen the next event started from; the launch is where sessions started acting."""
    (tmp_path / "states").mkdir()
    (tmp_path / "events").mkdir()
    button = {"class": "Button", "text": "Open", "clickable": True, "bounds": [[0, 0], [100, 100]],
              "signature": "[class]Button[resource_id]None[text]Open", "content_free_signature": "[class]Button"}
    _write_state(tmp_path, "2024-01-01_100001", "splash", ".Splash", [])
    _write_state(tmp_path, "2024-01-01_100003", "home", ".Home", [button])
    _write_state(tmp_path, "2024-01-01_100006", "page", ".Page", [])
    _write_event(tmp_path, "2024-01-01_100000", "launcher", "splash",
                 {"event_type": "intent", "intent": "am start com.example.rec/.Splash"})
    _write_event(tmp_path, "2024-01-01_100004", "home", "never-saved",
                 {"event_type": "click", "view": {"temp_id": 1, **button}})
    _write_event(tmp_path, "2024-01-01_100007", "page", "home", {"event_type": "key", "name": "BACK"})
    (app,) = load_recordings([tmp_path])
    screen = {s.state_str: k for k, s in app.screens.items()}
    assert app.screens[app.launch].state_str == "home"
    assert app.settle(screen["splash"]) == screen["home"]
    taps = app.edges[screen["home"]]
    assert [(e.kind.value, app.screens[e.stop].state_str) for e in taps] == [("tap", "page")]
    cursor = ReplayCursor(app.package, app.launch)
    assert ReplayPlayer(app, cursor).tap(50, 50) is Outcome.RECORDED
    assert app.screens[cursor.screen].state_str == "page"
    assert ReplayPlayer(app, cursor).tap(300, 700) is Outcome.OFF_GRAPH
    assert ReplayPlayer(app, cursor).key("BACK") is Outcome.RECORDED
    assert app.screens[cursor.screen].state_str == "home"


def _button(text: str, top: int = 0) -> dict[str, object]:
    return {"class": "Button", "text": text, "clickable": True, "bounds": [[0, top], [100, top + 100]],
            "signature": f"[class]Button[resource_id]None[text]{text}", "content_free_signature": "[class]Button"}


def _recording(folder: Path) -> Path:
    (folder / "states").mkdir(parents=True)
    (folder / "events").mkdir()
    return folder


def test_an_app_goes_on_into_the_recorded_app_it_opens(tmp_path: Path) -> None:
    """The camera's last photo opens the gallery: the camera's graph follows the gallery's events."""
    folder = _recording(tmp_path / "camera")
    _write_state(folder, "2024-01-01_100001", "home", ".Home", [_button("Last photo")])
    _write_state(folder, "2024-01-01_100003", "photo", ".Viewer", [_button("Rotate")], package="com.example.gallery")
    _write_state(folder, "2024-01-01_100005", "rotated", ".Viewer", [], package="com.example.gallery")
    _write_event(folder, "2024-01-01_100000", "launcher", "home",
                 {"event_type": "intent", "intent": "am start com.example.rec/.Home"})
    _write_event(folder, "2024-01-01_100002", "home", "photo", {"event_type": "click", "view": {"temp_id": 1,
                 **_button("Last photo")}})
    _write_event(folder, "2024-01-01_100004", "photo", "rotated", {"event_type": "click", "view": {"temp_id": 1,
                 **_button("Rotate")}})
    app = next(a for a in load_recordings([folder]) if a.package == "com.example.rec")
    cursor = ReplayCursor(app.package, app.launch)
    assert ReplayPlayer(app, cursor).tap(50, 50) is Outcome.RECORDED
    assert ReplayPlayer(app, cursor).tap(50, 50) is Outcome.RECORDED
    assert app.screens[cursor.screen].state_str == "rotated"


def test_a_page_scrolled_without_a_recorded_event_is_a_scroll_both_ways(tmp_path: Path) -> None:
    """The next event started on the page scrolled (AutoDroid read it so): a swipe gets there and back."""
    folder = _recording(tmp_path / "settings")
    rows = [_button(f"Row {n}", top=100 * n) for n in range(8)]
    page = {"class": "ScrollView", "scrollable": True, "bounds": [[0, 0], [400, 800]],
            "signature": "[class]ScrollView", "content_free_signature": "[class]ScrollView"}
    _write_state(folder, "2024-01-01_100001", "top", ".Settings", [page, *rows])
    _write_state(folder, "2024-01-01_100003", "scrolled", ".Settings",
                 [page, *(_button(f"Row {n}", top=100 * (n - 3)) for n in range(3, 11))])
    _write_state(folder, "2024-01-01_100005", "row10", ".Row", [])
    _write_event(folder, "2024-01-01_100000", "launcher", "top",
                 {"event_type": "intent", "intent": "am start com.example.rec/.Settings"})
    _write_event(folder, "2024-01-01_100002", "top", "top", {"event_type": "key", "name": "VOLUME_UP"})
    _write_event(folder, "2024-01-01_100004", "scrolled", "row10",
                 {"event_type": "click", "view": {"temp_id": 8, **_button("Row 10", top=700)}})
    (app,) = load_recordings([folder])
    cursor = ReplayCursor(app.package, app.launch)
    assert ReplayPlayer(app, cursor).swipe(200, 600, 200, 200, 300) is Outcome.RECORDED  # finger up: DOWN
    assert app.screens[cursor.screen].state_str == "scrolled"
    assert ReplayPlayer(app, cursor).swipe(200, 200, 200, 600, 300) is Outcome.RECORDED
    assert app.screens[cursor.screen].state_str == "top"


def test_a_package_recorded_in_two_folders_is_replayed_from_the_one_with_more_of_its_events(
    tmp_path: Path,
) -> None:
    for name, taps in (("other_app", 1), ("own_app", 2)):
        folder = _recording(tmp_path / name)
        _write_state(folder, "2024-01-01_100001", "home", ".Home", [_button("A"), _button("B", top=200)])
        _write_state(folder, "2024-01-01_100003", f"page-{name}", ".Page", [])
        for n in range(taps):
            _write_event(folder, f"2024-01-01_10001{n}", "home", f"page-{name}",
                         {"event_type": "click", "view": {"temp_id": n + 1, **_button("AB"[n], top=200 * n)}})
    (app,) = load_recordings([tmp_path])
    assert app.edge_count == 2 and any(s.state_str == "page-own_app" for s in app.screens.values())
