"""The real-app navigation suite in CI, on two apps (BuzzFeed and Reuters): replay phones serving the
DroidBot recordings, the copilot loop driving them through the ADB protocol.

- route memory, learnt from the person's recorded demonstration, reaches every goal of the two
  apps whose recording holds a target, within twice the person's steps and off no recorded edge;
- skills and the explorer (no model, no route) reach at least what the published benchmark
  measured for these apps (``docs/benchmarks.md``, "Navigation on real apps");
- a sign-in goal is handed over: the run stops for a person and types nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.real_navigation import POLICIES, RealAppsBench, Target, find_targets, iter_runs
from core.config import PerceptionSettings, load_settings
from core.models import SubTaskStatus
from core.recordings import find_data_dir
from device_farm.sim import SimServer, load_recordings
from inference.perception import Perceiver
from suites import load_recorded_goals

DATA = find_data_dir(load_settings())
APPS = ("BuzzFeed", "Reuters")
# What skills and the explorer reached on these apps' goals when the benchmark was published.
SKILLS_REACHED_AT_LEAST = 4

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(DATA is None, reason="the real recordings (shared/data) are not on this machine"),
]


@pytest.fixture(scope="module")
def suite() -> Iterator[tuple[RealAppsBench, list[Target]]]:
    assert DATA is not None
    recorded = DATA / "droidbot-real"
    goals = [g for g in load_recorded_goals() if g.app in (*APPS, "Wish")]
    packages = {"com.buzzfeed.android", "com.thomsonreuters.reuters", "com.contextlogic.wish"}
    apps = [a for a in load_recordings([recorded]) if a.package in packages]
    targets, _ = find_targets(apps, goals, Path(recorded / "tasks"))
    with SimServer(phones=1, port=0, seed=7, replays=apps) as server:
        yield RealAppsBench(server, Perceiver(PerceptionSettings(ocr_backend="none"))), targets


def test_route_memory_from_a_demonstration_reaches_every_goal(suite: tuple[RealAppsBench, list[Target]]) -> None:
    bench, targets = suite
    navigation = [t for t in targets if not t.goal.hand_over and t.goal.app in APPS]
    assert {t.goal.app for t in navigation} == set(APPS)
    runs = list(iter_runs(bench, navigation, POLICIES[:2]))
    memory = [r for r in runs if r.policy == POLICIES[1]]
    assert len(memory) == len(navigation)
    for run in memory:
        assert run.success, f"{run.goal.task}: {run.status.value} ({run.reason})"
        assert run.steps <= run.budget and run.off_graph == 0
    skills = [r for r in runs if r.policy == POLICIES[0]]
    assert len(skills) == len(navigation)
    assert sum(r.success for r in skills) >= SKILLS_REACHED_AT_LEAST


def test_a_sign_in_goal_is_handed_over_to_a_person(suite: tuple[RealAppsBench, list[Target]]) -> None:
    bench, targets = suite
    sign_in = next(t for t in targets if t.goal.task == "wish_SignIn")
    assert sign_in.goal.hand_over
    run = bench.run(sign_in, POLICIES[0])
    assert run.status is SubTaskStatus.NEEDS_USER and run.success
    trail = bench.server.control.status(bench.serials[(sign_in.app.width, sign_in.app.height)])[0].replay_trail
    assert not any(step.action == "text" for step in trail)  # nothing typed: not a name, not a password
