"""One benchmark task: the question, its apps, page mode, scoring points and scripted paths.

Suites are folders, loaded by name (:data:`SUITES`): ``paper`` (the DroidRetriever
paper's Study 1 and Study 2), ``examples`` (the product's own), ``general``
(questions of our own about the same virtual phones, written the way the paper's
Study 3 varied its tasks; never mixed into the paper's), ``heldout`` (more
questions by the same protocol, written before the app-map work and only measured
at its end, never read to tune rules: ``heldout/README.md``) and ``dev`` (questions by
the same protocol to develop general mechanisms on, read freely; distinct from the
held-out suite: ``dev/README.md``). ``load_suite()`` with no name loads ``paper`` and
``examples``.

A task file looks like this (``study2/s2_single_04_amap_driving_time.yaml``)::

    id: s2_single_04_amap_driving_time
    study: study2
    query: Check the driving time to Shanghai using Amap.
    apps: [Amap]
    page_mode: focused
    access: open_web
    criteria: Give 15h (allowable error within ±1h).
    scoring_points: ["15小时12分"]
    paths:
      Amap:
        - open_app: Amap
        - tap_text: 搜索地点、公交、地铁
        - input: 上海
        - submit
        - tap_text: 上海市
        - tap_text: 路线
        - expect_text: 驾车方案

Steps are one-key mappings (``tap_text: 京东``) or bare words for the steps
without an argument (``submit``, ``back``, ``capture``). What a step means on
a phone is described on :class:`core.models.StepKind`. The evidence of a path is the page
reached by its last navigating step plus the screens its later swipes show,
and every page kept earlier with ``capture`` (multi-page tasks).

Optional fields, for scoring (``suites.scoring``) and for the
phones' starting state:

    wrong_points: ["¥35.0"]        values a report must not state as the answer (another
                                   record, one a filter excludes); each must be on the
                                   path's screens too
    tolerances: {"15小时12分": "±1小时"}   how far a one-value point may be off
    signed_out: [Gmail]            apps logged out on the phones before the question
    pauses: [Gmail]                apps where a person is expected to be asked: the path
                                   has to log in (the coverage test checks both ways)
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Self

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from core.models import PageMode, Step, StepKind
from suites.errors import SuiteError

__all__ = [
    "SUITES",
    "SUITES_DIR",
    "Access",
    "Study",
    "SuiteTask",
    "load_suite",
    "load_task",
]

SUITES_DIR = Path(__file__).resolve().parent


class Study(StrEnum):
    """Which study of the DroidRetriever paper a task comes from."""

    STUDY1 = "study1"  # report synthesis from screens (Table 1 / Table 5)
    STUDY2 = "study2"  # end-to-end retrieval (Tables 2, 3, 6, 7)
    EXAMPLES = "examples"  # the product's own examples (Crumbl pickup, hotels near USJ)
    GENERAL = "general"  # our own questions by the Study 3 protocol (suites/general)
    HELDOUT = "heldout"  # questions written before the app-map work, measured only at its end
    DEV = "dev"  # questions to develop general mechanisms on; distinct from the held-out suite


# Suite name -> the folders (each named after its study) it is made of.
SUITES: dict[str, tuple[Study, ...]] = {
    "paper": (Study.STUDY1, Study.STUDY2),
    "examples": (Study.EXAMPLES,),
    "general": (Study.GENERAL,),
    "heldout": (Study.HELDOUT,),
    "dev": (Study.DEV,),
}


class Access(StrEnum):
    """Whether a general web agent could reach the answer (paper, Tables 2 and 3)."""

    OPEN_WEB = "open_web"
    LOGIN_GATED = "login_gated"


class SuiteTask(BaseModel):
    """A benchmark task with everything needed to check that the phones can answer it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^(s[12]|ex|g|h|d)_[a-z0-9_]+$")
    study: Study
    query: str = Field(min_length=1)
    apps: tuple[str, ...] = Field(min_length=1)  # launcher labels
    page_mode: PageMode
    access: Access
    criteria: str = ""  # the paper's scoring criterion, for people grading reports
    day: int = 0  # simulated day on which the scoring points hold (data varies by day)
    scoring_points: tuple[str, ...] = Field(min_length=1)
    wrong_points: tuple[str, ...] = ()
    tolerances: dict[str, str] = Field(default_factory=dict)
    signed_out: tuple[str, ...] = ()  # launcher labels
    pauses: tuple[str, ...] = ()  # launcher labels
    paths: dict[str, tuple[Step, ...]]

    @model_validator(mode="before")
    @classmethod
    def _parse_page_mode(cls, value: object) -> object:
        if isinstance(value, dict) and isinstance(value.get("page_mode"), str):
            return {**value, "page_mode": PageMode.parse(value["page_mode"])}
        return value

    @model_validator(mode="after")
    def _check_paths(self) -> Self:
        missing = [a for a in self.apps if a not in self.paths]
        extra = [a for a in self.paths if a not in self.apps]
        if missing or extra:
            raise ValueError(f"paths must name exactly the apps {list(self.apps)}: "
                             f"missing {missing}, not in apps {extra}")
        for app, steps in self.paths.items():
            if not steps or steps[0].kind is not StepKind.OPEN_APP or steps[0].text != app:
                raise ValueError(f"the path of {app!r} must start with 'open_app: {app}'")
        for field in ("signed_out", "pauses"):
            strangers = [a for a in getattr(self, field) if a not in self.apps]
            if strangers:
                raise ValueError(f"{field} names apps the task does not use: {strangers}")
        unknown = [p for p in self.tolerances if p not in self.scoring_points + self.wrong_points]
        if unknown:
            raise ValueError(f"tolerances name values that are not points of the task: {unknown}")
        both = sorted(set(self.scoring_points) & set(self.wrong_points))
        if both:
            raise ValueError(f"values both right and wrong: {both}")
        return self


