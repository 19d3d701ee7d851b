"""`droidretriever bench` end to end on the virtual phones: the smoke suite scored as expected,
and a login-gated task answered by the scripted operator through the control path (take over,
sign in by remote input, back to auto), its inputs counted as a person's steps."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from prefect.settings import PREFECT_API_URL

from flows.bench import BenchRequest, OperatorKind, run_bench
from storage import open_object_store
from tests.flows.conftest import FlowFarm

pytestmark = [pytest.mark.services, pytest.mark.slow]

CLI = str(Path(sys.executable).parent / "droidretriever")


def test_the_smoke_suite_runs_with_one_command_and_reaches_its_expected_scores(
        flow_farm: FlowFarm, tmp_path: Path) -> None:
    env = {**os.environ, **flow_farm.env, "COLUMNS": "200",
           "DROIDRETRIEVER_PREFECT__API_URL": str(PREFECT_API_URL.value())}
    done = subprocess.run([CLI, "bench", "run", "smoke", "--devices", "2", "--out", str(tmp_path),
                           "--json"], env=env, capture_output=True, text=True, timeout=280, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert results["suite"] == "smoke" and len(results["tasks"]) == 3
    for task in results["tasks"]:
        score = task["score"]
        assert task["error"] is None, task
        assert len(score["found"]) / score["points_total"] >= task["expected_coverage"], task
        assert task["metrics"]["apps_right"] and task["metrics"]["navigated"], task
        assert task["metrics"]["steps"] > 0 and task["serial"] in results["phones"]
    assert len({t["serial"] for t in results["tasks"]}) == 2  # both phones were used
    for name in ("results.md", "coverage.png", "time.png"):
        assert (tmp_path / name).stat().st_size > 500
        key = f"bench/{results['bench_run_id']}/{name}"
        assert open_object_store(flow_farm.settings).exists(key), key
    assert "| s2_single_07_qqmusic_eason | 10/10 ✓" in (tmp_path / "results.md").read_text(encoding="utf-8")


def test_the_scripted_operator_logs_in_through_the_control_path_and_the_task_scores(
        flow_farm: FlowFarm, tmp_path: Path) -> None:
    suite = tmp_path / "login"
    suite.mkdir()
    (suite / "suite.yaml").write_text("include: [g_gmail_dentist]\n", encoding="utf-8")
    try:
        results = run_bench(BenchRequest(suite=str(suite), operator=OperatorKind.SCRIPTED,
                                         operator_delay_s=0.5, out_dir=str(tmp_path / "out")))
    finally:
        for serial in flow_farm.sim.serials:  # the suite logged Gmail out on the phone it used
            flow_farm.sim.control.reset("boot", serial)
    task = results.tasks[0]
    assert task.error is None, task
    assert task.operator_answers == 1 and task.metrics.paused
    assert task.metrics.intervention_steps >= 3  # tap, type, ..., submit: a person's steps
    assert task.metrics.statuses == {"Gmail": "completed"}, task.metrics
    # Scored on its content: a report was written from the signed-in app (what it finds there
    # without a model is the navigator's part, measured by the suites, not by this test).
    assert task.score is not None and task.run_id is not None


def test_a_suite_scheduled_with_cron_is_a_served_deployment_until_unscheduled(flow_farm: FlowFarm) -> None:
    from prefect.client.orchestration import get_client

    from flows.bench.schedules import (
        BenchSchedule,
        BenchScheduleStore,
        bench_deployment_name,
        schedule_bench,
        unschedule_bench,
    )
    from flows.serve import subscription_signature
    from flows.subscriptions import SubscriptionStore

    objects = open_object_store(flow_farm.settings)
    benches = BenchScheduleStore(objects)
    schedule = BenchSchedule.create("0 2 * * *", BenchRequest(suite="smoke", devices=2))
    schedule_bench(schedule)
    benches.save(schedule)
    name = bench_deployment_name(schedule.id)
    with get_client(sync_client=True) as client:
        deployment = client.read_deployment_by_name(f"bench/{name}")
    assert deployment.parameters["request"]["suite"] == "smoke"
    assert [s.schedule.cron for s in deployment.schedules] == ["0 2 * * *"]  # type: ignore[union-attr]
    assert (name, "cron 0 2 * * *", False) in subscription_signature(SubscriptionStore(objects), benches)
    unschedule_bench(benches, schedule.id)
    assert benches.list() == []
    with get_client(sync_client=True) as client:
        assert not [d for d in client.read_deployments() if d.name == name]


def test_a_wrong_cron_or_suite_is_one_line_and_nothing_starts(flow_farm: FlowFarm) -> None:
    env = {**os.environ, **flow_farm.env, "COLUMNS": "200",
           "DROIDRETRIEVER_PREFECT__API_URL": str(PREFECT_API_URL.value())}
    for args, said in ((["smoke", "--cron", "at two"], "not a cron expression"),
                       (["no-such-suite"], "no suite named 'no-such-suite'"),
                       (["smoke", "--resume", "../runs"], "is no run id"),
                       (["smoke", "--resume", "bench-20261128T001200-ab12cd", "--cron", "0 2 * * *"],
                        "--resume continues one run")):
        done = subprocess.run([CLI, "bench", "run", *args], env=env, capture_output=True, text=True,
                              timeout=60, check=False)
        assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr, done.stderr
