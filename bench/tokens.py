"""Model tokens per Study 2 task, measured from the requests a vLLM-shaped server receives: ``python -m bench.tokens``.

Every role points at the recording OpenAI-compatible server (a test double,
``droidretriever.testing.RecordingOpenAIServer``), which logs each request
body and counts it as vLLM would bill it: text tokens (cl100k here, a close
proxy for Qwen's tokenizer) plus one token per 28x28 patch of each image at
the served ``max_pixels``. Nothing here is projected: the copilot loop runs on
a virtual phone and its requests are counted.

What answers: the navigator is the task's scripted path (the suites' paths
drive the double's answers: a :class:`tasks.navigate.ScriptedNavigator` finds
each move's element on the screen it is shown, so every move of the path is a
model call; skills and the explorer are off); the evaluator answers what the
double builds from its schema; the decomposer answers the task's apps, term
and mode; the synthesizer writes from the task's captures. Navigator and
evaluator have vision on at the documented ``max_pixels``.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from bench.results import create_figure, percentile, save_plot, write_section
from device_farm.adb_driver import AdbDriver
from device_farm.sim import Catalog, SimServer, load_catalog
from droidretriever.config import MAX_PIXELS, BudgetSettings, LLMEndpoint, PerceptionSettings
from droidretriever.models import AppStatus, Capture, InstalledApp, Query, SubTaskStatus, new_id
from droidretriever.suites import Study, SuiteTask, load_suite
from droidretriever.suites.subtasks import subtask_for

# A test double, used as one: the recording server stands in for vLLM and counts what it is sent.
from droidretriever.testing import RecordedRequest, RecordingOpenAIServer, ServedModel
from inference.llm import LLMClient
from inference.llm_roles import decompose_with_model
from inference.perception import Perceiver
from inference.policies import is_dialog_open
from storage import FakeObjectStore
from tasks.navigate import (
    Copilot,
    NavigateRequest,
    ScriptedNavigator,
    navigate_subtask,
    play_scripted_path,
    to_observation,
)
from tasks.synthesis import LLMReportWriter

__all__ = ["main"]

ROLES = {"nav-vl": "navigator", "eval-vl": "evaluator", "planner": "decomposer", "writer": "synthesizer",
         "nav-lean": "navigator", "eval-lean": "evaluator"}
LEAN_PIXELS = 100_352  # 128 patches of 28x28: a 1080x2340 screenshot is sent as 196x448
_NAVIGATION = ("navigator", "evaluator")
_GOAL_MEDIAN, _GOAL_P95, _PAPER = 5000, 8000, 19459


@dataclass
class _Task:
    """One task's measured tokens: per role, text and image apart; calls; whether it was reached."""

    id: str
    text: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    image: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    completion: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    apps: list[int] = field(default_factory=list)  # navigation tokens of each app's sub-task
    reached: bool = True

    def add(self, requests: list[RecordedRequest]) -> None:
        for request in requests:
            role = ROLES[request.model]
            self.text[role] += request.text_tokens
            self.image[role] += request.image_tokens
            self.completion[role] += request.completion_tokens
            self.calls[role] += 1

    def total(self, roles: tuple[str, ...], *, image: bool = True, completion: bool = True) -> int:
        return sum(self.text[r] + (self.image[r] if image else 0) + (self.completion[r] if completion else 0)
                   for r in roles)


@dataclass(frozen=True)
class _Setup:
    """One way to serve the copilot's roles: the served names, max_pixels, whether the evaluator sees."""

    navigator: str
    evaluator: str
    max_pixels: int
    evaluator_vision: bool
    full: bool  # also measure the decomposer and the synthesizer


DOCUMENTED = _Setup("nav-vl", "eval-vl", MAX_PIXELS, evaluator_vision=True, full=True)
LEAN = _Setup("nav-lean", "eval-lean", LEAN_PIXELS, evaluator_vision=False, full=False)


