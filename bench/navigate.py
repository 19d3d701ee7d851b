"""Benchmark of the UI copilot on virtual phones: ``python -m bench.navigate``.

Measures, in one run: per-step host overhead (perceive + decide with skills or
route memory; observe and act are the phone's and reported apart), stitching
5 frames of 1080x2340 and a whole capture without the phone's share, prompt
tokens per navigator call on the Study 2 scripted paths (real tokenizer),
projected tokens per task with a model configured (navigator prompts along
those paths, built as the copilot builds them: ``describe_for_navigator``'s view
and compact past actions; the evaluator once on the target page, shown the
navigator's view as the loop sends it), where those tokens go, and model calls
of a second run with route memory (counted by the scripted OpenAI stub, a test
double).
"""

from __future__ import annotations

import statistics
import time

import cv2
import numpy as np
from matplotlib.ticker import ScalarFormatter

from bench.results import create_figure, parse_bench_args, percentile, save_plot, write_section
from core.config import BudgetSettings, LLMEndpoint, PerceptionSettings
from core.models import PageMode, PageType, Point, SubTask, SubTaskStatus, new_id
from device_farm.adb_driver import AdbDriver
from device_farm.sim import Catalog, SimServer, load_catalog

# A test double, used as one: the scripted OpenAI-compatible server answers what
# a navigator model would, so the benchmark can count model calls without a model.
from droidretriever.testing import OpenAIStub as OpenAIStubTestDouble
from inference.llm import LLMClient
from inference.llm_roles import describe_action
from inference.memory import RouteMemory
from inference.perception import Perceiver, Perception, count_tokens
from inference.policies import compact_history, describe_for_navigator, goal_text
from inference.prompts import render_prompt
from storage import FakeObjectStore
from suites import Study, SuiteTask, load_suite
from suites.subtasks import subtask_for
from tasks.capture import CaptureRequest, capture_scrolling, stitch_frames
from tasks.navigate import (
    Copilot,
    NavigateRequest,
    ObjectStoreBlobs,
    navigate_subtask,
    navigator_answers,
    play_scripted_path,
)

__all__ = ["main"]

BIG_MAC = SubTask(id="bigmac", app_label="Meituan", package="com.sankuai.meituan",
                  goal="How much is a Big Mac on Meituan?", search_term="Big Mac", page_mode=PageMode.FOCUSED)


def _stats(values: list[float]) -> str:
    return f"median {statistics.median(values):.1f} ms, p95 {percentile(values, 0.95):.1f} ms (n={len(values)})"


def _count_stats(values: list[int]) -> str:
    floats = [float(v) for v in values]
    return (f"median {statistics.median(values):.0f}, p95 {percentile(floats, 0.95):.0f}, max {max(values)} "
            f"(n={len(values)})")


def _parts(ledger: _TokenLedger) -> str:
    return "; ".join(f"{part} {ledger.share(part):.0f}% ({statistics.median(ledger.parts[part]):.0f})"
                     for part in _PARTS)


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


def _plot_distributions(host_ms: list[float], tokens_per_call: list[int]) -> str:
    """Histograms of per-step host overhead and navigator prompt tokens per call, goals marked."""
    figure = create_figure(8.0, 3.2)
    left, right = figure.subplots(1, 2)
    for axes, values, goal, unit, title, log in (
        (left, host_ms, 100.0, "ms (log scale)", f"Per-step host overhead (n={len(host_ms)})", True),
        (right, [float(v) for v in tokens_per_call], 1500.0, "tokens (cl100k)",
         f"Navigator prompt tokens per call (n={len(tokens_per_call)})", False),
    ):
        # Host overhead is a few ms with a long tail: log bins show both the bulk and the tail.
        low = max(min(values), 0.1)
        bins = np.geomspace(low, max(*values, goal), 25) if log else np.linspace(min(values), max(values), 21)
        axes.hist(values, bins=bins, color="tab:blue", alpha=0.8)
        if log:
            axes.set_xscale("log")
            axes.xaxis.set_major_formatter(ScalarFormatter())
        median = statistics.median(values)
        axes.axvline(median, color="black", linestyle="-", linewidth=1, label=f"median {median:.3g}")
        axes.axvline(goal, color="tab:red", linestyle="--", linewidth=1, label=f"goal < {goal:.0f}")
        axes.set_title(title, fontsize=10)
        axes.set_xlabel(unit)
        axes.set_ylabel("count")
        axes.legend(fontsize=8)
    return save_plot("navigate", "distributions", figure,
                     "Histograms: per-step host overhead (ms) and navigator prompt tokens per call")


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


