"""Navigation goals for the task sequences a person recorded on real apps (``real_apps/goals.yaml``).

Each goal names a recorded task file (``tasks/<task>.json`` of a DroidBot
recording), the app, the goal in words and, where the person typed, the
search term. The recorded events give the target screen and the number of
steps a person needed; :func:`recorded_subtask` turns a goal into the
sub-task a planner would give the copilot.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from core.models import PageMode, SubTask
from suites.errors import SuiteError
from suites.task import SUITES_DIR

__all__ = ["RECORDED_GOALS", "RECORDED_SPLIT", "AppSplit", "RecordedGoal", "load_app_split",
           "load_recorded_goals", "recorded_subtask"]

RECORDED_GOALS = SUITES_DIR / "real_apps" / "goals.yaml"
RECORDED_SPLIT = SUITES_DIR / "real_apps" / "split.yaml"


class AppSplit(BaseModel):
    """The recorded apps in two parts: tuning (may be looked at) and held out (only measured)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tuning: tuple[str, ...]
    held_out: tuple[str, ...]

    def part(self, app: str) -> str:
        """``tuning``, ``held out`` or ``neither`` for an app's label (any case)."""
        folded = app.casefold()
        if folded in (a.casefold() for a in self.held_out):
            return "held out"
        return "tuning" if folded in (a.casefold() for a in self.tuning) else "neither"


def load_app_split(path: Path = RECORDED_SPLIT) -> AppSplit:
    """The split of ``path``; an app in both parts is an error."""
    try:
        split = AppSplit.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise SuiteError(f"cannot read the split of the recorded apps {path}: {exc}",
                         hint="give tuning: [...] and held_out: [...] (app labels)") from exc
    both = {a.casefold() for a in split.tuning} & {a.casefold() for a in split.held_out}
    if both:
        raise SuiteError(f"{path}: {sorted(both)} are in both parts", hint="put each app in one part")
    return split


class RecordedGoal(BaseModel):
    """One recorded task sequence as a goal in words."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task: str = Field(min_length=1)  # the task file's name, without .json
    app: str  # launcher label, for people and planners
    goal: str = Field(min_length=1)
    search_term: str | None = None
    page_mode: PageMode = PageMode.FOCUSED
    setup: int = Field(default=0, ge=0)  # recorded events a person does first (logging in)
    hand_over: bool = False  # signing in or up: the agent must stop and ask a person

    @property
    def slug(self) -> str:
        """The task name as an id (``reuters_Terms of use`` -> ``reuters_terms_of_use``)."""
        return "_".join(self.task.lower().split())


def load_recorded_goals(path: Path = RECORDED_GOALS) -> list[RecordedGoal]:
    """Every goal of ``path``, in file order; a task named twice is an error."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        goals = TypeAdapter(list[RecordedGoal]).validate_python(raw)
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise SuiteError(f"cannot read the recorded goals {path}: {exc}",
                         hint="each entry needs task, app and goal (see suites/recorded.py)") from exc
    seen: set[str] = set()
    for goal in goals:
        if goal.task in seen:
            raise SuiteError(f"{path}: task {goal.task!r} has two goals", hint="keep one goal per recorded task")
        seen.add(goal.task)
    return goals


def recorded_subtask(goal: RecordedGoal, package: str) -> SubTask:
    """The sub-task for ``goal`` on the app installed as ``package``."""
    return SubTask(id=f"real-{goal.slug}", app_label=goal.app, package=package, goal=goal.goal,
                   search_term=goal.search_term, page_mode=goal.page_mode)
