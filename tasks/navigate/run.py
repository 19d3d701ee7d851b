"""What one sub-task's run keeps across its tries: step records, captures, visited results, events.

Every step, capture and pause goes out as a ``RunEvent`` (the dashboard, the
CLI and the stored trace read the same stream); :class:`SubTaskRun` is the
one place that builds those events. Its :class:`ModelMeter` holds the
sub-task's model budgets (time, requests, and the run's time through the
copilot's model clock); each recorded step takes the model requests and
fallbacks made since the last one, and each fallback goes out as a
``model_fallback`` event naming the role, the reason and the count so far. A
step whose requests were slow (``llm.<role>.slow_call_s``) says so in a ``log``
event and the worker's log.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from core.models import (
    Capture,
    CaptureSource,
    Evaluation,
    InstalledApp,
    RunEvent,
    RunEventKind,
    StepRecord,
    SubTask,
    SubTaskStatus,
    TokenUsage,
)
from device_farm.models import DeviceObservation
from inference.llm import ModelMeter, describe_slow_calls
from inference.maps import MapGuide
from inference.perception import Observation
from inference.rules.apps import names_for
from tasks.mapping.patch import MapPatches
from tasks.navigate.copilot import Copilot, NavigateRequest

__all__ = ["SubTaskRun", "TryEnd", "to_observation"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TryEnd:
    """How a try ended; ``status`` None means it failed and another try may follow."""

    status: SubTaskStatus | None
    reason: str
    risk: Evaluation | None = None
    budget_spent: bool = False  # the try ran out of its step budget (the sub-task ends budget_exhausted)


@dataclass
class SubTaskRun:
    """The sub-task's record across tries, and its voice on the event stream."""

    copilot: Copilot
    request: NavigateRequest
    steps: list[StepRecord] = field(default_factory=list)
    captures: list[Capture] = field(default_factory=list)
    visited: set[str] = field(default_factory=set)  # item signatures of opened results
    empty_searches: set[str] = field(default_factory=set)  # typed terms whose search found nothing
    intervened: bool = False  # a person steered since the last recorded step
    meter: ModelMeter = field(init=False)  # model time left, calls and fallbacks not yet recorded
    guide: MapGuide | None = field(init=False)  # the sub-task's way over the app's map, if it has one
    patches: MapPatches | None = field(init=False)  # screens reached that the map lacks

    def __post_init__(self) -> None:
        budgets = self.copilot.budgets
        self.meter = ModelMeter(budgets.model_s_per_subtask, max_calls=budgets.model_calls_per_subtask,
                                clock=self.copilot.model_clock, run_budget_s=budgets.model_s_per_run)
        subtask = self.subtask
        app_map = self.copilot.load_map(subtask.package)
        self.guide = None
        self.patches = None
        if app_map is not None and self.copilot.maps is not None:
            names = names_for(InstalledApp(package=subtask.package, label=subtask.app_label))
            self.guide = MapGuide(app_map, subtask, ignore=names)
            self.patches = MapPatches(app_map, self.copilot.maps)

    @property
    def subtask(self) -> SubTask:
        return self.request.subtask

    def publish(self, kind: RunEventKind, message: str = "", **attachments: object) -> None:
        """Send one event of this sub-task (nothing when the copilot has no sink)."""
        if self.copilot.events is None:
            return
        event = RunEvent.model_validate({
            "run_id": self.request.run_id, "kind": kind, "subtask_id": self.subtask.id,
            "serial": self.copilot.driver.serial, "message": message, **attachments,
        })
        self.copilot.events.publish(event)

    def record(self, step: StepRecord) -> None:
        """Keep ``step`` (with the model requests and fallbacks since the last one) and publish it.

        The intervention marker holds until a step is recorded: a step that ends the try
        before it is recorded (no policy knew what to do) does not swallow it.
        """
        calls, fallbacks = self.meter.drain()
        if calls or fallbacks:
            tokens = TokenUsage()
            for call in calls:
                tokens = tokens + call.usage
            step = step.model_copy(update={"calls": (*step.calls, *calls), "tokens": step.tokens + tokens,
                                           "fallbacks": (*step.fallbacks, *fallbacks)})
        self.steps.append(step)
        self.publish(RunEventKind.STEP, step.policy, step=step)
        slow = describe_slow_calls(step.calls)
        if slow:
            log.warning("%s step %d: %s", self.subtask.id, step.step, slow)
            self.publish(RunEventKind.LOG, f"step {step.step}: {slow}")
        if step.intervention:
            self.intervened = False
        for fallback in step.fallbacks:
            count = sum(1 for s in self.steps for f in s.fallbacks if f.role == fallback.role)
            self.publish(RunEventKind.MODEL_FALLBACK,
                         f"the {fallback.role}'s model failed ({fallback.reason}); the rules decided "
                         f"step {step.step} ({count} time{'s' if count != 1 else ''} in this sub-task)",
                         fallback=fallback)

    def count_captures(self, source: CaptureSource) -> int:
        """How many captures of ``source`` (auto / user) this run holds."""
        return sum(1 for c in self.captures if c.source is source)


def to_observation(observation: DeviceObservation, step: int) -> Observation:
    """The device's observation as perception's input."""
    return Observation(
        serial=observation.serial, step=step, package=observation.package,
        activity=observation.activity, width=observation.width, height=observation.height,
        screenshot_png=observation.screenshot_png, hierarchy_xml=observation.hierarchy_xml,
    )