class _TokenLedger:
    """Prompt tokens along the Study 2 paths, per call, per task, and where they go."""

    def __init__(self) -> None:
        self.per_call: list[int] = []
        self.per_task: list[int] = []
        self.parts: dict[str, list[int]] = {name: [] for name in _PARTS}

    def share(self, part: str) -> float:
        return 100.0 * sum(self.parts[part]) / max(1, sum(sum(v) for v in self.parts.values()))


_PARTS = ("navigator static", "navigator screen", "navigator history", "evaluator static", "evaluator screen",
          "evaluator history")


def _app_subtask(catalog: Catalog, task: SuiteTask, app: str) -> SubTask:
    spec = catalog.find_label(app)
    if spec is None:
        raise LookupError(f"{task.id}: {app} is not in the simulator's catalog")
    return subtask_for(task, app, spec.package)


def _tokens(server: SimServer, driver: AdbDriver, perceiver: Perceiver, catalog: Catalog) -> _TokenLedger:
    """Navigator prompt tokens per call, and projected tokens per task, along the scripted paths.

    Every move of a path is priced as if the model made it: one navigator call
    (the view and history the LLM navigator policy sends), plus one evaluator call
    on the target page (with ``llm.evaluator_pages = "targets"`` the evaluator's
    model is asked where the page may be the target; priced on the path's last
    screen, about the size of the target's).
    """
    ledger = _TokenLedger()
    for task in (t for t in load_suite() if t.study is Study.STUDY2):
        total = 0
        for app in task.apps:
            subtask = _app_subtask(catalog, task, app)
            server.control.reset("boot")
            server.control.set_day(task.day)
            moves = play_scripted_path(driver, perceiver, subtask.package, task.paths[app])
            done: list[str] = []
            for move in moves:
                history = compact_history(done)
                view = describe_for_navigator(move.perception, subtask).text
                nav = render_prompt("navigator", goal=goal_text(subtask), previous_actions=history,
                                    reflection=None, screen=view, help_document=None)
                n = count_tokens(nav.system) + count_tokens(nav.user)
                ledger.per_call.append(n)
                total += n
                lines = count_tokens("\n".join(history))
                for part, value in (("navigator screen", count_tokens(view)), ("navigator history", lines),
                                    ("navigator static", n - count_tokens(view) - lines)):
                    ledger.parts[part].append(value)
                done.append(describe_action(move.action, move.screen))
            if moves:
                total += _judge_target(ledger, subtask, moves[-1].perception, compact_history(done))
        ledger.per_task.append(total)
    return ledger


def _judge_target(ledger: _TokenLedger, subtask: SubTask, perception: Perception, history: list[str]) -> int:
    """The evaluator's one call on the target page, shown the navigator's view (issue 14)."""
    view = describe_for_navigator(perception, subtask).text
    prompt = render_prompt("evaluator", goal=subtask.goal, page_mode=subtask.page_mode.value,
                           search_term=subtask.search_term, previous_actions=history, screen=view,
                           page_types=[p.value for p in PageType])
    tokens = count_tokens(prompt.system) + count_tokens(prompt.user)
    lines = count_tokens("\n".join(history))
    for part, value in (("evaluator screen", count_tokens(view)), ("evaluator history", lines),
                        ("evaluator static", tokens - count_tokens(view) - lines)):
        ledger.parts[part].append(value)
    return tokens


def _route_calls(server: SimServer, driver: AdbDriver, perceiver: Perceiver, catalog: Catalog) -> tuple[int, int]:
    task = next(t for t in load_suite() if t.id == "s2_single_02_bilibili_guidelines")
    subtask = _app_subtask(catalog, task, "Bilibili")
    server.control.reset("boot")
    moves = play_scripted_path(driver, perceiver, subtask.package, task.paths["Bilibili"])
    with OpenAIStubTestDouble() as stub:
        endpoint = LLMEndpoint(base_url=stub.base_url, model="navigator-stub")
        # Opening the app takes no model call: the answers start with the first move.
        stub.enqueue(*navigator_answers(moves, subtask, endpoint, perceiver.settings)[1:])
        copilot = Copilot(driver=driver, perceiver=perceiver, store=FakeObjectStore(), budgets=BudgetSettings(),
                          memory=RouteMemory(ObjectStoreBlobs(FakeObjectStore())), skills=False,
                          explore=False, navigator=LLMClient(endpoint, role="navigator"))
        server.control.reset("boot")
        navigate_subtask(copilot, NavigateRequest(run_id=new_id("run"), subtask=subtask))
        first = len(stub.requests)
        server.control.reset("boot")
        navigate_subtask(copilot, NavigateRequest(run_id=new_id("run"), subtask=subtask))
        return first, len(stub.requests) - first