def _served() -> list[ServedModel]:
    return [ServedModel("nav-vl", vision=True, max_pixels=MAX_PIXELS),
            ServedModel("eval-vl", vision=True, max_pixels=MAX_PIXELS),
            ServedModel("nav-lean", vision=True, max_pixels=LEAN_PIXELS), ServedModel("eval-lean"),
            ServedModel("planner"), ServedModel("writer")]


def _endpoint(server: RecordingOpenAIServer, model: str, vision: bool = False,
              max_pixels: int = MAX_PIXELS) -> LLMEndpoint:
    return LLMEndpoint(base_url=server.base_url, model=model, vision=vision, max_pixels=max_pixels, timeout_s=30)


def _measure(task: SuiteTask, sim: SimServer, driver: AdbDriver, perceiver: Perceiver, catalog: Catalog,
             vllm: RecordingOpenAIServer, setup: _Setup) -> _Task:
    measured = _Task(task.id)
    navigator = _endpoint(vllm, setup.navigator, vision=True, max_pixels=setup.max_pixels)
    evaluator = _endpoint(vllm, setup.evaluator, vision=setup.evaluator_vision, max_pixels=setup.max_pixels)
    store = FakeObjectStore()
    captures: list[Capture] = []
    installed: list[InstalledApp] = []
    terms: list[str] = []
    for app in task.apps:
        spec = catalog.find_label(app)
        if spec is None:
            raise LookupError(f"{task.id}: {app} is not in the simulator's catalog")
        subtask = subtask_for(task, app, spec.package)
        installed.append(InstalledApp(label=app, package=spec.package))
        terms += [subtask.search_term] if subtask.search_term else []
        sim.control.reset("boot")
        sim.control.set_day(task.day)
        moves = play_scripted_path(driver, perceiver, subtask.package, task.paths[app])
        scripted = ScriptedNavigator(moves, subtask, navigator, perceiver.settings,
                                     dialog_open=lambda: _dialog_open(driver, perceiver))
        vllm.respond_with(setup.navigator, _answer_with(scripted))
        copilot = Copilot(driver=driver, perceiver=perceiver, store=store,
                          budgets=BudgetSettings(swipes_per_capture=6), skills=False, explore=False,
                          navigator=LLMClient(navigator, role="navigator"),
                          evaluator=LLMClient(evaluator, role="evaluator"))
        sim.control.reset("boot")
        sim.control.set_day(task.day)
        mark = len(vllm.requests)
        result = navigate_subtask(copilot, NavigateRequest(run_id=new_id("run"), subtask=subtask))
        before = measured.total(_NAVIGATION)
        measured.add(vllm.requests[mark:])
        measured.apps.append(measured.total(_NAVIGATION) - before)
        texts = " ".join(e.label for c in result.captures for e in c.elements)
        measured.reached &= result.status is SubTaskStatus.COMPLETED and any(p in texts for p in task.scoring_points)
        captures += result.captures
    if not setup.full:
        return measured
    query = Query(text=task.query)
    answer = {"mentioned_apps": list(task.apps), "installed_related_apps": list(task.apps),
              "uninstalled_related_apps": [], "search terms": terms, "search_mode": task.page_mode.value,
              "information_flow": []}
    vllm.script("planner", json.dumps(answer, ensure_ascii=False))
    mark = len(vllm.requests)
    decompose_with_model(LLMClient(_endpoint(vllm, "planner"), role="decomposer"), query, installed)
    writer = LLMReportWriter(LLMClient(_endpoint(vllm, "writer"), role="synthesizer"))
    apps = [AppStatus(app_label=a.label, package=a.package, status=SubTaskStatus.COMPLETED) for a in installed]
    writer.write_report(query, captures, apps, terms)
    measured.add(vllm.requests[mark:])
    return measured


def _answer_with(scripted: ScriptedNavigator) -> Callable[[RecordedRequest], str]:
    """The recording server's responder for the navigator: the scripted path reads the request."""
    return lambda request: scripted.answer(request.text)


