"""Steering a running copilot through the API: pause at a planned action, take the phone over,
save the screen, go back to auto, and the run still ends with its report.

"Which permissions does Meituan have?" runs on a virtual phone with a two-second confirm window
(tests/api/conftest.py) while a person watches the run (as its open page does), so they have
time to stop the first planned action.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.api import ApiStack, read_events, wait_for_event, watching
from tests.support.farm import wait_until

pytestmark = [pytest.mark.services, pytest.mark.slow]


def test_pause_take_over_save_the_screen_and_back_to_auto(api_stack: ApiStack) -> None:
    api_stack.farm.sim.control.reset("boot")  # as booted, whatever earlier tests left
    with api_stack.browser_client() as person, api_stack.client() as program:
        run_id = person.post("/runs", json={"text": "Which permissions does Meituan have?"}
                             ).json()["run_id"]
        control = f"/runs/{run_id}/control"
        with watching(api_stack, run_id):
            preview = wait_for_event(program, run_id, "preview", 120)
            paused = person.post(control, json={"action": "pause", "note": "let me look"})
        assert preview["preview"]["window_s"] > 0  # watched: the action waits for the person
        assert paused.status_code == 200, paused.text
        assert paused.json()["mode"] == "paused"
        serial = paused.json()["serial"]
        wait_for_event(program, run_id, "needs_user", 30)

        def mine() -> dict[str, Any] | None:
            state: dict[str, Any] = person.get(control).json()
            return state if state["ready"] else None

        taken = person.post(control, json={"action": "take_over"})
        assert taken.status_code == 200 and taken.json()["source"] == "loop"
        assert wait_until(mine, 30, "the copilot to hand the phone over")["serial"] == serial
        tap = person.post(f"/devices/{serial}/input", json={"kind": "tap", "x": 540, "y": 10})
        assert tap.status_code == 200, tap.text
        saved = person.post(control, json={"action": "save_screen"})
        assert saved.status_code == 200, saved.text
        wait_for_event(program, run_id, "capture_saved", 60)
        back = person.post(control, json={"action": "resume"})
        assert back.status_code == 200 and back.json()["mode"] == "auto"
        again = person.post(control, json={"action": "resume"})
        assert again.status_code == 409 and "the copilot is driving" in again.json()["error"]
        wait_for_event(program, run_id, "run_finished", 240)
        run = program.get(f"/runs/{run_id}").json()
        events = read_events(program, run_id)
    assert run["manifest"]["status"] == "completed" and run["report"]
    captures = [e["capture"] for e in events if e["kind"] == "capture_saved"]
    assert captures[0]["source"] == "user" and any(c["source"] == "auto" for c in captures[1:])
    controls = [e["message"] for e in events if e["kind"] == "control"]
    assert controls == [f"paused the copilot on {serial}", f"took over {serial}",
                        f"asked to save the screen of {serial}", f"back to auto on {serial}"]
    kinds = [e["kind"] for e in events]
    assert kinds.index("needs_user") < kinds.index("resumed")
    person_steps = [e for e in events if e["kind"] == "step" and e["step"]["policy"] == "user"]
    assert [e["message"] for e in person_steps] == ["tap at (540, 10)"]
    after = [e for e in events[kinds.index("resumed"):] if e["kind"] == "step"
             and e["step"]["policy"] != "user"]
    # The loop marks where a person was: the first step it records after them (here after a
    # try that found the notification shade the person's tap had opened, and started again).
    assert after and after[0]["step"]["intervention"] is True
