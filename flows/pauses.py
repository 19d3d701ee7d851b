"""Resume a run that waits for a person: the CLI's ``droidretriever resume RUN`` and the API's.

A paused app is a Paused Prefect sub-flow tagged ``run:<run_id>``; resuming
sends the :class:`~flows.models.PersonInput` form's answer, exactly as the
Prefect UI's form does.
"""

from __future__ import annotations

from typing import Literal

import httpx
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import (
    FlowRunFilter,
    FlowRunFilterState,
    FlowRunFilterStateType,
    FlowRunFilterTags,
)
from prefect.client.schemas.objects import FlowRun, StateType
from prefect.exceptions import PrefectException
from prefect.flow_runs import resume_flow_run

from flows.errors import FlowError, RunNotPausedError
from flows.models import PersonInput

__all__ = ["list_paused_flow_runs", "resume_run"]


def list_paused_flow_runs(run_id: str) -> list[FlowRun]:
    """The run's sub-flows (one per app) that wait for a person now."""
    try:
        with get_client(sync_client=True) as client:
            return list(client.read_flow_runs(flow_run_filter=FlowRunFilter(
                tags=FlowRunFilterTags(all_=[f"run:{run_id}"]),
                state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.PAUSED])),
            )))
    except (httpx.HTTPError, PrefectException) as exc:
        raise FlowError(f"cannot ask Prefect which parts of run {run_id} are paused: {exc}",
                        hint="is the Prefect server up? `droidretriever status`") from exc


def resume_run(run_id: str, action: Literal["continue", "skip"] = "continue",
               note: str = "", app: str | None = None) -> list[str]:
    """Resume the run's paused apps (or only ``app``); returns the names of the resumed sub-flows."""
    paused = list_paused_flow_runs(run_id)
    if app is not None:
        paused = [r for r in paused if f"app:{app}" in r.tags or r.name.startswith(f"{app} ")]
    if not paused:
        which = f" in {app}" if app else ""
        raise RunNotPausedError(f"nothing of run {run_id}{which} waits for a person",
                                hint="check the run id; `droidretriever ask` prints it")
    answer = PersonInput(action=action, note=note).model_dump(mode="json",
                                                              exclude={"app", "reason", "category"})
    resumed: list[str] = []
    for flow_run in paused:
        try:
            resume_flow_run(flow_run.id, run_input=answer)
        except (httpx.HTTPError, PrefectException, RuntimeError) as exc:
            raise FlowError(f"cannot resume {flow_run.name}: {exc}",
                            hint="the pause may have timed out; start the question again") from exc
        resumed.append(flow_run.name)
    return resumed
