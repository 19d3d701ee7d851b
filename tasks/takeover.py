"""A person drives a phone by remote control, and every screen they visit becomes an intervention step.

    apply_remote_input(driver, RemoteInput(kind="tap", x=540, y=1200))   -> the phone taps
    InterventionRecorder(store, events, redis).record(run, sub-task, input, png, actor)
        -> runs/<run>/screens/<sub-task>/takeover-0001.png + a STEP event (policy "user",
           intervention) with who did it and when

The API's ``POST /devices/{serial}/input`` uses both, through the same
``device_farm`` driver the workers use. Typed text is a secret from the moment
it arrives (:class:`pydantic.SecretStr`): the step, the event, the logs and any
error say "text entered, N characters" and nothing more.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Self

import redis
from pydantic import Field, SecretStr, model_validator

from core.models import (
    Action,
    Back,
    Frozen,
    LongPress,
    Point,
    RunEvent,
    RunEventKind,
    StepRecord,
    Swipe,
    Tap,
)
from device_farm.driver import Driver
from device_farm.errors import InputNotApplied
from device_farm.models import Key
from storage import ObjectStore, RunKeys
from tasks.keys import takeover_steps_key
from tasks.navigate.copilot import EventSink

__all__ = ["InterventionRecorder", "RemoteInput", "RemoteInputKind", "apply_remote_input"]

_MAX_TEXT = 500
_COUNTER_TTL_S = 7 * 24 * 3600


class RemoteInputKind(StrEnum):
    TAP = "tap"
    LONG_PRESS = "long_press"
    SWIPE = "swipe"
    TEXT = "text"
    BACK = "back"
    HOME = "home"


class RemoteInput(Frozen):
    """One thing a person does on a phone they took over. Coordinates are the phone's pixels."""

    kind: RemoteInputKind
    x: int | None = Field(default=None, ge=0, le=20_000)
    y: int | None = Field(default=None, ge=0, le=20_000)
    x2: int | None = Field(default=None, ge=0, le=20_000)  # where a swipe ends
    y2: int | None = Field(default=None, ge=0, le=20_000)
    duration_ms: int = Field(default=300, ge=10, le=10_000)
    # A secret from the start: its repr, its JSON and every message show only its length.
    text: SecretStr | None = Field(default=None)

    @model_validator(mode="after")
    def _complete(self) -> Self:
        needs_point = self.kind in (RemoteInputKind.TAP, RemoteInputKind.LONG_PRESS,
                                    RemoteInputKind.SWIPE)
        if needs_point and (self.x is None or self.y is None):
            raise ValueError(f"a {self.kind.value} needs x and y")
        if self.kind is RemoteInputKind.SWIPE and (self.x2 is None or self.y2 is None):
            raise ValueError("a swipe needs x2 and y2, where it ends")
        if self.kind is RemoteInputKind.TEXT:
            length = len(self.text.get_secret_value()) if self.text is not None else 0
            if not 0 < length <= _MAX_TEXT:
                raise ValueError(f"text must be 1 to {_MAX_TEXT} characters")
        return self

    @property
    def start(self) -> Point:
        return Point(x=self.x or 0, y=self.y or 0)

    def describe(self) -> str:
        """What the person did, in words that never include typed text."""
        match self.kind:
            case RemoteInputKind.TAP:
                return f"tap at ({self.x}, {self.y})"
            case RemoteInputKind.LONG_PRESS:
                return f"long press at ({self.x}, {self.y})"
            case RemoteInputKind.SWIPE:
                return f"swipe from ({self.x}, {self.y}) to ({self.x2}, {self.y2})"
            case RemoteInputKind.TEXT:
                return f"text entered, {self._length()} characters"
            case RemoteInputKind.BACK:
                return "back"
            case RemoteInputKind.HOME:
                return "home"

    def to_action(self) -> Action | None:
        """The action for the step record; None for text (never kept) and home."""
        match self.kind:
            case RemoteInputKind.TAP:
                return Tap(point=self.start, reason="a person tapped")
            case RemoteInputKind.LONG_PRESS:
                return LongPress(point=self.start, duration_ms=max(100, self.duration_ms),
                                 reason="a person long-pressed")
            case RemoteInputKind.SWIPE:
                return Swipe(start=self.start, end=Point(x=self.x2 or 0, y=self.y2 or 0),
                             duration_ms=self.duration_ms, reason="a person swiped")
            case RemoteInputKind.BACK:
                return Back(reason="a person pressed back")
            case _:
                return None

    def _length(self) -> int:
        return len(self.text.get_secret_value()) if self.text is not None else 0


def apply_remote_input(driver: Driver, remote: RemoteInput) -> str:
    """Carry out ``remote`` on the phone; returns a note for the person ("" when all went well).

    Device faults propagate (their messages name the action, never typed text).
    """
    match remote.kind:
        case RemoteInputKind.TAP:
            driver.tap(remote.start)
        case RemoteInputKind.LONG_PRESS:
            driver.long_press(remote.start, max(100, remote.duration_ms))
        case RemoteInputKind.SWIPE:
            driver.swipe(remote.start, Point(x=remote.x2 or 0, y=remote.y2 or 0), remote.duration_ms)
        case RemoteInputKind.BACK:
            driver.key(Key.BACK)
        case RemoteInputKind.HOME:
            driver.key(Key.HOME)
        case RemoteInputKind.TEXT:
            return _type(driver, remote)
    return ""


def _type(driver: Driver, remote: RemoteInput) -> str:
    secret = remote.text.get_secret_value() if remote.text is not None else ""
    try:
        driver.input_text(secret)
    except InputNotApplied:
        # The text was sent, but the focused field does not show it: a password field shows
        # dots, or no field had the focus. The person sees which; the driver's message quotes
        # the text and the field, so it goes no further than here.
        return "typed; the field does not show it (a password field shows dots; if no field " \
               "had the focus, tap one and type again)"
    return ""


class InterventionRecorder:
    """Keeps each screen a person visited as an intervention step of the sub-task they steer."""

    def __init__(self, store: ObjectStore, events: EventSink, client: redis.Redis[bytes]) -> None:
        self._store = store
        self._events = events
        self._redis = client

    def record(self, run_id: str, subtask_id: str, remote: RemoteInput, screenshot_png: bytes,
               actor: str) -> StepRecord:
        """Store the screen after ``remote`` and publish it as a STEP event; returns the step."""
        counter = takeover_steps_key(run_id, subtask_id)
        pipe = self._redis.pipeline()
        pipe.incr(counter)
        pipe.expire(counter, _COUNTER_TTL_S)
        number = int(pipe.execute()[0])
        key = RunKeys(run_id).key("screens", subtask_id, f"takeover-{number:04d}.png")
        self._store.put_bytes(key, screenshot_png, "image/png")
        step = StepRecord(step=number, subtask_id=subtask_id, screen_key=key,
                          action=remote.to_action(), policy="user", intervention=True)
        self._events.publish(RunEvent(run_id=run_id, kind=RunEventKind.STEP, subtask_id=subtask_id,
                                      message=remote.describe(), actor=actor, step=step))
        return step
