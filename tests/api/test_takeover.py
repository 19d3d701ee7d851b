"""A login pause answered by remote control through the API, with the real copilot.

Gmail is logged out on the virtual phones; "What is my latest email in Gmail?" is asked with
POST /runs and executed by the runner. The copilot stops at the sign-in screen and the sub-flow
pauses: the pause shows in the farm's queue (and reaches the pause webhook). A person takes the
phone over from the API, signs in by tapping and typing, and goes back to auto; the run goes on
from the inbox they left and ends with a cited report. On the way every invalid command is
refused with its reason, and afterwards the typed text is searched for everywhere.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import redis

from storage import open_object_store
from tests.api.conftest import GMAIL, log_gmail_out
from tests.support.api import ApiStack, read_events, wait_for_event
from tests.support.farm import wait_until
from tests.support.phone import find_on_screen
from tests.support.webhook import Webhook

pytestmark = [pytest.mark.services, pytest.mark.slow]


@dataclass
class TakeoverStory:
    """What happened, step by step, for the tests below to check."""

    run_id: str
    serial: str
    email: str
    secret: str
    person_actor: str
    answers: dict[str, httpx.Response] = field(default_factory=dict)
    replies: list[dict[str, Any]] = field(default_factory=list)


def _labelled(word: str) -> Any:
    return lambda e: word.casefold() in (e.label or "").casefold()


def _tap(person: httpx.Client, stack: ApiStack, serial: str, wanted: Any, what: str) -> dict[str, Any]:
    point, _ = find_on_screen(serial, stack.farm.sim.port, wanted, what)
    reply = person.post(f"/devices/{serial}/input", json={"kind": "tap", "x": point.x, "y": point.y})
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


@pytest.fixture(scope="module")
def story(api_stack: ApiStack) -> Iterator[TakeoverStory]:
    sim = api_stack.farm.sim
    log_gmail_out(api_stack)
    try:
        with api_stack.browser_client() as person, api_stack.browser_client() as other, \
                api_stack.client() as program:
            started = person.post("/runs", json={"text": "What is my latest email in Gmail?"})
            assert started.status_code == 201, started.text
            run_id = started.json()["run_id"]
            control = f"/runs/{run_id}/control"

            def queued() -> list[dict[str, Any]]:
                return [p for p in program.get("/pauses").json() if p["entry"]["run_id"] == run_id]

            pause = wait_until(queued, 180, "the Gmail pause in the farm's queue", interval_s=0.5)[0]
            serial = pause["entry"]["serial"]
            told = TakeoverStory(run_id=run_id, serial=serial, email=f"dr-{secrets.token_hex(4)}@example.com",
                                 secret=f"pw-{secrets.token_hex(6)}",
                                 person_actor=person.get("/auth/me").json()["actor"])
            told.answers["queue"] = program.get("/pauses")
            told.answers["pause"] = person.post(control, json={"action": "pause"})
            told.answers["save"] = person.post(control, json={"action": "save_screen"})
            told.answers["input before takeover"] = person.post(
                f"/devices/{serial}/input", json={"kind": "tap", "x": 10, "y": 10})
            told.answers["take over"] = person.post(control, json={"action": "take_over",
                                                                   "serial": serial})
            told.answers["other takes over"] = other.post(control, json={"action": "take_over"})
            told.answers["other taps"] = other.post(f"/devices/{serial}/input",
                                                    json={"kind": "tap", "x": 10, "y": 10})
            told.answers["program taps"] = program.post(f"/devices/{serial}/input",
                                                        json={"kind": "back"})
            # The person signs in on the phone, by remote control.
            told.replies.append(_tap(person, api_stack, serial, _labelled("email"), "email field"))
            typed = person.post(f"/devices/{serial}/input", json={"kind": "text", "text": told.email})
            told.replies.append(typed.json())
            told.replies.append(_tap(person, api_stack, serial, _labelled("password"), "password field"))
            told.replies.append(person.post(f"/devices/{serial}/input",
                                            json={"kind": "text", "text": told.secret}).json())
            told.replies.append(_tap(person, api_stack, serial, lambda e: e.label == "Next", "Next"))
            wait_until(lambda: find_on_screen(serial, sim.port, _labelled("Primary"), "inbox"), 10,
                       "the inbox after signing in")
            told.answers["back to auto"] = person.post(control, json={"action": "resume"})
            wait_for_event(program, run_id, "run_finished", 240)
            told.answers["after the end"] = person.post(control, json={"action": "stop"})
            yield told
    finally:
        for serial in sim.serials:
            sim.control.set_logged_in(serial, GMAIL, True)


def _error(response: httpx.Response) -> str:
    return str(response.json()["error"])


def test_the_pause_is_in_the_queue_and_reached_the_webhook(story: TakeoverStory,
                                                          pause_webhook: Webhook) -> None:
    entries = [p for p in story.answers["queue"].json() if p["entry"]["run_id"] == story.run_id]
    assert len(entries) == 1
    entry = entries[0]["entry"]
    assert (entry["app_label"], entry["category"]) == ("Gmail", "login")
    assert entries[0]["dashboard"].endswith(f"/#/runs/{story.run_id}")
    notices = [n for n in pause_webhook.received if n["run_id"] == story.run_id]
    assert len(notices) == 1, pause_webhook.received
    assert notices[0]["app"] == "Gmail" and notices[0]["category"] == "login"
    assert "password" in str(notices[0]["reason"])
    assert str(notices[0]["dashboard"]).endswith(f"/#/runs/{story.run_id}")


def test_invalid_commands_are_refused_with_the_reason(story: TakeoverStory) -> None:
    answers = story.answers
    assert answers["pause"].status_code == 409
    assert "waits for a person already" in _error(answers["pause"])
    assert answers["save"].status_code == 409
    assert answers["input before takeover"].status_code == 409
    assert "is not taken over" in _error(answers["input before takeover"])
    assert answers["other takes over"].status_code == 409
    assert f"{story.person_actor} steers run" in _error(answers["other takes over"])
    for who in ("other taps", "program taps"):
        assert answers[who].status_code == 409, who
        assert f"being driven by {story.person_actor}" in _error(answers[who])
    assert answers["after the end"].status_code == 409
    assert "has finished" in _error(answers["after the end"])


def test_take_over_then_back_to_auto_finishes_the_run_from_the_phone(
    story: TakeoverStory, api_stack: ApiStack,
) -> None:
    taken = story.answers["take over"]
    assert taken.status_code == 200, taken.text
    assert taken.json()["mode"] == "takeover" and taken.json()["source"] == "pause"
    assert taken.json()["ready"] is True and taken.json()["serial"] == story.serial
    assert story.replies[1]["did"] == f"text entered, {len(story.email)} characters"
    assert story.replies[3]["did"] == f"text entered, {len(story.secret)} characters"
    assert "a password field shows dots" in story.replies[3]["note"]
    counters = [r["inputs"] for r in story.replies]
    assert counters == sorted(counters) and len(set(counters)) == len(counters)
    back = story.answers["back to auto"]
    assert back.status_code == 200, back.text
    assert back.json()["mode"] == "auto" and not back.json()["waiting"]

    with api_stack.client() as program:
        run = program.get(f"/runs/{story.run_id}").json()
        events = read_events(program, story.run_id)
        report = program.get(f"/runs/{story.run_id}/report")
        data = program.get(f"/runs/{story.run_id}/report.json").json()
        crop = program.get(f"/runs/{story.run_id}/citations/0/crop")
    assert run["manifest"]["status"] == "completed"
    assert set(run["manifest"]["subtasks"].values()) == {"completed"}
    # Each screen the person visited is an intervention step, with who did it.
    person_steps = [e for e in events if e["kind"] == "step" and e["step"]["policy"] == "user"]
    messages = [e["message"] for e in person_steps]
    assert messages[1] == f"text entered, {len(story.email)} characters", messages
    assert len(person_steps) == 5
    assert all(e["actor"] == story.person_actor and e["step"]["intervention"] for e in person_steps)
    assert all(str(e["step"]["screen_key"]).endswith(".png") for e in person_steps)
    controls = [(e["actor"], e["message"]) for e in events if e["kind"] == "control"]
    assert controls[0][0] == story.person_actor and controls[0][1].startswith(f"took over {story.serial}")
    assert controls[-1] == (story.person_actor, f"continued Gmail on {story.serial}")
    # The copilot went on from the inbox the person left, and captured the latest mail.
    kinds = [e["kind"] for e in events]
    assert kinds.index("needs_user") < kinds.index("resumed") < kinds.index("capture_saved")
    assert report.status_code == 200 and report.text.lower().startswith("<!doctype html>")
    assert "sandbox" in report.headers["content-security-policy"]
    assert data["apps"][0]["status"] == "completed" and data["citations"]
    assert crop.status_code == 200 and crop.content.startswith(b"\x89PNG")


def test_reconnecting_with_last_event_id_replays_exactly_the_missed_events(
    story: TakeoverStory, api_stack: ApiStack,
) -> None:
    with api_stack.browser_client() as browser:
        everything = read_events(browser, story.run_id)
        seqs = [int(e["seq"]) for e in everything]
        assert seqs == list(range(1, len(seqs) + 1)), "gap-free, in order, from the first"
        assert everything[-1]["kind"] == "run_finished"
        cut = len(seqs) // 2
        rest = read_events(browser, story.run_id, last_event_id=str(cut))
    assert [int(e["seq"]) for e in rest] == seqs[cut:]
    assert rest == everything[cut:]


def test_typed_text_is_nowhere(story: TakeoverStory, api_stack: ApiStack) -> None:
    typed = [story.email, story.secret]
    client = redis.Redis.from_url(api_stack.settings.redis.url)
    for key in client.scan_iter(count=1000):
        value = _dump(client, key)
        assert not any(t.encode() in value for t in typed), f"typed text in Redis key {key!r}"
    store = open_object_store(api_stack.settings)
    objects = store.list_objects("")
    assert any(o.key.startswith(f"runs/{story.run_id}/screens/") for o in objects)
    for info in objects:
        data = store.get_bytes(info.key)
        assert not any(t.encode() in data for t in typed), f"typed text in object {info.key}"
    logs = api_stack.logs() + api_stack.farm.procs.logs()
    assert logs and not any(t in logs for t in typed)
    with api_stack.client() as program:
        events = read_events(program, story.run_id)
    assert not any(t in str(events) for t in typed)


def _dump(client: redis.Redis[bytes], key: bytes) -> bytes:
    kind = client.execute_command("TYPE", key).decode()
    if kind == "string":
        return client.get(key) or b""
    if kind == "list":
        return b"".join(client.lrange(key, 0, -1))
    if kind == "hash":
        return b"".join(k + v for k, v in client.hgetall(key).items())
    if kind == "set":
        return b"".join(client.smembers(key))
    if kind == "zset":
        return b"".join(m for m, _ in client.zrange(key, 0, -1, withscores=True))
    if kind == "stream":
        return repr(client.xrange(key)).encode()
    return b""

