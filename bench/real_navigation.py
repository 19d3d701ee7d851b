"""Navigation on real apps nobody here wrote: the recorded task sequences, replayed on replay phones.

``python -m bench.real_navigation`` takes every goal of
``suites/real_apps/goals.yaml``, finds its target screen by
playing the person's recorded events on the recording's replay graph, and
runs the copilot loop (``tasks.navigate.navigate_subtask``) on a replay phone
through the ADB protocol, once per policy:

- **skills + explorer**: no model, no route (what a fresh install has);
- **route memory**: a route learnt from the person's recorded demonstration,
  replayed on a fresh launch (skills and explorer behind it);
- **navigator (scripted test double)**: the LLM navigator policy talking to the
  shipped OpenAI-compatible stub scripted with the demonstration's moves. It
  checks that the model path acts on real screens and counts its prompt
  tokens; it is not a model's figure.

Success: the phone shows the recorded target screen, or a screen of its kind
(same content-free signature and activity), within twice the person's number
of steps, counted from the app's fresh launch (after the person's own log-in
steps where the goal has them). Goals whose recording leaves its own graph (a
screen that was never saved) have no target and are listed apart; sign-in and
sign-up goals are hand-overs: success is the run stopping for a person.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.results import create_figure, parse_bench_args, save_plot, write_section
from core.config import BudgetSettings, LLMEndpoint, PerceptionSettings, load_settings
from core.models import (
    Action,
    AppMap,
    Back,
    Input,
    LongPress,
    MapBudget,
    Point,
    Screen,
    SubTaskResult,
    SubTaskStatus,
    Swipe,
    Tap,
    UIElement,
    new_id,
)
from core.recordings import DroidbotEvent, find_data_dir, load_droidbot_task
from device_farm.adb_driver import AdbDriver
from device_farm.sim import ReplayApp, ReplayStep, SimServer, load_recordings
from device_farm.sim.replay.tasks import TaskPlay, play_task

# A test double, used as one: the scripted OpenAI-compatible server answers what a navigator
# following the person's demonstration would, so the model path runs without a model.
from droidretriever.testing import OpenAIStub as OpenAIStubTestDouble
from inference.llm import LLMClient
from inference.memory import RouteMemory
from inference.perception import Perceiver, Perception
from storage import FakeObjectStore, MapStore
from suites import (
    AppSplit,
    RecordedGoal,
    load_app_split,
    load_recorded_goals,
    recorded_subtask,
)
from tasks.mapping import MapBuilder
from tasks.navigate import (
    Copilot,
    NavigateRequest,
    ObjectStoreBlobs,
    ScriptedMove,
    ScriptedPathError,
    navigate_subtask,
    navigator_answers,
    record_scripted_route,
    to_observation,
)
from tasks.navigate.act import execute_action

__all__ = [
    "POLICIES",
    "GoalRun",
    "RealAppsBench",
    "Target",
    "action_for",
    "find_targets",
    "iter_runs",
    "main",
]

POLICIES = ("skills + explorer", "route memory", "navigator (scripted test double)")
MAP_POLICY = "skills + explorer + app map"  # the same, with the app's map built by exploring first
MAP_BUDGET = MapBudget(screens=60, actions=600, seconds=600.0)
_SKIPPED_IN_STEPS = ("text", "clear", "key DEL", "key ENTER", "key SEARCH", "launch")  # parts of one text entry


@dataclass(frozen=True)
class Target:
    """Where a goal's recorded events lead on the replay graph, and the path there."""

    goal: RecordedGoal
    app: ReplayApp
    events: tuple[DroidbotEvent, ...]  # acting events: the person's setup first, then the navigation
    play: TaskPlay

    @property
    def setup(self) -> tuple[DroidbotEvent, ...]:
        return self.events[: self.goal.setup]

    @property
    def moves(self) -> tuple[DroidbotEvent, ...]:
        return self.events[self.goal.setup :]

    @property
    def steps(self) -> int:
        """The person's number of steps to the target (after the setup)."""
        return len(self.moves)

    def reached(self, screen: str) -> bool:
        """The recorded target screen, or a screen of its kind."""
        shown, target = self.app.screens.get(screen), self.app.screens[self.play.target]
        return shown is not None and (screen == target.key or shown.kind == target.kind)


@dataclass(frozen=True)
class GoalRun:
    """One goal, one policy: what happened."""

    goal: RecordedGoal
    policy: str
    success: bool
    steps: int  # counted actions to the target (or all counted actions when it was not reached)
    budget: int
    off_graph: int  # actions with no recorded outcome, up to the target (or the end)
    status: SubTaskStatus
    reason: str
    model_calls: int = 0


