"""What the copilot does on a phone: a discriminated union on ``kind``, and its preview."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal, Self

from pydantic import Field, model_validator

from core.models.base import Frozen
from core.models.geometry import Bounds, Point

__all__ = [
    "Action",
    "Back",
    "Finish",
    "Input",
    "LongPress",
    "OpenApp",
    "Preview",
    "Scroll",
    "ScrollDirection",
    "Swipe",
    "Tap",
    "Wait",
]


class ScrollDirection(StrEnum):
    UP = "up"
    DOWN = "down"
    LEFT = "left"
    RIGHT = "right"


class _ActionBase(Frozen):
    reason: str = ""


class Tap(_ActionBase):
    kind: Literal["tap"] = "tap"
    target: str | None = None  # element id
    point: Point | None = None

    @model_validator(mode="after")
    def _has_target(self) -> Self:
        if self.target is None and self.point is None:
            raise ValueError("a tap needs a target element id or a point")
        return self


class LongPress(_ActionBase):
    kind: Literal["long_press"] = "long_press"
    target: str | None = None
    point: Point | None = None
    duration_ms: int = Field(default=800, ge=100, le=10_000)


class Input(_ActionBase):
    kind: Literal["input"] = "input"
    text: str
    target: str | None = None  # field to focus first; None = the focused field
    submit: bool = False  # press enter afterwards


class Scroll(_ActionBase):
    kind: Literal["scroll"] = "scroll"
    direction: ScrollDirection = ScrollDirection.DOWN
    fraction: float = Field(default=0.67, gt=0.0, le=1.0)
    target: str | None = None  # scrollable container; None = main one


class Swipe(_ActionBase):
    kind: Literal["swipe"] = "swipe"
    start: Point
    end: Point
    duration_ms: int = Field(default=300, ge=10, le=10_000)


class Back(_ActionBase):
    kind: Literal["back"] = "back"


class OpenApp(_ActionBase):
    kind: Literal["open_app"] = "open_app"
    package: str
    # Stop the app first so it starts on its first page: an app left by Back may otherwise
    # resume on the page the agent was leaving.
    fresh: bool = False


class Wait(_ActionBase):
    kind: Literal["wait"] = "wait"
    seconds: float = Field(default=1.0, gt=0.0, le=30.0)


class Finish(_ActionBase):
    kind: Literal["finish"] = "finish"


Action = Annotated[
    Tap | LongPress | Input | Scroll | Swipe | Back | OpenApp | Wait | Finish,
    Field(discriminator="kind"),
]


class Preview(Frozen):
    """An action announced before it runs, so a person can see and stop it."""

    step: int
    action: Action
    instruction: str  # "Tap [Texas]", "Enter [McDonald] in [Search]"
    box: Bounds | None = None
    policy: str = ""
    window_s: float = Field(default=0.0, ge=0.0)  # the confirm window: how long a person may stop it
