"""A person's remote input on a virtual phone, and the intervention steps it leaves.

Typed text is a secret from the request on: it is never in a repr, a JSON dump, a step, an
event or an error; the step says "text entered, N characters".
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis
from pydantic import ValidationError

from core.models import RunEventKind, new_id
from device_farm.adb_driver import AdbDriver
from device_farm.models import Key
from device_farm.sim import SimServer
from storage import FakeObjectStore, RunEventPublisher, RunEventReader
from tasks.takeover import InterventionRecorder, RemoteInput, apply_remote_input
from tests.support.phone import find_on_screen

MEITUAN = "com.sankuai.meituan"
SECRET = "correct-horse-42"


@pytest.fixture()
def phone(sim: SimServer) -> Iterator[AdbDriver]:
    sim.control.reset("boot")
    driver = AdbDriver(sim.serials[0], port=sim.port)
    try:
        yield driver
    finally:
        driver.close()


def _text(value: str) -> RemoteInput:
    return RemoteInput.model_validate({"kind": "text", "text": value})


def test_typed_text_stays_secret_in_every_form() -> None:
    typed = _text(SECRET)
    assert SECRET not in repr(typed) and SECRET not in str(typed)
    assert SECRET not in typed.model_dump_json()
    assert typed.describe() == f"text entered, {len(SECRET)} characters"
    assert typed.to_action() is None  # a step never carries the text
    with pytest.raises(ValidationError) as too_long:
        _text(SECRET * 40)
    assert SECRET not in str(too_long.value.errors(include_input=False))


@pytest.mark.parametrize(("fields", "problem"), [
    ({"kind": "tap", "x": 5}, "a tap needs x and y"),
    ({"kind": "swipe", "x": 1, "y": 2}, "a swipe needs x2 and y2"),
    ({"kind": "text"}, "text must be 1 to 500 characters"),
    ({"kind": "tap", "x": -1, "y": 2}, "greater than or equal to 0"),
])
def test_incomplete_inputs_are_refused(fields: dict[str, object], problem: str) -> None:
    with pytest.raises(ValidationError, match=problem):
        RemoteInput.model_validate(fields)


@pytest.mark.services
def test_remote_input_drives_the_phone(phone: AdbDriver, sim: SimServer) -> None:
    phone.open_app(MEITUAN)
    home = phone.focused_app()[1]
    # The app greets with a pop-up over everything: close it as a person would.
    close, _ = find_on_screen(phone.serial, sim.port, lambda e: e.resource_id == "android:id/button2",
                              "the pop-up's close button")
    apply_remote_input(phone, RemoteInput(kind="tap", x=close.x, y=close.y))
    point, _ = find_on_screen(phone.serial, sim.port, lambda e: e.resource_id.endswith("entry_food"),
                              "the food entry")
    assert apply_remote_input(phone, RemoteInput(kind="tap", x=point.x, y=point.y)) == ""
    assert phone.focused_app()[1] != home  # the tap opened the food list
    apply_remote_input(phone, RemoteInput(kind="swipe", x=540, y=1600, x2=540, y2=800))
    apply_remote_input(phone, RemoteInput(kind="back"))
    assert phone.focused_app()[1] == home
    apply_remote_input(phone, RemoteInput(kind="home"))
    assert phone.focused_app()[0] != MEITUAN
    # Nothing has the focus on the home screen: the text goes nowhere, and the person is told
    # (typing into a field is in tests/api: the sign-in of a login pause).
    note = apply_remote_input(phone, _text(SECRET))
    assert "the field does not show it" in note and SECRET not in note
    phone.key(Key.HOME)


@pytest.mark.services
def test_each_input_leaves_a_screen_and_an_intervention_step(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    store = FakeObjectStore()
    recorder = InterventionRecorder(store, RunEventPublisher(client, store), client)
    run_id = new_id("run")
    png = b"\x89PNG fake screen bytes"
    first = recorder.record(run_id, "mail-1", RemoteInput(kind="tap", x=10, y=20), png, "browser a")
    second = recorder.record(run_id, "mail-1", _text(SECRET), png, "browser a")
    assert (first.step, second.step) == (1, 2)
    assert second.screen_key == f"runs/{run_id}/screens/mail-1/takeover-0002.png"
    assert store.get_bytes(second.screen_key) == png
    events = RunEventReader(client).read_after(run_id)
    assert [e.kind for e in events] == [RunEventKind.STEP, RunEventKind.STEP]
    assert [e.message for e in events] == ["tap at (10, 20)", f"text entered, {len(SECRET)} characters"]
    assert all(e.actor == "browser a" and e.step and e.step.intervention and e.step.policy == "user"
               for e in events)
    assert events[1].step is not None and events[1].step.action is None
    assert SECRET not in "".join(e.model_dump_json() for e in events)
    assert not any(SECRET.encode() in store.get_bytes(i.key) for i in store.list_objects(""))
    client.close()
