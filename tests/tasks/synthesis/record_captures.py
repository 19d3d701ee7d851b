"""Record the virtual phones' pages of some Study 1 and 2 tasks (comparisons, lists, an article).

``python -m tests.tasks.synthesis.record_captures`` plays each app's scripted path
(the task files under ``suites/study2/``) on a virtual phone,
takes the copilot's scrolling capture of the page it reaches, and writes the
capture (elements in stitched coordinates) to ``tests/tasks/synthesis/captures/``.
The synthesis tests read those files, so they run on what the simulator
really shows without starting it. Re-run after the apps' pages change.
"""

from __future__ import annotations

from pathlib import Path

from core.config import BudgetSettings, PerceptionSettings
from core.models import Capture
from device_farm.adb_driver import AdbDriver
from device_farm.sim import SimServer, load_catalog
from inference.perception import Perceiver
from storage import FakeObjectStore
from suites import load_suite
from tasks.capture import CaptureRequest, capture_scrolling
from tasks.navigate import page_title, play_scripted_path, to_observation

__all__ = ["CAPTURES_DIR", "TASK_IDS", "record_task_captures"]

CAPTURES_DIR = Path(__file__).parent / "captures"
TASK_IDS = (
    "s2_multi_05_big_mac", "s2_multi_06_vivo_x100_ultra", "s2_single_01_meituan_permissions",
    "s2_single_02_bilibili_guidelines", "s1_07_taxi_trips", "s1_03_12306_refund",
)


def record_task_captures(sim: SimServer, task_id: str) -> list[Capture]:
    """One capture per app of ``task_id``: its scripted path played, the target page captured."""
    task = next(t for t in load_suite() if t.id == task_id)
    packages = {app.label: package for package, app in load_catalog().apps.items()}
    perceiver = Perceiver(PerceptionSettings(ocr_backend="none"))
    captures: list[Capture] = []
    for label, steps in task.paths.items():
        package = packages[label]
        sim.control.reset("boot")
        sim.control.set_day(task.day)
        driver = AdbDriver(sim.serials[0], port=sim.port)
        try:
            play_scripted_path(driver, perceiver, package, steps)
            # Titled as the copilot titles its captures: the page's heading.
            title = page_title(perceiver.perceive(to_observation(driver.observe(), 0)).screen)
            result = capture_scrolling(
                driver, FakeObjectStore(),
                CaptureRequest(run_id=task_id, subtask_id=f"{package}-1", package=package,
                               title=title),
                BudgetSettings())
        finally:
            driver.close()
        captures.append(result.capture)
    return captures


def main() -> None:
    """Record every task of :data:`TASK_IDS` into :data:`CAPTURES_DIR`."""
    CAPTURES_DIR.mkdir(exist_ok=True)
    with SimServer(phones=1, port=0, seed=7) as sim:
        for task_id in TASK_IDS:
            for capture in record_task_captures(sim, task_id):
                path = CAPTURES_DIR / f"{task_id}.{capture.package}.json"
                path.write_text(capture.model_dump_json(indent=1) + "\n", encoding="utf-8")
                print(f"{path}: {len(capture.elements)} elements")


if __name__ == "__main__":
    main()
