"""Benchmark of the UI copilot on virtual phones: ``python -m bench.navigate``.

Measures, in one run: per-step host overhead (perceive + decide with skills or
route memory; observe and act are the phone's and reported apart), stitching
5 frames of 1080x2340 and a whole capture without the phone's share, prompt
tokens per navigator call on the Study 2 scripted paths (real tokenizer),
projected tokens per task with a model configured (navigator + evaluator
prompts along those paths), and model calls of a second run with route memory
(an OpenAI-compatible scripted stub counts them).
"""

from __future__ import annotations

import statistics
import time

import cv2
import numpy as np

from bench.results import percentile, write_section
from device_farm.adb_driver import AdbDriver
from device_farm.sim import SimServer, load_catalog
from droidretriever.config import BudgetSettings, LLMEndpoint, PerceptionSettings
from droidretriever.models import PageMode, Point, SubTask, new_id
from droidretriever.suites import Study, load_suite
from inference.llm import LLMClient
from inference.memory import RouteMemory
from inference.perception import Perceiver, count_tokens, describe_screen
from inference.prompts import render_prompt
from storage import FakeObjectStore
from tasks.capture import CaptureRequest, capture_scrolling
from tasks.navigate import Copilot, NavigateRequest, navigate_subtask
from tasks.navigate_paths import play_scripted_path
from tasks.navigate_task import ObjectStoreBlobs
from tasks.stitch import stitch_frames
from tests.navigate.test_llm_navigator import navigator_replies
from tests.navigate.test_study2_suite import subtask_for
from tests.support.openai_stub import OpenAIStub

__all__ = ["main"]

BIG_MAC = SubTask(id="bigmac", app_label="Meituan", package="com.sankuai.meituan",
                  goal="How much is a Big Mac on Meituan?", search_term="Big Mac", page_mode=PageMode.FOCUSED)


def _stats(values: list[float]) -> str:
    return f"median {statistics.median(values):.1f} ms, p95 {percentile(values, 0.95):.1f} ms (n={len(values)})"


def _steps(server: SimServer, copilot: Copilot, runs: int) -> tuple[list[float], list[float], list[float]]:
    host, observe, act = [], [], []
    for _ in range(runs):
        server.control.reset("boot")
        result = navigate_subtask(copilot, NavigateRequest(run_id=new_id("run"), subtask=BIG_MAC))
        for step in result.trace.steps:
            t = step.timings
            if step.action is not None and step.action.kind != "finish":
                host.append(t.perceive_ms + t.decide_ms)
                observe.append(t.observe_ms)
                act.append(t.act_ms)
    return host, observe, act


def _frames(driver: AdbDriver) -> list[np.ndarray]:
    frames = []
    for index in range(5):
        png = driver.observe().screenshot_png
        frames.append(np.asarray(cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)))
        if index < 4:
            driver.swipe(*_swipe(), duration_ms=500)
    return frames


def _swipe() -> tuple[Point, Point]:
    return Point(x=540, y=1800), Point(x=540, y=1800 - 1100)


def _tokens(server: SimServer, driver: AdbDriver, perceiver: Perceiver) -> tuple[list[int], list[int]]:
    """Navigator prompt tokens per call, and projected tokens per task, along the scripted paths."""
    per_call: list[int] = []
    per_task: list[int] = []
    for task in (t for t in load_suite() if t.study is Study.STUDY2):
        total = 0
        for app in task.apps:
            subtask = subtask_for(task, app)
            server.control.reset("boot")
            server.control.set_day(task.day)
            moves = play_scripted_path(driver, perceiver, subtask.package, task.paths[app])
            previous: list[str] = []
            for move in moves:
                text = describe_screen(move.screen, move.perception.blocks).text
                nav = render_prompt("navigator", goal=subtask.goal, previous_actions=previous, reflection=None,
                                    screen=text, help_document=None)
                ev = render_prompt("evaluator", goal=subtask.goal, page_mode=subtask.page_mode.value,
                                   search_term=subtask.search_term, previous_actions=previous, screen=text)
                n = count_tokens(nav.system) + count_tokens(nav.user)
                per_call.append(n)
                total += n + count_tokens(ev.system) + count_tokens(ev.user)
                previous.append(f"{move.action.kind} {getattr(move.action, 'target', '')}")
            if moves:  # the target page is judged once more (about the size of the last judgement)
                total += count_tokens(ev.system) + count_tokens(ev.user)
        per_task.append(total)
    return per_call, per_task