def _dialog_open(driver: AdbDriver, perceiver: Perceiver) -> bool:
    """Whether a pop-up covers the app now: the path player's own check, for the scripted navigator."""
    return is_dialog_open(perceiver.perceive(to_observation(driver.observe(), 0), use_ocr=False).screen)


def _stats(values: list[int]) -> str:
    floats = [float(v) for v in values]
    return (f"median {statistics.median(values):,.0f}, p95 {percentile(floats, 0.95):,.0f}, "
            f"max {max(values):,} (n={len(values)})")


def _plot(tasks: list[_Task]) -> str:
    """Stacked bars per task: navigator and evaluator text, their images, completions; goal lines."""
    ordered = sorted(tasks, key=lambda t: t.total(_NAVIGATION))
    figure = create_figure(9.0, 3.8)
    axes = figure.subplots()
    bottoms = [0.0] * len(ordered)
    parts: list[tuple[str, Callable[[_Task], int]]] = [
        ("navigator text", lambda t: t.text["navigator"]), ("navigator image", lambda t: t.image["navigator"]),
        ("evaluator text", lambda t: t.text["evaluator"]), ("evaluator image", lambda t: t.image["evaluator"]),
        ("completions", lambda t: t.completion["navigator"] + t.completion["evaluator"])]
    for label, value in parts:
        heights = [float(value(t)) for t in ordered]
        axes.bar(range(len(ordered)), heights, bottom=bottoms, label=label)
        bottoms = [b + h for b, h in zip(bottoms, heights, strict=True)]
    axes.axhline(_GOAL_MEDIAN, color="tab:red", linestyle="--", linewidth=1, label=f"goal: median < {_GOAL_MEDIAN:,}")
    axes.axhline(_GOAL_P95, color="tab:red", linestyle=":", linewidth=1, label=f"goal: p95 < {_GOAL_P95:,}")
    axes.set_xticks(range(len(ordered)), [t.id.removeprefix("s2_") for t in ordered], rotation=70, fontsize=6)
    axes.set_ylabel("tokens per task")
    axes.set_title(f"Navigation tokens per Study 2 task (n={len(ordered)}), measured at the server", fontsize=10)
    axes.legend(fontsize=7, ncol=2)
    return save_plot("tokens", "per-task", figure,
                     "Stacked bars: navigator and evaluator tokens per Study 2 task, text, image and completion")


