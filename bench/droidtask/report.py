"""The DroidTask section of docs/benchmarks.md: the paper's table beside our rows, per app, a plot.

``python -m bench.droidtask`` runs :func:`main`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.droidtask.cases import DroidTaskCase, load_cases
from bench.droidtask.runs import ROWS, DroidTaskBench, TaskResult, run_row
from bench.maps import AppCoverage, explore_apps, recording_jobs
from bench.results import create_figure, parse_bench_args, save_plot, write_section
from core.config import PerceptionSettings, load_settings
from core.models import MapBudget
from core.recordings import DroidTask, find_data_dir
from device_farm.sim import SimServer
from inference.perception import Perceiver
from storage import FakeObjectStore, MapStore

__all__ = ["PAPER", "Figures", "main", "outcome", "plot_results", "report"]

PAPER = (  # UICOMPASS, Table 1 (SR, ACP, OSR, SPL in %); LLM-driven methods
    ("AutoDroid", 53.79, 71.72, 76.92, 15.87),
    ("Guardian", 45.20, 71.83, 0.0, 1.70),
    ("UICOMPASS", 68.27, 81.96, 80.80, 20.92),
)


@dataclass(frozen=True)
class Figures:
    """A row's metrics over some tasks, in % (OSR among the completed ones)."""

    tasks: int
    completed: int
    sr: float
    acp: float
    osr: float
    spl: float
    reached: int
    handed_over: int

    @classmethod
    def of(cls, results: Sequence[TaskResult]) -> Figures:
        done = [r for r in results if r.completed]
        count = max(1, len(results))
        return cls(
            tasks=len(results), completed=len(done), sr=100 * len(done) / count,
            acp=100 * sum(r.acp for r in results) / count,
            osr=100 * sum(r.stopped_when_done for r in done) / max(1, len(done)),
            spl=100 * sum(r.spl for r in results) / count,
            reached=sum(r.reached_screen for r in results), handed_over=sum(r.handed_over for r in results))


def _row_line(name: str, figures: Figures) -> str:
    osr = f"{figures.osr:.2f}%" if figures.completed else "-"
    return (f"| {name} | {figures.sr:.2f}% ({figures.completed}/{figures.tasks}) | {figures.acp:.2f}% | {osr} "
            f"| {figures.spl:.2f}% | {figures.reached}/{figures.tasks} | {figures.handed_over} |")


def outcome(result: TaskResult) -> str:
    if result.completed:
        return f"done in {result.path}" + ("" if result.stopped_when_done else ", went on")
    if result.handed_over:
        return "handed over"
    shown = "screen reached" if result.reached_screen else result.status.value
    return f"no ({shown}, {result.prefix}/{len(result.case.truth)} matched)"


def plot_results(results: Sequence[TaskResult], rows: Sequence[str], apps: Sequence[str]) -> str:
    """Per app and row: SR and ACP, beside the paper's overall SR and ACP of each method."""
    figure = create_figure(8.0, 4.2)
    axes = figure.subplots(1, 2, sharey=True)
    width = 0.8 / max(1, len(rows))
    colours = ("tab:blue", "tab:orange", "tab:green", "tab:purple")
    for panel, (metric, title) in zip(axes, (("sr", "SR (task completed)"), ("acp", "ACP (matched prefix)")),
                                      strict=True):
        for offset, (row, colour) in enumerate(zip(rows, colours, strict=False)):
            values = [getattr(Figures.of([r for r in results if r.row == row and r.case.task.app == app]), metric)
                      for app in apps]
            panel.bar([x + (offset - (len(rows) - 1) / 2) * width for x in range(len(apps))], values, width,
                      color=colour, label=row)
        for (method, sr, acp, _, _), style in zip(PAPER, (":", "-.", "--"), strict=True):
            panel.axhline(sr if metric == "sr" else acp, color="grey", linestyle=style, linewidth=1,
                          label=f"{method} (paper, overall, LLM)")
        panel.set_xticks(range(len(apps)), list(apps), rotation=45, ha="right", fontsize=7)
        panel.set_title(title, fontsize=9)
        panel.set_ylim(0, 100)
    axes[0].set_ylabel("% of the app's tasks")
    handles, labels = axes[0].get_legend_handles_labels()
    figure.legend(handles, labels, fontsize=7, loc="outside lower center", ncol=3, frameon=False)
    picture: str = save_plot("droidtask", "per-app", figure,
                             "DroidTask per app: SR and ACP of each row, the paper's overall SR and ACP as lines")
    return picture