def _route_calls(server: SimServer, driver: AdbDriver, perceiver: Perceiver) -> tuple[int, int]:
    task = next(t for t in load_suite() if t.id == "s2_single_02_bilibili_guidelines")
    subtask = subtask_for(task, "Bilibili")
    server.control.reset("boot")
    moves = play_scripted_path(driver, perceiver, subtask.package, task.paths["Bilibili"])
    with OpenAIStub() as stub:
        endpoint = LLMEndpoint(base_url=stub.base_url, model="navigator-stub")
        stub.enqueue(*navigator_replies(moves, subtask.package, endpoint, perceiver.settings))
        copilot = Copilot(driver=driver, perceiver=perceiver, store=FakeObjectStore(), budgets=BudgetSettings(),
                          memory=RouteMemory(ObjectStoreBlobs(FakeObjectStore())), skills=False,
                          navigator=LLMClient(endpoint, role="navigator"))
        server.control.reset("boot")
        navigate_subtask(copilot, NavigateRequest(run_id=new_id("run"), subtask=subtask))
        first = len(stub.requests)
        server.control.reset("boot")
        navigate_subtask(copilot, NavigateRequest(run_id=new_id("run"), subtask=subtask))
        return first, len(stub.requests) - first


def main() -> None:
    """Run every measurement on one virtual phone and write the ``navigate`` block of docs/benchmarks.md."""
    perceiver = Perceiver(PerceptionSettings(ocr_backend="none"))
    with SimServer(phones=1, port=0, seed=7, catalog=load_catalog()) as server:
        driver = AdbDriver(server.serials[0], port=server.port)
        store = FakeObjectStore()
        copilot = Copilot(driver=driver, perceiver=perceiver, store=store, budgets=BudgetSettings(),
                          memory=RouteMemory(ObjectStoreBlobs(FakeObjectStore())))
        host, observe, act = _steps(server, copilot, runs=6)
        server.control.reset("boot")
        navigate_subtask(copilot, NavigateRequest(run_id="bench", subtask=BIG_MAC))  # phone on a store page
        frames = _frames(driver)
        stitch_ms = []
        for _ in range(10):
            tick = time.perf_counter()
            stitch_frames(frames, expected_shift=1100)
            stitch_ms.append((time.perf_counter() - tick) * 1000.0)
        capture_host, capture_device = [], []
        for index in range(5):
            server.control.reset("boot")
            navigate_subtask(copilot, NavigateRequest(run_id="bench", subtask=BIG_MAC))
            result = capture_scrolling(driver, store, CaptureRequest(
                run_id="bench", subtask_id="bench", package=BIG_MAC.package, index=index + 1),
                BudgetSettings(), ocr=None)
            capture_host.append(result.timings.host_ms)
            capture_device.append(result.timings.device_ms)
        per_call, per_task = _tokens(server, driver, perceiver)
        first_calls, second_calls = _route_calls(server, driver, perceiver)
        driver.close()
    fewer = 100.0 * (first_calls - second_calls) / first_calls
    body = f"""
| measure | result | goal |
|---|---|---|
| per-step host overhead (perceive + decide, skills / route memory), Meituan "Big Mac" | {_stats(host)} | < 100 ms |
| per-step observe on the virtual phone (the phone's share, reported apart) | {_stats(observe)} | - |
| per-step act on the virtual phone (the phone's share) | {_stats(act)} | - |
| stitching 5 frames of 1080x2340 | {_stats(stitch_ms)} | < 150 ms |
| whole capture without the phone's share (decode, stitch, map, store; OCR off) | {_stats(capture_host)} | - |
| whole capture, the phone's share (swipes + observations) | {_stats(capture_device)} | - |
| navigator prompt tokens per call (cl100k, Study 2 path screens) | median {statistics.median(per_call):.0f}, p95 {percentile([float(v) for v in per_call], 0.95):.0f}, max {max(per_call)} (n={len(per_call)}) | < 1,500 |
| projected tokens per Study 2 task (navigator + evaluator prompts along the paths) | median {statistics.median(per_task):.0f}, p95 {percentile([float(v) for v in per_task], 0.95):.0f}, max {max(per_task)} (n={len(per_task)}) | < 5,000 (paper ~19,459) |
| model calls, Bilibili guidelines, LLM navigator only: first run / second run with route memory | {first_calls} / {second_calls} ({fewer:.0f}% fewer) | >= 90% fewer |

Notes: host overhead excludes the phone (observe, act) and model time (no model in the
step runs: skills and route memory). Projected tokens count prompt tokens only (system +
user), one navigator and one evaluator call per move plus one evaluator call on the target
page; answers add ~50 tokens per call. The route-memory row uses the scripted OpenAI stub
(tests/support/openai_stub.py) answering what a navigator would answer on each screen.
"""
    write_section("navigate", "UI copilot (navigate)", "python -m bench.navigate", body)
    print(body)


if __name__ == "__main__":
    main()
