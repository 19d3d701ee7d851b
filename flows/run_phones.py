"""The phones a run uses now, each with its app and sub-task, and the run's status as a person sees it.

A run with two apps runs on two phones at once; the person's page lists them so
each steering command names its phone. A phone is in the list while a loop of the
run drives it (its lease is the run's) or while a sub-flow of the run waits for a
person on it. The sub-task comes from the loop's own word (``tasks.control``
``announce``) or from the pause entry; its app from the run's plan.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum

from core.models import Frozen, RunManifest, RunStatus, SubTask
from flows.pause_queue import PauseEntry

__all__ = ["PhoneDoing", "PhoneWork", "describe_phones", "shown_status"]

_SETTLED = frozenset({RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.STOPPED, RunStatus.CRASHED})


class PhoneDoing(StrEnum):
    ACTING = "acting"  # the copilot drives it
    PAUSED = "paused"  # a person paused the copilot on it
    TAKEN_OVER = "taken_over"  # a person drives it
    WAITING = "waiting"  # its sub-flow waits for a person (sign-in, a decision)


class PhoneWork(Frozen):
    """One phone of the run and what it does now."""

    serial: str
    doing: PhoneDoing
    subtask_id: str | None = None
    app_label: str = ""  # "" while the loop has not said which sub-task it runs
    package: str = ""
    task: str = ""  # the sub-task in a few words: its search term, else its goal's first line


def describe_phones(manifest: RunManifest, loops: Sequence[str], announced: Mapping[str, str],
                    waiting: Sequence[PauseEntry], steered: tuple[str, PhoneDoing] | None,
                    ) -> tuple[PhoneWork, ...]:
    """Every phone of the run now, in serial order (a phone both in a loop and waiting is waiting).

    ``steered``: the phone a person paused or took over, and which of the two.
    """
    subtasks = {s.id: s for s in manifest.plan.subtasks} if manifest.plan is not None else {}
    work: dict[str, PhoneWork] = {}
    for serial in loops:
        work[serial] = _phone(serial, PhoneDoing.ACTING, subtasks.get(announced.get(serial, "")))
    for entry in waiting:
        known = subtasks.get(entry.subtask_id)
        work[entry.serial] = _phone(entry.serial, PhoneDoing.WAITING, known).model_copy(update={
            "subtask_id": entry.subtask_id, "app_label": entry.app_label,
            "package": entry.package})
    if steered is not None and steered[0] in work:
        serial, doing = steered
        work[serial] = work[serial].model_copy(update={"doing": doing})
    return tuple(work[s] for s in sorted(work))


def shown_status(status: RunStatus, phones: Sequence[PhoneWork]) -> RunStatus:
    """The run's status as a person should see it now.

    The manifest says ``paused`` only while a sub-flow waits (the flow writes it), and with
    two phones the last writer wins; a person's pause of a loop never reaches it. So: a
    finished or not yet started run is what the manifest says; else ``paused`` while any
    phone waits for a person or is steered by one, ``running`` otherwise.
    """
    if status in _SETTLED or status is RunStatus.PENDING:
        return status
    if any(p.doing is not PhoneDoing.ACTING for p in phones):
        return RunStatus.PAUSED
    return RunStatus.RUNNING


def _phone(serial: str, doing: PhoneDoing, subtask: SubTask | None) -> PhoneWork:
    if subtask is None:
        return PhoneWork(serial=serial, doing=doing)
    task = subtask.search_term or subtask.goal.split("\n")[0]
    return PhoneWork(serial=serial, doing=doing, subtask_id=subtask.id,
                     app_label=subtask.app_label, package=subtask.package, task=task[:120])