def main() -> None:
    """Run every Study 2 task against the recording server and write the ``tokens`` section."""
    perceiver = Perceiver(PerceptionSettings(ocr_backend="none"))
    catalog = load_catalog()
    suite = [t for t in load_suite() if t.study is Study.STUDY2 and all(catalog.find_label(a) for a in t.apps)]
    with SimServer(phones=1, port=0, seed=7, catalog=catalog) as sim, RecordingOpenAIServer(_served()) as vllm:
        driver = AdbDriver(sim.serials[0], port=sim.port)
        try:
            tasks = [_measure(task, sim, driver, perceiver, catalog, vllm, DOCUMENTED) for task in suite]
            lean = [_measure(task, sim, driver, perceiver, catalog, vllm, LEAN) for task in suite]
        finally:
            driver.close()
        problems = vllm.problems
    navigation = [t.total(_NAVIGATION) for t in tasks]
    rows = [
        ("navigation (navigator + evaluator), all tokens", navigation,
         f"median < {_GOAL_MEDIAN:,}, p95 < {_GOAL_P95:,} (paper ~{_PAPER:,})"),
        ("navigation per app (one sub-task)", [a for t in tasks for a in t.apps], ""),
        ("navigation, single-app tasks", [t.total(_NAVIGATION) for t in tasks if len(t.apps) == 1], ""),
        ("navigation, text prompt tokens", [sum(t.text[r] for r in _NAVIGATION) for t in tasks], ""),
        ("navigation, image tokens", [sum(t.image[r] for r in _NAVIGATION) for t in tasks], ""),
        ("navigation, completion tokens", [sum(t.completion[r] for r in _NAVIGATION) for t in tasks], ""),
    ]
    for role in ("navigator", "evaluator", "decomposer", "synthesizer"):
        rows.append((f"{role}: text / image / completion", [t.total((role,)) for t in tasks],
                     f"text {statistics.median([t.text[role] for t in tasks]):,.0f} · image "
                     f"{statistics.median([t.image[role] for t in tasks]):,.0f} · completion "
                     f"{statistics.median([t.completion[role] for t in tasks]):,.0f} (medians)"))
    rows.append(("whole run (all four roles)", [t.total(tuple(dict.fromkeys(ROLES.values()))) for t in tasks], ""))
    rows.append((f"navigation, lean setup (max_pixels {LEAN_PIXELS:,}, evaluator without the screenshot)",
                 [t.total(_NAVIGATION) for t in lean],
                 f"reached {sum(t.reached for t in lean)}/{len(lean)}; median ratio to the documented setup "
                 f"{statistics.median(a.total(_NAVIGATION) / b.total(_NAVIGATION) for a, b in zip(lean, tasks, strict=True)):.2f}"))
    calls = [sum(t.calls[r] for r in _NAVIGATION) for t in tasks]
    table = "\n".join(f"| {name} | {_stats(values)} | {note} |" for name, values, note in rows)
    reached = sum(t.reached for t in tasks)
    picture = _plot(tasks)
    body = f"""
Every role points at the recording OpenAI-compatible server (a test double:
`droidretriever/testing/recording_server.py`), which counts each request body as vLLM
bills it: text tokens (cl100k, a proxy for Qwen's tokenizer) plus one token per 28x28
patch of each image at the served `max_pixels`. Nothing is projected: the copilot loop runs
on a virtual phone and what it sends is counted. The documented setup (docs/models.md):
navigator and evaluator with vision on at `max_pixels` = {MAX_PIXELS:,}.

**The navigator's answers come from the suites' scripted paths**
(`tasks.navigate.ScriptedNavigator`: each move's element is found on the screen the request
shows; a pop-up gets "back"): that is the point of this benchmark, it measures what a model
that navigates well is sent, not how well a model navigates. Skills and the explorer are
off, so every move of a path is a navigator call (opening the app needs none). The evaluator
answers what the double builds from its schema ("not complete"), so each app's target is the
one the path ends on (the navigator's "finish"); it is asked only on pages where its verdict
could count (not on a home, search or results page of a focused search). The decomposer
answers the task's apps, term and mode; the synthesizer writes from the task's captures
(input capped at `budgets.synthesis_input_tokens`).

| per Study 2 task (n={len(tasks)}) | measured | goal / medians |
|---|---|---|
{table}
| navigator + evaluator calls per task | {_stats(calls)} | |
| tasks reached and captured (every scoring point) | {reached}/{len(tasks)} | {len(tasks)}/{len(tasks)} |
| requests off vLLM's documented shape | {len(problems)} | 0 |

{picture}

Where the tokens go: each model call carries a static prompt (navigator ~280, evaluator
~390 tokens), the screen (the navigator's view: the whole description, or the task's blocks
when over 600 tokens; the evaluator is shown the same view), the screenshot (230 tokens at
{MAX_PIXELS:,} pixels) and an answer of ~30 tokens. A single-app task is 3 to 5 moves; a
multi-app task is two or three of them, which is what the p95 measures. The lean row trades
image detail (196x448 pixels) and the evaluator's screenshot for about a sixth fewer tokens.
The goal is met by neither setup: one app's sub-task is about 5,700 tokens when the model
makes every move, and the p95 is the multi-app tasks.
Before this section (issue 14): `bench.navigate` projected navigator + evaluator prompt
text alone at median 3,682 and p95 12,866 per task, with no image and no answer counted.
"""
    write_section("tokens", "Model tokens per task (measured at the server)", "python -m bench.tokens", body)
    print(body)


if __name__ == "__main__":
    main()