def find_targets(apps: Sequence[ReplayApp], goals: Sequence[RecordedGoal],
                 tasks_dir: Path) -> tuple[list[Target], list[tuple[RecordedGoal, str]]]:
    """Targets of the goals whose recorded events stay on their app's graph; the others with why."""
    targets: list[Target] = []
    left: list[tuple[RecordedGoal, str]] = []
    for goal in goals:
        events = load_droidbot_task(tasks_dir / f"{goal.task}.json")
        acting = tuple(e for e in events if e.event_type not in ("intent", "kill_app"))
        package = next((e.view.package for e in acting if e.view is not None and e.view.package), None)
        plays = [(app, play_task(app, events)) for app in apps if app.package == package]
        done = [(app, play) for app, play in plays if play.complete]
        if done:
            targets.append(Target(goal, done[0][0], acting, done[0][1]))
            continue
        furthest = max((play.left_graph_at or 0 for _, play in plays), default=0)
        left.append((goal, f"the recording leaves its own graph at event {furthest + 1} of {len(acting)} "
                           "(the next screen was never saved)" if plays else "no recording of the app"))
    return targets, left


def _element_at(screen: Screen, x: int, y: int, *, editable: bool = False) -> UIElement | None:
    point = Point(x=x, y=y)
    holding = [e for e in screen.elements if e.bounds.contains(point) and (e.editable or not editable)]
    taking = [e for e in holding if e.clickable or e.long_clickable or e.editable] or holding
    return min(taking, key=lambda e: e.bounds.area) if taking else None


def action_for(event: DroidbotEvent, screen: Screen, *, submit: bool) -> Action | None:
    """The copilot action that does ``event`` on ``screen`` (None when no element is there)."""
    if event.event_type == "key":
        return Back(reason="the person went back") if (event.name or "").upper() == "BACK" else None
    if event.view is None:
        return None
    centre = event.view.box.center
    if event.event_type == "scroll":
        box, reach = event.view.box, 2 / 5
        dx, dy = round(box.width * reach), round(box.height * reach)
        ends = {"DOWN": (0, dy, 0, -dy), "UP": (0, -dy, 0, dy), "RIGHT": (dx, 0, -dx, 0), "LEFT": (-dx, 0, dx, 0)}
        x1, y1, x2, y2 = ends.get((event.direction or "").upper(), (0, dy, 0, -dy))
        return Swipe(start=Point(x=centre.x + x1, y=centre.y + y1), end=Point(x=centre.x + x2, y=centre.y + y2),
                     duration_ms=500, reason="the person scrolled")
    element = _element_at(screen, centre.x, centre.y, editable=event.event_type == "set_text")
    if element is None:
        return None
    if event.event_type == "set_text":
        return Input(text=event.text or "", target=element.id, submit=submit, reason="the person typed")
    if event.event_type == "long_click":
        return LongPress(target=element.id, reason="the person long-pressed")
    return Tap(target=element.id, reason="the person tapped")