def _no_model_tasks(server: SimServer, driver: AdbDriver, perceiver: Perceiver, catalog: Catalog) -> tuple[int, int]:
    """Study 2 tasks answered with no model and no route memory (skills + explorer): reached, captured,
    every scoring point in the captures. Returns (answered, tasks)."""
    copilot = Copilot(driver=driver, perceiver=perceiver, store=FakeObjectStore(),
                      budgets=BudgetSettings(swipes_per_capture=6))
    tasks = [t for t in load_suite() if t.study is Study.STUDY2
             and all(catalog.find_label(a) is not None for a in t.apps)]
    answered = 0
    for task in tasks:
        texts: list[str] = []
        completed = True
        for app in task.apps:
            server.control.reset("boot")
            server.control.set_day(task.day)
            request = NavigateRequest(run_id=new_id("run"), subtask=_app_subtask(catalog, task, app))
            result = navigate_subtask(copilot, request)
            completed = completed and result.status is SubTaskStatus.COMPLETED
            texts += [e.label for c in result.captures for e in c.elements]
        answered += completed and all(any(p in t for t in texts) for p in task.scoring_points)
    return answered, len(tasks)


def main(argv: list[str] | None = None) -> None:
    """Run every measurement on one virtual phone and write the ``navigate`` block of docs/benchmarks.md."""
    parse_bench_args(argv=argv)
    perceiver = Perceiver(PerceptionSettings(ocr_backend="none"))
    catalog = load_catalog()
    with SimServer(phones=1, port=0, seed=7, catalog=catalog) as server:
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
        ledger = _tokens(server, driver, perceiver, catalog)
        first_calls, second_calls = _route_calls(server, driver, perceiver, catalog)
        answered, study2 = _no_model_tasks(server, driver, perceiver, catalog)
        driver.close()
    fewer = 100.0 * (first_calls - second_calls) / first_calls
    picture = _plot_distributions(host, ledger.per_call)
    body = f"""
| measure | result | goal |
|---|---|---|
| per-step host overhead (perceive + decide, skills / route memory), Meituan "Big Mac" | {_stats(host)} | < 100 ms |
| per-step observe on the virtual phone (the phone's share, reported apart) | {_stats(observe)} | - |
| per-step act on the virtual phone (the phone's share) | {_stats(act)} | - |
| stitching 5 frames of 1080x2340 | {_stats(stitch_ms)} | < 150 ms |
| whole capture without the phone's share (decode, stitch, map, store; OCR off) | {_stats(capture_host)} | - |
| whole capture, the phone's share (swipes + observations) | {_stats(capture_device)} | - |
| navigator prompt tokens per call (cl100k, Study 2 path screens) | {_count_stats(ledger.per_call)} | < 1,500 |
| projected tokens per Study 2 task (navigator + evaluator prompts along the paths) | {_count_stats(ledger.per_task)} | < 5,000 (paper ~19,459) |
| before (navigator/1 prompt, v1 description; recorded by this benchmark at commit 717cdcf) | per call median 729, p95 860; per task median 5153, p95 17011, max 20123 | |
| where projected tokens go (share of all; median per call) | {_parts(ledger)} | |
| model calls, Bilibili guidelines, LLM navigator only: first run / second run with route memory | {first_calls} / {second_calls} ({fewer:.0f}% fewer) | >= 90% fewer |
| Study 2 tasks reached with no model and no memory (skills + explorer; captured, every scoring point), with each task's scripted search term and 6 swipes per capture: not the product's own plan (see "Benchmark runs") | {answered}/{study2} (before the explorer: 4/22) | {study2}/{study2} |

{picture}

Notes: host overhead excludes the phone (observe, act) and model time (no model in the
step runs: skills and route memory). Projected tokens count prompt tokens only (system +
user), one navigator call per move plus one evaluator call on the target page (the
evaluator's model is asked where the page may be the target, `llm.evaluator_pages =
"targets"`; before it was asked on every page where its verdict could count, one call per
move); answers add ~30 tokens per call. The navigator is shown what the LLM navigator
policy sends (`describe_for_navigator`: the whole description, or the task's layout blocks
when it exceeds 600 tokens; past actions as clipped preview lines); the evaluator the same
view. These rows are projected from prompt text; `python -m bench.tokens` measures what a
vLLM-shaped server receives (images and answers included). The route-memory row uses the scripted OpenAI stub,
a test double (droidretriever/testing/openai_stub.py), answering what a navigator would answer on
each screen (`tasks.navigate.paths.navigator_answers`).
"""
    write_section("navigate", "UI copilot (navigate)", "python -m bench.navigate", body)
    print(body)


if __name__ == "__main__":
    main()
