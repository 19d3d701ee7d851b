"""How a recording becomes a replay graph: the rules that bridge holes in real recordings."""

from __future__ import annotations

import json
from pathlib import Path

from device_farm.sim import Outcome, load_recordings
from device_farm.sim.replay import ReplayCursor, ReplayPlayer


def _write_state(folder: Path, tag: str, name: str, activity: str, views: list[dict[str, object]]) -> None:
    state = {"tag": tag, "state_str": name, "state_str_content_free": name, "width": 400, "height": 800,
             "foreground_activity": f"com.example.rec/{activity}", "views": [
                 {"temp_id": 0, "parent": -1, "children": list(range(1, len(views) + 1)), "class": "FrameLayout",
                  "bounds": [[0, 0], [400, 800]], "package": "com.example.rec"},
                 *({"temp_id": i, "parent": 0, "package": "com.example.rec", **v} for i, v in enumerate(views, 1)),
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
