"""Every suite task is answerable on the virtual phones.

For each task file in ``suites`` (every suite: the paper's, the
examples, the general one), each app's scripted path is played through adbutils
against a real SimServer, from the task's starting state (its day, its
``signed_out`` apps logged out), and every scoring point must be visible as
text (hierarchy text or content-desc) on the screens the path ends on: the
page reached by the last navigation step and the screens its swipes scroll
through, plus pages kept with ``capture`` along the way. Every wrong value
must be on those screens too (it is a value a report could wrongly state), and
an app is in ``pauses`` exactly when its path has to log in.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import adbutils
import pytest

from core.models import Step, StepKind
from device_farm.sim import SimServer, load_catalog
from suites import SUITES, SuiteError, SuiteTask, load_suite, load_task

pytestmark = pytest.mark.slow  # every suite task's scripted path on a virtual phone: minutes

TASKS = load_suite(*SUITES)
CATALOG = load_catalog()
_DIALOG_IDS = ("android:id/parentPanel", "com.android.permissioncontroller:id/grant_dialog")


@pytest.fixture(scope="module")
def phone() -> Iterator[tuple[SimServer, adbutils.AdbDevice]]:
    with SimServer(phones=1, port=0, seed=7) as server:
        yield server, adbutils.AdbClient("127.0.0.1", server.port).device(server.serials[0])


def _nodes(d: adbutils.AdbDevice) -> list[dict[str, str]]:
    return [dict(n.attrib) for n in ET.fromstring(d.dump_hierarchy()).iter("node")]


def _texts(nodes: list[dict[str, str]]) -> set[str]:
    return {v for n in nodes for v in (n.get("text", ""), n.get("content-desc", "")) if v}


def _center(node: dict[str, str]) -> tuple[int, int]:
    left_top, right_bottom = node["bounds"][1:-1].split("][")
    left, top = (int(v) for v in left_top.split(","))
    right, bottom = (int(v) for v in right_bottom.split(","))
    return (left + right) // 2, (top + bottom) // 2


def _close_dialogs(d: adbutils.AdbDevice) -> list[dict[str, str]]:
    """Close pop-ups (ads, permission prompts) the way a person would, with BACK."""
    nodes = _nodes(d)
    for _ in range(3):
        if not any(n["resource-id"] in _DIALOG_IDS for n in nodes):
            break
        d.keyevent("BACK")
        nodes = _nodes(d)
    return nodes


def _type(d: adbutils.AdbDevice, text: str) -> None:
    if text.isascii():
        d.shell(["input", "text", text.replace(" ", "%s")])
    else:  # ADBKeyboard's broadcast: how drivers type CJK text
        d.shell(["am", "broadcast", "-a", "ADB_INPUT_TEXT", "--es", "msg", text])


def _swipe_up(d: adbutils.AdbDevice) -> None:
    width, height = d.window_size()
    d.swipe(width // 2, height * 5 // 6, width // 2, height * 5 // 6 - height * 2 // 3, 0.5)


def play_path(d: adbutils.AdbDevice, app: str, steps: tuple[Step, ...]) -> set[str]:
    """Play one app's path; return the texts of the screens it ends on and those it captured."""
    kept: set[str] = set()
    current: set[str] = set()
    for number, step in enumerate(steps, 1):
        where = f"{app} step {number} ({step.kind.value} {step.text!r})"
        if step.kind is StepKind.OPEN_APP:
            spec = CATALOG.find_label(step.text)
            assert spec is not None, f"{where}: no app labelled {step.text!r} in the catalog"
            d.app_start(spec.package)
        elif step.kind is StepKind.TAP_TEXT:
            nodes = _nodes(d)
            hit = next((n for n in nodes if n["text"] == step.text), None) or next(
                (n for n in nodes if n["content-desc"] == step.text), None)
            assert hit is not None, f"{where}: not on screen; texts: {sorted(_texts(nodes))[:40]}"
            d.click(*_center(hit))
        elif step.kind is StepKind.INPUT:
            _type(d, step.text)
        elif step.kind is StepKind.SUBMIT:
            d.keyevent("ENTER")
        elif step.kind is StepKind.BACK:
            d.keyevent("BACK")
        elif step.kind is StepKind.SWIPE_UP:
            for _ in range(step.count):
                _swipe_up(d)
                current |= _texts(_nodes(d))
        elif step.kind is StepKind.EXPECT_TEXT:
            texts = _texts(_nodes(d))
            assert any(step.text in t for t in texts), f"{where}: not on screen; texts: {sorted(texts)[:40]}"
        elif step.kind is StepKind.CAPTURE:
            kept |= current
        if step.kind.navigates:
            current = _texts(_close_dialogs(d))
    return kept | current


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_scripted_paths_reach_every_scoring_point(
    phone: tuple[SimServer, adbutils.AdbDevice], task: SuiteTask
) -> None:
    server, d = phone
    seen: set[str] = set()
    logged_in: dict[str, tuple[bool, bool]] = {}
    for app in task.apps:
        package = _package(app)
        server.control.reset("boot")
        server.control.set_day(task.day)
        for signed_out in task.signed_out:
            server.control.set_logged_in(d.serial, _package(signed_out), False)
        before = server.control.status(d.serial)[0].logged_in.get(package, True)
        seen |= play_path(d, app, task.paths[app])
        logged_in[app] = (before, server.control.status(d.serial)[0].logged_in.get(package, True))
    missing = [p for p in task.scoring_points if not any(p in t for t in seen)]
    assert not missing, f"{task.id}: scoring points not visible at the end of the paths: {missing}"
    unseen = [p for p in task.wrong_points if not any(p in t for t in seen)]
    assert not unseen, f"{task.id}: wrong values not on the screens the paths end on: {unseen}"
    walls = [app for app, (before, after) in logged_in.items() if not before and after]
    assert sorted(walls) == sorted(task.pauses), (
        f"{task.id}: the paths log in to {walls}, but the task expects pauses in {list(task.pauses)}")