def load_task(path: Path) -> SuiteTask:
    """Read and validate one task file; the id must match the file name."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise SuiteError(f"cannot read task file {path}: {exc}",
                         hint="fix the YAML syntax (see suites/task.py)") from exc
    try:
        task = SuiteTask.model_validate(raw)
    except ValidationError as exc:
        lines = [f"  {'.'.join(str(p) for p in e['loc']) or '(top level)'}: {e['msg']}"
                 for e in exc.errors()]
        raise SuiteError(f"{path} is not a valid task:\n" + "\n".join(lines[:20]),
                         hint="compare with the example in suites/task.py") from exc
    if task.id != path.stem:
        raise SuiteError(f"{path}: id {task.id!r} differs from the file name",
                         hint=f"rename the file to {task.id}.yaml or change the id")
    return task


def load_suite(*names: str, root: Path = SUITES_DIR) -> list[SuiteTask]:
    """The tasks of the named suites (default ``paper`` and ``examples``), sorted by id.

    A suite's tasks live in the folders of its studies under ``root``; a task
    filed in another study's folder is refused, so suites never mix.
    """
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        raise SuiteError(f"no suite named {', '.join(unknown)}",
                         hint=f"the suites are: {', '.join(SUITES)}")
    tasks: list[SuiteTask] = []
    for name in names or ("paper", "examples"):
        for study in SUITES[name]:
            for path in sorted((root / study.value).glob("*.yaml")):
                task = load_task(path)
                if task.study is not study:
                    raise SuiteError(f"{path} is a {task.study.value} task in the {study.value} folder",
                                     hint=f"move it to {task.study.value}/ or fix its study")
                tasks.append(task)
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise SuiteError(f"task id {task.id} is used twice under {root}",
                             hint="give every task file its own id")
        seen.add(task.id)
    return sorted(tasks, key=lambda t: t.id)
