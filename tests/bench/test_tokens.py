"""The tokens benchmark counts a deployment's conditions: probes, the farm's app list, a written report, a
disagreeing evaluator stopped by the call budget. One single-app task, against the recording server."""

from __future__ import annotations

import pytest

from bench.token_conditions import Deployment
from bench.token_counts import TaskTokens
from bench.tokens import DISAGREEING, DOCUMENTED, measure_setups, study2_tasks
from core.config import BudgetSettings
from device_farm.sim import load_catalog

Measured = tuple[TaskTokens, TaskTokens, Deployment]  # the documented run, the disagreeing one, the conditions


@pytest.fixture(scope="module")
def measured() -> Measured:
    catalog = load_catalog()
    task = next(t for t in study2_tasks(catalog) if len(t.apps) == 1)
    runs, _, deployment = measure_setups((DOCUMENTED, DISAGREEING), [task], catalog, picture=False)
    assert all(problems == 0 for _, problems in runs.values())  # every request fits vLLM's shape
    return runs[DOCUMENTED.key][0][0], runs[DISAGREEING.key][0][0], deployment


def test_probes_are_counted_per_ask_and_per_worker_start(measured: Measured) -> None:
    deployment = measured[2]
    # An ask probes four chat roles, two of them with vision (a second request, with an image);
    # a worker start probes the navigator and the evaluator.
    assert (deployment.ask.requests, deployment.ask.listings) == (6, 4)
    assert (deployment.worker.requests, deployment.worker.listings) == (4, 2)
    assert deployment.ask.tokens > deployment.worker.tokens > 0 and deployment.ask.completion > 0


def test_the_decomposer_is_shown_the_farms_whole_app_list(measured: Measured) -> None:
    normal, _, deployment = measured
    catalog = load_catalog()
    assert normal.listed_apps == len(deployment.farm_apps) == len(catalog.apps)
    assert normal.former is not None and normal.former.listed_apps == 1
    assert normal.calls["decomposer"] == 1  # the task's app, spelled as the farm lists it: no repair round
    assert normal.text["decomposer"] > normal.former.text["decomposer"] + 3 * (normal.listed_apps - 1)


def test_the_synthesizer_answers_with_a_cited_report(measured: Measured) -> None:
    normal = measured[0]
    assert normal.former is not None and normal.calls["synthesizer"] == 1
    assert normal.citations >= 2 and normal.completion["synthesizer"] > 2 * normal.former.completion["synthesizer"]


def test_a_disagreeing_evaluator_is_stopped_by_the_call_budget(
        measured: Measured) -> None:
    normal, disagreeing, _ = measured
    budget = BudgetSettings().model_calls_per_subtask
    assert normal.stopped == 0 and disagreeing.stopped == 1
    assert disagreeing.subtask_calls == [budget] and normal.subtask_calls[0] < budget
    assert disagreeing.calls["navigator"] == budget - disagreeing.calls["evaluator"] > normal.calls["navigator"]
    assert disagreeing.total(("navigator", "evaluator")) > 2 * normal.total(("navigator", "evaluator"))