def _package(label: str) -> str:
    spec = CATALOG.find_label(label)
    assert spec is not None, f"no app labelled {label!r} in the catalog"
    return spec.package


def test_every_suite_app_is_installed() -> None:
    unknown = sorted({a for t in TASKS for a in t.apps if CATALOG.find_label(a) is None})
    assert not unknown, f"suite tasks name apps the catalog lacks: {unknown}"


def test_launcher_shows_every_app(phone: tuple[SimServer, adbutils.AdbDevice]) -> None:
    server, d = phone
    server.control.reset("boot")
    d.keyevent("HOME")
    labels = _texts(_nodes(d))
    for _ in range(6):  # the grid scrolls once there are more apps than fit
        _swipe_up(d)
        labels |= _texts(_nodes(d))
    missing = [a.label for a in CATALOG.launchable if a.label not in labels]
    assert not missing, f"apps missing from the launcher: {missing}"


def test_steps_parse_as_written_in_task_files() -> None:
    assert Step.model_validate("submit") == Step(kind=StepKind.SUBMIT)
    assert Step.model_validate({"swipe_up": 3}) == Step(kind=StepKind.SWIPE_UP, count=3)
    assert Step.model_validate({"tap_text": 12306}).text == "12306"
    with pytest.raises(ValueError, match="needs a text"):
        Step.model_validate("tap_text")


def test_invalid_task_file_names_the_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "s2_single_99_demo.yaml"
    bad.write_text(
        "id: s2_single_99_demo\nstudy: study2\nquery: Demo\napps: [JD, Taobao]\n"
        "page_mode: Multi-page\naccess: open_web\nscoring_points: [x]\n"
        "paths:\n  JD: [{open_app: JD}]\n", encoding="utf-8")
    with pytest.raises(SuiteError, match=r"s2_single_99_demo.yaml is not a valid task(.|\n)*missing \['Taobao'\]"):
        load_task(bad)
    renamed = tmp_path / "other.yaml"
    renamed.write_text(bad.read_text(encoding="utf-8").replace("apps: [JD, Taobao]", "apps: [JD]"),
                       encoding="utf-8")
    with pytest.raises(SuiteError, match="differs from the file name"):
        load_task(renamed)
