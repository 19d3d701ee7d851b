"""A scripted path through an app, step by step, as a person (or a script) walks it.

Benchmark suites (``suites``) write one per app of a task; the
copilot plays one to learn a route (``tasks.navigate.paths``). Written in task
files as one-key mappings (``tap_text: 京东``) or bare words (``submit``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Self

from pydantic import Field, model_validator

from core.models.base import Frozen

__all__ = ["Step", "StepKind"]


class StepKind(StrEnum):
    """A scripted step, as a person (or a script) does it on the phone."""

    OPEN_APP = "open_app"  # launch the app with this label
    TAP_TEXT = "tap_text"  # tap the centre of the node whose text (or content-desc) is exactly this
    INPUT = "input"  # type this text into the focused field
    SUBMIT = "submit"  # press ENTER (runs the focused search)
    BACK = "back"  # press BACK
    SWIPE_UP = "swipe_up"  # N swipes of about 2/3 screen, reading the screen after each
    EXPECT_TEXT = "expect_text"  # this text must be on the screen now (a check, not a move)
    CAPTURE = "capture"  # keep the current page and its scrolls as evidence (multi-page paths)

    @property
    def navigates(self) -> bool:
        """Whether the step may change the page (the evidence collected so far then ends)."""
        return self in _NAVIGATING


_NAVIGATING = frozenset({StepKind.OPEN_APP, StepKind.TAP_TEXT, StepKind.SUBMIT, StepKind.BACK})
_NEEDS_TEXT = frozenset({StepKind.OPEN_APP, StepKind.TAP_TEXT, StepKind.INPUT, StepKind.EXPECT_TEXT})


class Step(Frozen):
    """One step of a path: ``kind`` and its text or count."""

    kind: StepKind
    text: str = ""  # open_app / tap_text / input / expect_text
    count: int = Field(default=1, ge=1, le=50)  # swipe_up

    @model_validator(mode="before")
    @classmethod
    def _from_yaml(cls, value: object) -> object:
        """Accept ``submit`` and ``{tap_text: 京东}`` / ``{swipe_up: 3}`` as written in task files."""
        if isinstance(value, str):
            return {"kind": value}
        if isinstance(value, dict) and len(value) == 1 and "kind" not in value:
            ((kind, arg),) = value.items()
            if kind == StepKind.SWIPE_UP.value:
                return {"kind": kind, "count": arg}
            return {"kind": kind, "text": "" if arg is None else str(arg)}
        return value

    @model_validator(mode="after")
    def _check_argument(self) -> Self:
        if self.kind in _NEEDS_TEXT and not self.text:
            raise ValueError(f"step {self.kind.value!r} needs a text, e.g. '{self.kind.value}: ...'")
        return self
