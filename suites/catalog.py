"""Suites as a benchmark run names them: a built-in name or a folder of task files.

    suite = resolve_suite("paper-study2")     # or paper, paper-study1, general, examples, smoke
    suite = resolve_suite("./my-suite/")      # a folder a user wrote
    suite.name, suite.tasks, suite.expect

A folder holds task files (``*.yaml``, the format of :mod:`suites.task`,
any study) and optionally a ``suite.yaml``::

    name: smoke                          # default: the folder's name
    description: three quick questions
    include: [s2_single_07_qqmusic_eason]    # tasks of the built-in suites, by id
    expect: {s2_single_07_qqmusic_eason: 1.0}  # least coverage a task must reach

The ``smoke`` suite is such a folder (``suites/smoke``) that only
includes tasks of the other suites.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from suites.errors import SuiteError
from suites.task import SUITES, SUITES_DIR, Study, SuiteTask, load_suite, load_task

__all__ = ["BENCH_SUITES", "Suite", "load_suite_folder", "resolve_suite"]

SUITE_FILE = "suite.yaml"

# Built-in suites a benchmark run names: the loader's suites, each study of the paper, smoke.
BENCH_SUITES: tuple[str, ...] = (*SUITES, "paper-study1", "paper-study2", "smoke")


class Suite(BaseModel):
    """A named list of tasks, with the least coverage some must reach."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, max_length=80)
    description: str = ""
    tasks: tuple[SuiteTask, ...]
    expect: dict[str, float] = Field(default_factory=dict)  # task id -> least coverage


class _SuiteFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str | None = None
    description: str = ""
    include: tuple[str, ...] = ()
    expect: dict[str, float] = Field(default_factory=dict)


def resolve_suite(spec: str) -> Suite:
    """The suite named ``spec`` (see :data:`BENCH_SUITES`), or the folder at that path."""
    if spec in SUITES:
        return Suite(name=spec, tasks=tuple(load_suite(spec)))
    studies = {"paper-study1": Study.STUDY1, "paper-study2": Study.STUDY2}
    if spec in studies:
        return Suite(name=spec, tasks=tuple(t for t in load_suite("paper") if t.study is studies[spec]))
    if spec == "smoke":
        return load_suite_folder(SUITES_DIR / "smoke")
    path = Path(spec).expanduser()
    if path.is_dir():
        return load_suite_folder(path)
    raise SuiteError(f"no suite named {spec!r} and no folder there",
                     hint=f"name one of {', '.join(BENCH_SUITES)}, or a folder of task files")


def load_suite_folder(folder: Path) -> Suite:
    """The tasks of ``folder`` (its task files, and the ones its ``suite.yaml`` includes)."""
    meta = _read_suite_file(folder / SUITE_FILE)
    tasks = [load_task(p) for p in sorted(folder.glob("*.yaml")) if p.name != SUITE_FILE]
    if meta.include:
        known = {t.id: t for t in load_suite(*SUITES)}
        unknown = [i for i in meta.include if i not in known]
        if unknown:
            raise SuiteError(f"{folder / SUITE_FILE} includes tasks no suite has: {', '.join(unknown)}",
                             hint="include ids of suites' task files")
        tasks += [known[i] for i in meta.include]
    if not tasks:
        raise SuiteError(f"{folder} holds no task file",
                         hint="write one YAML file per task (docs/bench.md)")
    ids = [t.id for t in tasks]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise SuiteError(f"{folder} has tasks twice: {', '.join(twice)}",
                         hint="give every task its own id")
    strangers = [i for i in meta.expect if i not in ids]
    if strangers:
        raise SuiteError(f"{folder / SUITE_FILE} expects scores of tasks it lacks: {', '.join(strangers)}",
                         hint="list under expect only the suite's task ids")
    return Suite(name=meta.name or folder.resolve().name, description=meta.description,
                 tasks=tuple(tasks), expect=meta.expect)


def _read_suite_file(path: Path) -> _SuiteFile:
    if not path.exists():
        return _SuiteFile()
    try:
        return _SuiteFile.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")) or {})
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SuiteError(f"{path} is not a valid suite file: {first}",
                         hint="fields: name, description, include, expect (docs/bench.md)") from exc