class RealAppsBench:
    """A simulator with the recordings installed, and the runs of goals on it."""

    def __init__(self, server: SimServer, perceiver: Perceiver) -> None:
        self.server, self.perceiver = server, perceiver
        phones = server.control.status()
        self.serials = {(p.width, p.height): p.serial for p in phones if p.recorded}

    def _driver(self, target: Target) -> AdbDriver:
        return AdbDriver(self.serials[(target.app.width, target.app.height)], port=self.server.port)

    def _trail(self, driver: AdbDriver) -> list[ReplayStep]:
        return list(self.server.control.status(driver.serial)[0].replay_trail)

    def _perceive(self, driver: AdbDriver) -> Perception:
        return self.perceiver.perceive(to_observation(driver.observe(), 0), use_ocr=False)

    def _start(self, driver: AdbDriver, target: Target) -> None:
        """Fresh phone, the app launched, the person's setup (logging in) done."""
        self.server.control.reset("boot")
        driver.open_app(target.app.package)
        for event, submitted in zip(target.setup, _submits(target)[: target.goal.setup], strict=True):
            screen = self._perceive(driver).screen
            action = action_for(event, screen, submit=submitted)
            if action is not None:
                execute_action(driver, action, screen)

    def demonstrate(self, target: Target) -> list[ScriptedMove] | None:
        """The person's navigation as copilot moves on the replay phone (None when one does not fit)."""
        driver = self._driver(target)
        try:
            self._start(driver, target)
            moves: list[ScriptedMove] = []
            for event, submitted in zip(target.moves, _submits(target)[target.goal.setup :], strict=True):
                perception = self._perceive(driver)
                action = action_for(event, perception.screen, submit=submitted)
                if action is None:
                    return None
                moves.append(ScriptedMove(action=action, perception=perception))
                execute_action(driver, action, perception.screen)
            return moves
        finally:
            driver.close()

    def build_maps(self, targets: Sequence[Target], maps: MapStore, budget: MapBudget) -> list[AppMap]:
        """Explore each recorded app of ``targets`` on its replay phone first (no goal known)."""
        built: list[AppMap] = []
        for app in {(t.app.package, t.app.width): t.app for t in targets}.values():
            self.server.control.reset("boot")
            driver = AdbDriver(self.serials[(app.width, app.height)], port=self.server.port)
            try:
                built.append(MapBuilder(driver, self.perceiver, maps, budget=budget).build(app.package,
                                                                                           label=app.label))
            finally:
                driver.close()
        return built

    def run(self, target: Target, policy: str, *, memory: RouteMemory | None = None,
            navigator: LLMClient | None = None, maps: MapStore | None = None) -> GoalRun:
        """Navigate ``target``'s goal once with ``policy``; judged on the replay phone's trail."""
        driver = self._driver(target)
        try:
            self._start(driver, target)
            before = len(self._trail(driver))
            budget = 2 * target.steps
            copilot = Copilot(
                driver=driver, perceiver=self.perceiver, store=FakeObjectStore(),
                budgets=BudgetSettings(steps_per_subtask=budget + 1, retries=1, swipes_per_capture=0),
                memory=memory, navigator=navigator, skills=navigator is None, explore=navigator is None,
                restart_app=target.goal.setup == 0, maps=maps,
            )
            subtask = recorded_subtask(target.goal, target.app.package)
            result = navigate_subtask(copilot, NavigateRequest(run_id=new_id("run"), subtask=subtask))
            return _judge(target, policy, result, self._trail(driver)[before:], budget)
        finally:
            driver.close()


def _submits(target: Target) -> list[bool]:
    """Per acting event: whether the person's text was submitted (ENTER) on the graph."""
    return [outcome.value == "submitted" for outcome in target.play.outcomes]


def _judge(target: Target, policy: str, result: SubTaskResult, trail: list[ReplayStep], budget: int) -> GoalRun:
    steps = off_graph = 0
    reached = False
    for step in trail:
        counted = step.action not in _SKIPPED_IN_STEPS
        if counted:
            steps += 1
            if steps > budget:
                steps = budget
                break
        off_graph += step.outcome.value == "off_graph"
        if steps >= 1 and target.reached(step.screen):
            reached = True
            break
    success = result.status is SubTaskStatus.NEEDS_USER if target.goal.hand_over else reached
    return GoalRun(target.goal, policy, success, steps, budget, off_graph, result.status, result.reason)


def iter_runs(bench: RealAppsBench, targets: Sequence[Target], policies: Sequence[str],
              endpoint: LLMEndpoint | None = None, maps: MapStore | None = None) -> Iterator[GoalRun]:
    """Every target with every policy; hand-over goals once with skills and explorer (and once more
    with the app map when ``maps`` holds maps: the :data:`MAP_POLICY` row)."""
    for target in targets:
        if target.goal.hand_over:
            yield bench.run(target, POLICIES[0])
            if maps is not None:
                yield bench.run(target, MAP_POLICY, maps=maps)
            continue
        if maps is not None:
            yield bench.run(target, MAP_POLICY, maps=maps)
        moves = bench.demonstrate(target) if len(policies) > 1 else None
        for policy in policies:
            if policy == POLICIES[0]:
                yield bench.run(target, policy)
            elif moves is None:
                yield GoalRun(target.goal, policy, False, 0, 2 * target.steps, 0, SubTaskStatus.FAILED,
                              "the person's demonstration does not fit the perceived screens")
            elif policy == POLICIES[1]:
                memory = RouteMemory(ObjectStoreBlobs(FakeObjectStore()))
                record_scripted_route(memory, recorded_subtask(target.goal, target.app.package), moves)
                yield bench.run(target, policy, memory=memory)
            else:
                yield _run_scripted_navigator(bench, target, moves, endpoint or LLMEndpoint())


