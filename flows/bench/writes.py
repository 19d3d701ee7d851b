"""What a benchmark run wrote to Prefect, counted through Prefect's own client.

    writes = count_prefect_writes(results.flow_run_id)   # the bench flow run and all below it
    writes.flow_runs, writes.task_runs, writes.states, writes.logs, writes.artifacts

Every row counted is one the Prefect server wrote (and, on the embedded stack, one its
database had to take while every phone's run wrote too): the measure of how hard a suite
leans on the server per question (docs/bench.md, "Load on Prefect").
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import TypeVar
from uuid import UUID

from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.filters import (
    ArtifactFilter,
    ArtifactFilterFlowRunId,
    FlowRunFilter,
    FlowRunFilterId,
    FlowRunFilterParentTaskRunId,
    LogFilter,
    LogFilterFlowRunId,
)
from prefect.client.schemas.objects import FlowRun, TaskRun

from core.models import Frozen

__all__ = ["PrefectWrites", "count_prefect_writes"]

_PAGE = 200  # the server's largest page
_T = TypeVar("_T")


class PrefectWrites(Frozen):
    """Rows Prefect stored for a flow run and every run below it."""

    flow_runs: int
    task_runs: int
    states: int  # state changes of those flow and task runs
    logs: int
    artifacts: int
    info_logs: int = 0  # of the logs, those below WARNING (the engine's "Finished in state ...")

    @property
    def total(self) -> int:
        return self.flow_runs + self.task_runs + self.states + self.logs + self.artifacts

    def line(self, questions: int = 1) -> str:
        """The counts in words, divided by ``questions`` (what one question costs, with its
        share of the ``bench`` flow run's own)."""
        n = max(1, questions)

        def each(count: int) -> str:
            return f"{count / n:.1f}" if n > 1 else str(count)

        return (f"{each(self.flow_runs)} flow runs, {each(self.task_runs)} task runs, "
                f"{each(self.states)} state changes, {each(self.logs)} logs "
                f"({each(self.info_logs)} below WARNING), {each(self.artifacts)} artifacts "
                f"({each(self.total)} rows)")


def count_prefect_writes(flow_run_id: str | UUID, *, settle_s: float = 6.0) -> PrefectWrites:
    """Count what Prefect stored for ``flow_run_id`` and its sub-flows, once the counts settle.

    Task runs and logs reach the server a moment after the runs end (events and batched log
    writes), so the tree is counted again until two counts ``settle_s`` apart agree.
    """
    with get_client(sync_client=True) as client:
        last = _count(client, UUID(str(flow_run_id)))
        while True:
            time.sleep(settle_s)
            now = _count(client, UUID(str(flow_run_id)))
            if now == last:
                return now
            last = now


def _count(client: SyncPrefectClient, root: UUID) -> PrefectWrites:
    flow_ids, task_ids, frontier = [root], [], [root]
    while frontier:  # a level of flow runs -> their task runs -> the sub-flows below those
        level = [t.id for t in _task_runs(client, frontier)]
        task_ids += level
        frontier = [f.id for f in _sub_flow_runs(client, level)] if level else []
        flow_ids += frontier
    states = sum(len(client.read_flow_run_states(i)) for i in flow_ids) + sum(
        len(client.read_task_run_states(i)) for i in task_ids)
    logs = _pages(lambda offset: client.read_logs(
        LogFilter(flow_run_id=LogFilterFlowRunId(any_=flow_ids)), limit=_PAGE, offset=offset))
    artifacts = _pages(lambda offset: client.read_artifacts(
        artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=flow_ids)),
        limit=_PAGE, offset=offset))
    return PrefectWrites(flow_runs=len(flow_ids), task_runs=len(task_ids), states=states,
                         logs=len(logs), artifacts=len(artifacts),
                         info_logs=sum(1 for entry in logs if entry.level < logging.WARNING))


def _task_runs(client: SyncPrefectClient, flow_ids: list[UUID]) -> list[TaskRun]:
    return _pages(lambda offset: client.read_task_runs(
        flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=flow_ids)), limit=_PAGE, offset=offset))


def _sub_flow_runs(client: SyncPrefectClient, task_ids: list[UUID]) -> list[FlowRun]:
    return _pages(lambda offset: client.read_flow_runs(
        flow_run_filter=FlowRunFilter(parent_task_run_id=FlowRunFilterParentTaskRunId(any_=task_ids)),
        limit=_PAGE, offset=offset))


def _pages(read: Callable[[int], Sequence[_T]]) -> list[_T]:
    rows: list[_T] = []
    while True:
        page = read(len(rows))
        rows += page
        if len(page) < _PAGE:
            return rows
