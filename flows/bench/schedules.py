"""Benchmark runs on a schedule (``droidretriever bench run SUITE --cron "0 2 * * *"``).

The same mechanism as subscriptions (:mod:`flows.subscriptions`): a record in the
object store (``bench-schedules/<id>.json``) and a Prefect deployment of the
``bench`` flow with its cron schedule and the run's request as parameter; the
local stack's ``subscriptions`` service (``python -m flows.serve``) serves it,
picking new schedules up by itself. Its results are stored as any run's
(``droidretriever bench list``).
"""

from __future__ import annotations

from datetime import datetime
from typing import cast
from uuid import UUID

import httpx
from prefect.client.orchestration import get_client
from prefect.client.schemas.schedules import CronSchedule
from prefect.deployments.runner import RunnerDeployment
from prefect.exceptions import ObjectNotFound, PrefectException
from pydantic import Field, ValidationError, field_validator

from core.models import Frozen, new_id, utcnow
from flows.bench.flow import bench
from flows.bench.models import BenchRequest
from flows.errors import FlowError
from storage import ObjectNotFoundError, ObjectStore

__all__ = [
    "BenchSchedule",
    "BenchScheduleStore",
    "bench_deployment_name",
    "schedule_bench",
    "to_bench_deployment",
    "unschedule_bench",
]

_PREFIX = "bench-schedules/"


class BenchSchedule(Frozen):
    """A suite run on a cron schedule."""

    id: str = Field(pattern=r"^benchsched-[a-z0-9T-]{6,40}$")
    cron: str
    request: BenchRequest
    paused: bool = False
    created_at: datetime = Field(default_factory=utcnow)

    @field_validator("cron")
    @classmethod
    def _five_fields(cls, value: str) -> str:
        try:
            CronSchedule(cron=value)
        except (ValueError, ValidationError):
            raise ValueError(f"{value!r} is not a cron expression such as '0 2 * * *'") from None
        return value

    @classmethod
    def create(cls, cron: str, request: BenchRequest) -> BenchSchedule:
        return cls(id=new_id("benchsched"), cron=cron, request=request)

    @property
    def schedule(self) -> str:
        return f"cron {self.cron}"


class BenchScheduleStore:
    """Benchmark schedules in the object store."""

    def __init__(self, store: ObjectStore) -> None:
        self._store = store

    def save(self, schedule: BenchSchedule) -> None:
        self._store.put_bytes(f"{_PREFIX}{schedule.id}.json", schedule.model_dump_json(indent=2).encode(),
                              "application/json")

    def load(self, schedule_id: str) -> BenchSchedule:
        try:
            return BenchSchedule.model_validate_json(self._store.get_bytes(f"{_PREFIX}{schedule_id}.json"))
        except ObjectNotFoundError as exc:
            raise FlowError(f"no benchmark schedule {schedule_id!r}",
                            hint="`droidretriever bench schedules` lists them") from exc

    def list(self) -> list[BenchSchedule]:
        """Every schedule, oldest first."""
        keys = [i.key for i in self._store.list_objects(_PREFIX) if i.key.endswith(".json")]
        found = [BenchSchedule.model_validate_json(self._store.get_bytes(k)) for k in keys]
        return sorted(found, key=lambda s: s.created_at)

    def delete(self, schedule_id: str) -> None:
        self._store.delete(f"{_PREFIX}{schedule_id}.json")


def bench_deployment_name(schedule_id: str) -> str:
    """The Prefect deployment of one benchmark schedule."""
    return f"bench-{schedule_id}"


def to_bench_deployment(schedule: BenchSchedule) -> RunnerDeployment:
    """The schedule as a deployment of the ``bench`` flow with its cron and request."""
    return cast(RunnerDeployment, bench.to_deployment(
        name=bench_deployment_name(schedule.id), cron=schedule.cron,
        parameters={"request": schedule.request.model_dump(mode="json")},
        tags=["bench", f"bench-schedule:{schedule.id}"], paused=schedule.paused,
        description=f"suite {schedule.request.suite} on {schedule.request.devices} phone(s), "
                    f"{schedule.schedule}",
    ))


def schedule_bench(schedule: BenchSchedule) -> UUID:
    """Create (or update) the schedule's deployment on the Prefect server."""
    try:
        return UUID(str(to_bench_deployment(schedule).apply()))
    except (httpx.HTTPError, PrefectException) as exc:
        raise FlowError(f"cannot create the schedule of {schedule.id} on Prefect: {exc}",
                        hint="is the Prefect server up? `droidretriever up`") from exc


def unschedule_bench(store: BenchScheduleStore, schedule_id: str) -> None:
    """Remove the schedule's deployment (its runs stop) and its record."""
    store.load(schedule_id)
    try:
        with get_client(sync_client=True) as client:
            deployment = client.read_deployment_by_name(f"bench/{bench_deployment_name(schedule_id)}")
            client.delete_deployment(deployment.id)
    except ObjectNotFound:
        pass  # never reached Prefect, or removed there already
    except (httpx.HTTPError, PrefectException) as exc:
        raise FlowError(f"cannot remove the schedule {schedule_id} from Prefect: {exc}",
                        hint="is the Prefect server up? `droidretriever up`") from exc
    store.delete(schedule_id)
