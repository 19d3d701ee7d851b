"""Where one phone is in one recorded app, and what its actions did there.

Plain data, deep-copied with the phone's state for snapshots. Typed text is
kept to show it in the dump (drivers check their text landed) and never goes
in the trail: the trail says "text", not what was typed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from device_farm.sim.replay.graph import ViewKey

__all__ = ["Outcome", "ReplayCursor", "ReplayStep", "field_key"]

TRAIL_LIMIT = 2000  # steps a phone keeps (oldest dropped)


class Outcome(StrEnum):
    """What an action did on a replayed app."""

    LAUNCHED = "launched"  # the app (re)started on its launch screen
    RECORDED = "recorded"  # matched a recorded event: the recorded next screen
    SUBMITTED = "submitted"  # ENTER after typing: the screen the recording showed next
    FOCUSED = "focused"  # a tap focused a text field, DEL edited it: the screen stays, as on a phone
    BACK = "back"  # BACK with no recorded event: the screen before, from this phone's back stack
    LEFT = "left"  # BACK on the first screen: the app went to the background
    OFF_GRAPH = "off_graph"  # no recorded outcome: the screen stays as it was


class ReplayStep(BaseModel):
    """One action on a replayed app and the screen it left the phone on."""

    model_config = ConfigDict(frozen=True)

    package: str
    action: str  # "tap 540,1210", "long_press ...", "text", "swipe DOWN", "key BACK", "launch"
    outcome: Outcome
    screen: str  # screen key after the action: "<state_str>.<layout>@<width>x<height>"


@dataclass
class ReplayCursor:
    """One phone's place in one recorded app."""

    package: str
    screen: str
    history: list[str] = field(default_factory=list)  # screens to go BACK to, oldest first
    focused: ViewKey | None = None  # the text field input goes to
    pending: str | None = None  # typed into a field whose next screen shows no field: ENTER goes there
    typed: dict[str, str] = field(default_factory=dict)  # "<screen>|<field>" -> text shown in it
    trail: list[ReplayStep] = field(default_factory=list)  # the phone's trail, shared by its cursors

    def note(self, action: str, outcome: Outcome) -> Outcome:
        """Record an action's outcome on the phone's trail."""
        self.trail.append(ReplayStep(package=self.package, action=action, outcome=outcome, screen=self.screen))
        del self.trail[:-TRAIL_LIMIT]
        return outcome

    def move(self, screen: str) -> None:
        """Show ``screen``; the one before goes on the back stack (not for the same screen)."""
        if screen != self.screen:
            self.history.append(self.screen)
            self.screen = screen
            self.focused, self.pending = None, None


def field_key(screen: str, view: ViewKey) -> str:
    """The key of a text field's typed text on one screen."""
    return f"{screen}|{view.content_free}|{view.box.to_uiautomator()}"
