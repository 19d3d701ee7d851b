"""Which runs there were: every ``retrieve`` flow run on the Prefect server, newest first.

Runs asked with ``ask``, from the dashboard or by a subscription are all
``retrieve`` flow runs tagged ``run:<run_id>``; Prefect pages them, so the list
costs one query however many runs the object store holds.
"""

from __future__ import annotations

from datetime import datetime

import httpx
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowFilter, FlowFilterName
from prefect.client.schemas.sorting import FlowRunSort
from prefect.exceptions import PrefectException

from core.models import Frozen
from flows.errors import FlowError

__all__ = ["RunListing", "list_runs"]

_FLOW = "retrieve"
_NAME_PREFIX = "ask: "


class RunListing(Frozen):
    """One run as Prefect knows it."""

    run_id: str
    question: str
    prefect_state: str
    started_at: datetime | None
    flow_run_id: str


def list_runs(offset: int, limit: int) -> list[RunListing]:
    """``limit`` runs from ``offset``, newest first (by when they started or are due)."""
    try:
        with get_client(sync_client=True) as client:
            runs = client.read_flow_runs(
                flow_filter=FlowFilter(name=FlowFilterName(any_=[_FLOW])),
                sort=FlowRunSort.EXPECTED_START_TIME_DESC, offset=offset, limit=limit)
    except (httpx.HTTPError, PrefectException) as exc:
        raise FlowError(f"cannot list the runs on Prefect: {exc}",
                        hint="is the Prefect server up? `droidretriever status`") from exc
    listed = []
    for run in runs:
        run_id = next((t.removeprefix("run:") for t in run.tags if t.startswith("run:")), None)
        if run_id is None:
            continue  # started outside DroidRetriever's entry points
        listed.append(RunListing(
            run_id=run_id, question=run.name.removeprefix(_NAME_PREFIX),
            prefect_state=run.state_name or "", started_at=run.start_time or run.expected_start_time,
            flow_run_id=str(run.id)))
    return listed