def _run_scripted_navigator(bench: RealAppsBench, target: Target, moves: list[ScriptedMove],
                            endpoint: LLMEndpoint) -> GoalRun:
    subtask = recorded_subtask(target.goal, target.app.package)
    with OpenAIStubTestDouble() as stub:
        configured = endpoint.model_copy(update={"base_url": stub.base_url, "model": stub.model})
        try:
            answers = navigator_answers(moves, subtask, configured, bench.perceiver.settings)
        except ScriptedPathError as exc:  # a recorded swipe over one view: no navigator answer says that
            return GoalRun(target.goal, POLICIES[2], False, 0, 2 * target.steps, 0, SubTaskStatus.FAILED,
                           f"not scripted: {exc}")
        stub.enqueue(*answers, *answers[-1:] * 4)  # a few spare "finish" answers
        run = bench.run(target, POLICIES[2], navigator=LLMClient(configured, role="navigator"))
        return dataclasses.replace(run, model_calls=len(stub.requests))


def _row(name: str, runs: list[GoalRun]) -> str:
    done = [r for r in runs if r.success]
    steps = f"{statistics.median(r.steps for r in done):.0f}" if done else "-"
    ratio = f"{statistics.median(r.steps / max(1, r.budget // 2) for r in done):.2f}" if done else "-"
    return (f"| {name} | {len(done)}/{len(runs)} ({100 * len(done) / max(1, len(runs)):.0f}%) | {steps} | {ratio} "
            f"| {sum(r.off_graph for r in runs)} ({sum(r.off_graph for r in runs) / max(1, len(runs)):.1f} per goal) |")


def _parts_table(runs: Sequence[GoalRun], split: AppSplit, policies: Sequence[str]) -> str:
    """Targets reached and hand-overs stopped, per part of the split and policy."""
    lines = ["| policy | part | targets reached | sign-in goals stopped for a person |", "|---|---|---|---|"]
    for policy in policies:
        for part in ("tuning", "held out"):
            mine = [r for r in runs if r.policy == policy and split.part(r.goal.app) == part]
            goals = [r for r in mine if not r.goal.hand_over]
            handed = [r for r in mine if r.goal.hand_over]
            reached = sum(r.success for r in goals)
            share = f" ({100 * reached / len(goals):.0f}%)" if goals else ""
            lines.append(f"| {policy} | {part} | {reached}/{len(goals)}{share} | "
                         f"{sum(r.success for r in handed)}/{len(handed)} |")
    return "\n".join(lines)


