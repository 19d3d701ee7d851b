"""Value types of the flows: what a run is asked, what an app's sub-flow returns, the pause form.

Flow parameters and results are frozen pydantic models so they travel through
the Prefect API as JSON; :class:`PersonInput` is the form a paused sub-flow
shows in the Prefect UI (a Prefect ``RunInput``).
"""

from __future__ import annotations

from typing import Literal, Self

from prefect.input import RunInput
from pydantic import Field, model_validator

from core.models import Frozen, Heard, PageMode, Report, RiskCategory, SubTaskResult

__all__ = ["AppOutcome", "CrashedRun", "PersonInput", "RetrieveRequest", "RunOutcome"]



class RetrieveRequest(Frozen):
    """A question for the ``retrieve`` flow: typed text, or a recording to transcribe."""

    text: str | None = Field(default=None, max_length=2000)
    audio_key: str | None = None  # object-store key of a recording (WAV for pocketsphinx)
    # What was heard in the recording when the caller transcribed it already and a person
    # corrected ``text`` (the dashboard, ``ask --audio``): the recording is not heard again.
    heard: Heard | None = None
    apps: tuple[str, ...] = ()
    mode: PageMode | None = None
    browsing_limit: int = Field(default=3, ge=1, le=20)
    run_id: str | None = None  # chosen by the caller when it wants to follow events first
    navigate_task: str = "copilot.navigate"  # the device task that runs a sub-task
    # Every app on this phone only (a benchmark run brought it to the task's starting state).
    device: str | None = Field(default=None, pattern=r"^[A-Za-z0-9._:\-]{1,64}$")

    @model_validator(mode="after")
    def _has_question(self) -> Self:
        if not (self.text and self.text.strip()) and not self.audio_key:
            raise ValueError("ask a question: give its text or a recording of it")
        return self

    @property
    def title(self) -> str:
        """How the run is named in the Prefect UI."""
        return (self.text or f"spoken question {self.audio_key}").strip()[:80]


class AppOutcome(Frozen):
    """One app's sub-flow: each sub-task's result, the phone it ran on, facts for later apps."""

    package: str
    app_label: str
    device: str | None = None
    results: tuple[SubTaskResult, ...] = ()


class RunOutcome(Frozen):
    """What a finished run returns: the report and where it is stored."""

    run_id: str
    report: Report
    markdown_key: str
    html_key: str
    flow_run_id: str | None = None
    stopped: bool = False  # a person asked to stop early; the report uses what was captured


class CrashedRun(Frozen):
    """A run found crashed (its process ended before it finished) and marked so."""

    run_id: str
    reason: str

    def describe(self) -> str:
        """One line for a person."""
        return f"run {self.run_id} crashed: {self.reason}"


class PersonInput(RunInput):
    """The form a paused app shows: a person took over the phone, then says how to go on."""

    app: str = ""
    reason: str = ""
    category: RiskCategory | None = None
    action: Literal["continue", "skip"] = "continue"  # continue from the current screen, or give up
    note: str = ""