def report(results: Sequence[TaskResult], cases: Sequence[DroidTaskCase], rows: Sequence[str],
           left: Sequence[tuple[DroidTask, str]]) -> str:
    """The docs section's body (markdown)."""
    apps = sorted({c.task.app for c in cases})
    paper = "\n".join(f"| {m} (paper; an LLM) | {sr:.2f}% | {acp:.2f}% | {osr:.2f}% | {s:.2f}% | - | - |"
                      for m, sr, acp, osr, s in PAPER)
    ours = "\n".join(_row_line(f"{row} (ours; no model)", Figures.of([r for r in results if r.row == row]))
                     for row in rows)
    per_app = "\n".join(
        f"| {app} | {sum(c.task.app == app for c in cases)} | "
        + " | ".join(f"{f.sr:.0f}% / {f.acp:.0f}% / {f.spl:.0f}% / {f.reached}" for f in
                     (Figures.of([r for r in results if r.row == row and r.case.task.app == app]) for row in rows))
        + " |" for app in apps)
    playable = [c for c in cases if c.playable]
    unplayable = ", ".join(c.key for c in cases if not c.playable) or "none"
    needing = [c for c in cases if c.hand_over is not None]
    hand_overs = "\n".join(
        f"| {c.key} | {c.task.goal} | step {c.hand_over.step}: {c.hand_over.label[:40]!r} ({c.hand_over.category}) | "
        + " | ".join(next(("stopped for a person" if r.handed_over else f"no ({r.status.value})")
                          for r in results if r.case is c and r.row == row) for row in rows) + " |"
        for c in needing if c.hand_over is not None)
    per_task = "\n".join(
        f"| {c.key} | {c.task.goal[:60]} | {len(c.truth)} | {'yes' if c.playable else 'no'} | "
        + " | ".join(outcome(r) for row in rows for r in results if r.case is c and r.row == row) + " |"
        for c in cases)
    endings = sorted({r.ending for r in results if not r.completed})
    why = "\n".join(f"| {ending} | " + " | ".join(
        f"{sum(r.ending == ending for r in results if r.row == row)}" for row in rows) + " |" for ending in endings)
    setups = ", ".join(c.key for c in cases if c.setup) or "none"
    no_target = sum(not c.targets for c in cases)
    searched = ", ".join(f"{c.key} ({c.search_term!r})" for c in cases if c.search_term) or "none"
    skipped = "".join(f"\n- {t.key}: {why}" for t, why in left)
    picture = plot_results(results, rows, apps)
    return f"""
Tasks: DroidTask (AutoDroid, MobiCom '24), the {len(cases)} tasks of its 8 apps in `shared/data/droidtask`
({len(left)} left out{skipped or ''}). Phones: replay phones serving each app's DroidBot recording; the
dataset has no screenshots, so each screen is drawn from its recorded views (`device_farm/sim/replay/draw.py`).
Each task: the app started fresh (for {setups}: then the recorded way to the task's first screen, where
its ground truth starts), the copilot loop (`navigate_subtask`) with the task's goal in words, page mode
focused, one try, a budget of 2 x the ground truth's steps + 2 actions; a search term only where the
ground truth types into the app's search field ({searched}). How each metric is counted is in
`bench/droidtask/__init__.py`'s docstring: SR = reached a screen only the task's effect shows, or matched
every ground-truth step in order and ended on its last screen ({no_target} tasks end on a screen an
earlier step already showed, so only the second counts for them); ACP = the matched prefix; OSR = among
the completed, stopped by itself on the last screen; SPL = completed x ground truth / max(path, ground
truth), over all tasks; navigation = showed the last recorded screen (or one of its kind), whatever it shows.
Scrolls are not actions (the ground truth has none: AutoDroid scrolled through each page to read it).

**The paper's methods are each driven by a large language model (GPT-class; the UICOMPASS paper's own
runs name DeepSeek-V3); our rows use no model at all.** The navigator row is the LLM navigator policy
talking to the shipped OpenAI-compatible stub, a test double scripted with the ground truth's moves:
it shows the model path acts on these screens ({sum(r.model_calls for r in results)} model calls), not
what a model would choose. The paper measured 145 tasks of 12 apps (people judged completion and took
the shortest path of each run); ours are {len(cases)} tasks of 8 of DroidTask's 13 apps, judged by the rules above.
The paper's UICOMPASS SPL is Table 1's 20.92% (its text's "+5.05%" agrees); its ablation table gives
30.85% for the same configuration.

| method | SR | ACP | OSR | SPL | navigation | correct hand-overs |
|---|---|---|---|---|---|---|
{paper}
{ours}

Per app (SR / ACP / SPL / tasks whose last screen was reached), one column per row:

| app | tasks | {' | '.join(rows)} |
|---|---|{'---|' * len(rows)}
{per_app}

{picture}

How the runs that did not complete their task ended:

| ending | {' | '.join(rows)} |
|---|{'---|' * len(rows)}
{why}

The ground truth itself, played on the replay graph, reaches its last recorded screen in
{len(playable)}/{len(cases)} tasks; the others leave the recording (a step whose outcome DroidBot never
saved, a system dialog the replay phones do not serve, a recording that starts elsewhere): {unplayable}.
No run can complete those.

Ground truths with a step the risk gate leaves to a person ({len(needing)}: deleting, sending, calling,
typing into a form); a run that stopped for a person there is a correct hand-over (not counted in SR):

| task | goal | the step | {' | '.join(rows)} |
|---|---|---|{'---|' * len(rows)}
{hand_overs}

<details><summary>Every task</summary>

| task | goal | steps | ground truth replays | {' | '.join(rows)} |
|---|---|---|---|{'---|' * len(rows)}
{per_task}

</details>
"""


