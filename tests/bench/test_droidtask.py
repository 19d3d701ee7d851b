"""DroidTask's bench: the paper's metrics on hand-made runs, and one task end to end on a replay phone."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.droidtask import (
    DroidTaskBench,
    DroidTaskCase,
    Move,
    Shown,
    completion,
    load_cases,
    matched_prefix,
    run_task,
    scripted_navigator,
    skills_and_explorer,
    spl,
)
from core.config import PerceptionSettings, load_settings
from core.models import Bounds, SubTaskStatus
from core.recordings import find_data_dir
from device_farm.sim import SimServer
from device_farm.sim.replay import ViewKey
from inference.perception import Perceiver

HOME, SETTINGS, CHOICES = Shown("home", "home-kind"), Shown("settings", "settings-kind"), Shown("choices", "dialog")
CHANGED = Shown("settings-changed", "settings-kind")  # the task's effect: the same page, another content
ELSEWHERE = Shown("about", "about-kind")


def _view(name: str, top: int) -> ViewKey:
    return ViewKey(f"[class]Button[resource_id]{name}", f"[class]Button[resource_id]{name}[text]{name}",
                   Bounds(left=0, top=top, right=500, bottom=top + 100))


TRUTH = (
    Move("tap", frozenset({HOME}), _view("settings", 100)),
    Move("tap", frozenset({SETTINGS}), _view("duration", 300)),
    Move("tap", frozenset({CHOICES}), _view("one_minute", 500)),
)
TARGETS = frozenset({"settings-changed"})
FINALS = frozenset({CHANGED})


def _done(truth: Move, led_to: Shown) -> Move:
    return Move(truth.kind, truth.on, truth.receiver, truth.text, led_to)


def test_a_run_doing_the_ground_truth_completes_with_the_whole_prefix() -> None:
    done = [_done(TRUTH[0], SETTINGS), _done(TRUTH[1], CHOICES), _done(TRUTH[2], CHANGED)]
    assert matched_prefix(TRUTH, done) == 3
    assert completion(TRUTH, done, TARGETS, FINALS) == 3
    assert spl(True, 3, 3) == 1.0


def test_a_run_stopping_halfway_keeps_its_prefix_and_is_not_complete() -> None:
    wrong = Move("tap", frozenset({CHOICES}), _view("ten_minutes", 700), led_to=SETTINGS)
    done = [_done(TRUTH[0], SETTINGS), _done(TRUTH[1], CHOICES), wrong]
    assert matched_prefix(TRUTH, done) == 2  # ACP 2/3
    assert completion(TRUTH, done, TARGETS, FINALS) is None
    assert spl(False, 3, 3) == 0.0


def test_a_longer_path_completes_with_a_shorter_prefix_and_a_lower_spl() -> None:
    detour = Move("tap", frozenset({SETTINGS}), _view("about", 900), led_to=ELSEWHERE)
    back = Move("back", frozenset({ELSEWHERE}), led_to=SETTINGS)
    done = [_done(TRUTH[0], SETTINGS), detour, back, _done(TRUTH[1], CHOICES), _done(TRUTH[2], CHANGED)]
    assert matched_prefix(TRUTH, done) == 1
    finished = completion(TRUTH, done, TARGETS, FINALS)
    assert finished == 5
    assert spl(True, 3, finished) == pytest.approx(3 / 5)


def test_the_same_page_before_the_change_is_not_completion() -> None:
    """Reaching the settings page (its kind is the last screen's) without the change is navigation only."""
    done = [_done(TRUTH[0], SETTINGS)]
    assert completion(TRUTH, done, TARGETS, FINALS) is None
    typed = Move("input", frozenset({HOME}), _view("field", 100), "Clock")
    assert matched_prefix((typed,), [Move("input", frozenset({HOME}), _view("field", 100), "clock ")]) == 1
    assert matched_prefix((typed,), [Move("input", frozenset({HOME}), _view("field", 100), "Camera")]) == 0


DATA = find_data_dir(load_settings())


@pytest.fixture(scope="module")
def clock() -> Iterator[tuple[DroidTaskBench, dict[str, DroidTaskCase]]]:
    if DATA is None or not (DATA / "droidtask").is_dir():
        pytest.skip("the DroidTask data (shared/data/droidtask) is not on this machine")
    perceiver = Perceiver(PerceptionSettings(ocr_backend="none"))
    apps, cases, _ = load_cases(DATA / "droidtask", perceiver, ["clock"])
    with SimServer(phones=1, port=0, seed=7, replays=apps) as server:
        yield DroidTaskBench(server, perceiver), {c.task.name: c for c in cases}


@pytest.mark.slow
def test_one_task_end_to_end_on_a_replay_phone(clock: tuple[DroidTaskBench, dict[str, DroidTaskCase]]) -> None:
    """'turn off increase volume gradually': Settings, then the check box; 2 steps, a budget of 6."""
    bench, cases = clock
    case = cases["task12"]
    assert case.playable and case.budget == 6 and case.hand_over is None and case.search_term is None
    scripted = run_task(bench, case, "navigator (scripted test double)", scripted_navigator)
    assert scripted.completed and scripted.acp == 1.0 and scripted.spl == 1.0
    assert scripted.stopped_when_done and scripted.status is SubTaskStatus.COMPLETED
    assert scripted.model_calls >= 3  # open the app, two moves, finish
    plain = run_task(bench, case, "skills + explorer", skills_and_explorer)
    assert plain.row == "skills + explorer" and plain.path <= case.budget
    assert plain.prefix <= len(case.truth) and plain.model_calls == 0
