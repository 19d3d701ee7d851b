"""Each task's result as it ends, so a benchmark run that stopped resumes where it was.

    journal = TaskJournal(store, bench_run_id)
    journal.record(result)          # bench/<id>/tasks/<repeat>-<task id>.json
    journal.finished()              # {(task id, repeat): result} of the run so far

``droidretriever bench run SUITE --resume <id>`` (and :func:`flows.bench.run_bench` after the
Prefect API failed under the ``bench`` flow itself) asks only the tasks not in the journal.
"""

from __future__ import annotations

import logging

from pydantic import ValidationError

from core.errors import DroidRetrieverError
from flows.bench.models import BenchTaskResult
from flows.bench.results import bench_key
from storage import ObjectStore

__all__ = ["TaskJournal"]

log = logging.getLogger(__name__)


class TaskJournal:
    """A benchmark run's finished tasks in the object store, one object per task and repeat."""

    def __init__(self, store: ObjectStore, bench_run_id: str) -> None:
        self._store = store
        self._prefix = bench_key(bench_run_id, "tasks/")

    def record(self, result: BenchTaskResult) -> None:
        """Keep ``result``; a store that fails is logged (the run's results.json has it too)."""
        key = f"{self._prefix}{result.repeat}-{result.task_id}.json"
        try:
            self._store.put_bytes(key, result.model_dump_json().encode(), content_type="application/json")
        except DroidRetrieverError as exc:
            log.warning("could not keep %s in the run's journal: %s", result.task_id, exc)

    def finished(self) -> dict[tuple[str, int], BenchTaskResult]:
        """The tasks recorded so far, by task id and repeat."""
        kept: dict[tuple[str, int], BenchTaskResult] = {}
        for item in self._store.list_objects(self._prefix):
            try:
                result = BenchTaskResult.model_validate_json(self._store.get_bytes(item.key))
            except (ValidationError, DroidRetrieverError) as exc:  # asked again, said why
                log.warning("journal entry %s is unreadable, its task is asked again: %s", item.key, exc)
                continue
            kept[(result.task_id, result.repeat)] = result
        return kept