MAP_BUDGET = MapBudget(screens=60, actions=600, seconds=600.0)


def _coverage(rows: Sequence[AppCoverage]) -> str:
    """The maps the app-map row used: the recorded graph's screens the explorer reached, per app."""
    reached = sum(len(r.reached) for r in rows)
    total = sum(r.total for r in rows)
    lines = [f"The app-map row's maps were explored first on each app's replay phone, knowing no task "
             f"(budget {MAP_BUDGET.screens} screens, {MAP_BUDGET.actions} actions, {MAP_BUDGET.seconds:.0f} s "
             f"per app): {reached}/{total} recorded screens reached ({100 * reached / max(1, total):.0f}%), "
             f"{sum(r.seconds for r in rows) / 60:.1f} phone-minutes.", "",
             "| app | recorded screens reached | map screens | walls | s | actions |", "|---|---|---|---|---|---|"]
    lines += [f"| {r.label} | {len(r.reached)}/{r.total} ({100 * r.share:.0f}%) | {r.map_screens} | {r.walls} | "
              f"{r.seconds:.0f} | {r.actions} |" for r in sorted(rows, key=lambda r: r.label.casefold())]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=find_data_dir(load_settings()))
    parser.add_argument("--apps", nargs="*", default=[], help="only these app folders (clock, contacts, ...)")
    args = parse_bench_args(parser)
    if args.data is None:
        raise SystemExit("no data: pass --data ../shared/data (or set DROIDRETRIEVER_DATA_DIR)")
    perceiver = Perceiver(PerceptionSettings(ocr_backend="none"))
    apps, cases, left = load_cases(args.data / "droidtask", perceiver, args.apps)
    results: list[TaskResult] = []
    maps = MapStore(FakeObjectStore())
    jobs = recording_jobs(apps)
    with SimServer(phones=1, port=0, seed=7, replays=apps) as server:
        # The maps first, by exploring each app's replay phone knowing no task; then the rows.
        explore_apps(server, jobs, maps, Perceiver(PerceptionSettings()), MAP_BUDGET)
        bench = DroidTaskBench(server, perceiver, maps)
        for name, make_copilot in ROWS:
            for result in run_row(bench, cases, name, make_copilot):
                print(f"{name:<34} {result.case.key:<18} {outcome(result):<40} ({result.status.value})", flush=True)
                results.append(result)
    rows = [name for name, _ in ROWS]
    for name in rows:
        figures = Figures.of([r for r in results if r.row == name])
        print(f"{name}: SR {figures.sr:.2f}% ACP {figures.acp:.2f}% OSR {figures.osr:.2f}% SPL {figures.spl:.2f}% "
              f"navigation {figures.reached}/{figures.tasks} hand-overs {figures.handed_over}")
    body = report(results, cases, rows, left) + "\n\n" + _coverage([c for _, c in jobs])
    path = write_section("droidtask", "DroidTask on replay phones (the UICOMPASS paper's metrics)",
                         "python -m bench.droidtask", body)
    print(f"written to {path}")