def plot_runs(runs: list[GoalRun], policies: Sequence[str]) -> str:
    """Per goal and policy: steps to the target (filled) or the budget spent (hollow), against the person's."""
    goals = sorted({r.goal.task for r in runs if not r.goal.hand_over})
    figure = create_figure(8.0, 3.8)
    axes = figure.subplots()
    colours = ("tab:blue", "tab:purple", "tab:orange", "tab:green")
    for offset, (policy, colour) in enumerate(zip(policies, colours, strict=False)):
        for x, task in enumerate(goals):
            run = next((r for r in runs if r.goal.task == task and r.policy == policy), None)
            if run is None:
                continue
            axes.scatter(x + (offset - 1.5) * 0.18, run.steps, color=colour, s=28,
                         facecolors=colour if run.success else "none",
                         label=policy if x == 0 else None)
    person = [next(r for r in runs if r.goal.task == t).budget // 2 for t in goals]
    axes.scatter(range(len(goals)), person, marker="_", s=200, color="black", label="the person's steps")
    axes.set_xticks(range(len(goals)), [t.replace("_", " ")[:22] for t in goals], rotation=60, ha="right",
                    fontsize=7)
    axes.set_ylabel("steps (filled: reached, hollow: not)")
    axes.set_title("Real-app goals: steps to the recorded target per policy", fontsize=10)
    axes.legend(fontsize=7, loc="upper left")
    picture: str = save_plot("real-navigation", "steps", figure,
                     "Per goal and policy: steps to the recorded target (filled) or spent without reaching it")
    return picture


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=find_data_dir(load_settings()))
    parser.add_argument("--apps", nargs="*", default=[], help="only goals of these apps (labels)")
    parser.add_argument("--no-maps", action="store_true",
                        help="leave out the app-map row (no exploring before the goals)")
    args = parse_bench_args(parser)
    if args.data is None:
        raise SystemExit("no recordings: pass --data ../shared/data (or set DROIDRETRIEVER_DATA_DIR)")
    recorded = args.data / "droidbot-real"
    apps = load_recordings([recorded])
    goals = [g for g in load_recorded_goals() if not args.apps or g.app in args.apps]
    targets, left = find_targets(apps, goals, recorded / "tasks")
    perceiver = Perceiver(PerceptionSettings(ocr_backend="none"))
    maps = None if args.no_maps else MapStore(FakeObjectStore())
    policies = POLICIES if maps is None else (POLICIES[0], MAP_POLICY, *POLICIES[1:])
    built: list[AppMap] = []
    with SimServer(phones=1, port=0, seed=7, replays=apps) as server:
        bench = RealAppsBench(server, perceiver)
        if maps is not None:
            built = bench.build_maps(targets, maps, MAP_BUDGET)
        runs = []
        for run in iter_runs(bench, targets, POLICIES, maps=maps):
            print(f"{run.policy:<34} {run.goal.task:<36} {'reached' if run.success else 'no'} "
                  f"{run.steps}/{run.budget} steps, {run.off_graph} off graph ({run.status.value})", flush=True)
            runs.append(run)
    navigation = [r for r in runs if not r.goal.hand_over]
    hand_overs = [r for r in runs if r.goal.hand_over]
    rows = [_row(policy, [r for r in navigation if r.policy == policy]) for policy in policies]
    per_goal = "\n".join(
        f"| {t.goal.task} | {t.goal.app} | {t.goal.goal} | {t.steps} | "
        + " | ".join(next(("reached in " + str(r.steps) if r.success else f"no ({r.status.value})")
                          for r in navigation if r.goal is t.goal and r.policy == p) for p in policies) + " |"
        for t in targets if not t.goal.hand_over)
    split = load_app_split()
    parts = _parts_table(runs, split, (POLICIES[0], *((MAP_POLICY,) if maps is not None else ())))
    mapped = "\n".join(f"- {m.label} ({m.version}): {len(m.screens)} screens, {len(m.walls)} walls, "
                        f"{m.stats.actions} actions, {m.stats.seconds:.0f} s ({m.stats.stopped})" for m in built)
    excluded = "\n".join(f"- {g.task} ({g.app}): {why}" for g, why in left)
    picture = plot_runs(navigation, policies)
    body = f"""
Goals: `suites/real_apps/goals.yaml`, one per task sequence a person recorded with DroidBot
on a real app ({len(goals)} tasks), written before any measurement. Phones: replay phones serving
`shared/data/droidbot-real` (`device_farm/sim/replay`), driven through the ADB protocol by the copilot
loop (`navigate_subtask`, one try, no OCR). Target: the screen the person's recorded events reach on the
replay graph; success = that screen or one of its kind (same content-free signature and activity)
within 2x the person's steps from a fresh launch (after the person's own log-in steps where a goal has
them). A step is one copilot action (typing a search and submitting it is one, as in the recording).
Off-graph actions: actions the recording holds no outcome for (the screen stays as it was).

| policy | goals reached | median steps (reached) | median steps / person's | off-graph actions |
|---|---|---|---|---|
{chr(10).join(rows)}

The apps are split in two before any app-map work (`suites/real_apps/split.yaml`):
tuning apps ({', '.join(split.tuning)}) may be looked at while building general mechanisms; held-out
apps ({', '.join(split.held_out)}) are only measured. Without a model:

{parts}

The app-map row explores each app on its replay phone first, knowing no goal (budget
{MAP_BUDGET.screens} screens, {MAP_BUDGET.actions} actions, {MAP_BUDGET.seconds:.0f} s per app), then
navigates with skills, explorer and the map's routes:

{mapped or "- (not run: --no-maps)"}

Sign-in and sign-up goals are hand-overs: the agent never logs in, so success is the run stopping for
a person ({POLICIES[0]}): {sum(r.success for r in hand_overs if r.policy == POLICIES[0])}/
{sum(1 for r in hand_overs if r.policy == POLICIES[0])} stopped
({', '.join(sorted({r.goal.task + ': ' + r.status.value for r in hand_overs if r.policy == POLICIES[0]}))}).

The navigator row is the LLM navigator policy talking to the shipped OpenAI-compatible stub, a test
double scripted with the person's demonstration: it shows the model path acts on real screens
({sum(r.model_calls for r in runs)} model calls), not what a model would choose.

| goal (recorded task) | app | goal in words | person's steps | {' | '.join(policies)} |
|---|---|---|---|{'---|' * len(policies)}
{per_goal}

Goals without a target ({len(left)}): their recording leaves its own graph (a screen DroidBot never saved),
so no target screen exists to reach:

{excluded}

{picture}
"""
    path = write_section("real-navigation", "Navigation on real apps (replay phones)",
                         "python -m bench.real_navigation", body)
    print(body)
    print(f"written to {path}")


if __name__ == "__main__":
    main()
