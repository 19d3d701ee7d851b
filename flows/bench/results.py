"""A benchmark run's results as files: ``results.json``, ``results.md`` and plots; listing; comparing.

    write_results(results, store, out_dir, settings)   -> bench/<id>/... in the store + a local folder
    load_results(store, "bench-3f2a")  or  load_results(store, "path/to/results.json")
    list_results(store)                -> every run's results, newest first
    compare_results(a, b)              -> a Markdown table: per task and metric, better / worse

Plots (matplotlib, without a display): per-task coverage (crosses mark a wrong value
stated), per-task wall time, and tokens per role when a model was configured.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

from core.config import Settings
from core.errors import DroidRetrieverError
from core.private_files import write_private
from flows.bench.models import BenchResults, BenchSummary, BenchTaskResult
from flows.errors import FlowError
from storage import ObjectStore

__all__ = [
    "bench_key",
    "compare_results",
    "list_results",
    "load_results",
    "render_markdown",
    "write_results",
]

_PREFIX = "bench/"


def bench_key(bench_run_id: str, name: str) -> str:
    """Where a file of a benchmark run lives in the object store."""
    return f"{_PREFIX}{bench_run_id}/{name}"


def write_results(results: BenchResults, store: ObjectStore, out_dir: str | None,
                  settings: Settings) -> Path:
    """Store the run's files under ``bench/<id>/`` and in ``out_dir`` (default
    ``<state>/bench/<id>/``); the local folder."""
    folder = Path(out_dir) if out_dir else settings.state_dir / "bench" / results.bench_run_id
    # Under the state folder, the owner's alone; a folder a person named is theirs to set.
    write: Callable[[Path, bytes], object] = write_private if not out_dir else Path.write_bytes
    if out_dir:
        folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, tuple[bytes, str]] = {
        "results.json": (results.model_dump_json(indent=1).encode(), "application/json"),
        "results.md": (render_markdown(results).encode(), "text/markdown; charset=utf-8"),
    }
    for name, png in _plots(results).items():
        files[name] = (png, "image/png")
    for name, (data, kind) in files.items():
        write(folder / name, data)
        store.put_bytes(bench_key(results.bench_run_id, name), data, content_type=kind)
    return folder


def load_results(store: ObjectStore, ref: str) -> BenchResults:
    """A run's results by id (from the store) or by the path of a ``results.json``."""
    path = Path(ref)
    try:
        if path.suffix == ".json" or path.is_dir():
            file = path / "results.json" if path.is_dir() else path
            return BenchResults.model_validate_json(file.read_bytes())
        return BenchResults.model_validate_json(store.get_bytes(bench_key(ref, "results.json")))
    except (OSError, ValueError, DroidRetrieverError) as exc:
        raise FlowError(f"no benchmark results at {ref!r}: {str(exc).splitlines()[0][:160]}",
                        hint="give a run id from `droidretriever bench list` or a results.json path") from exc


def list_results(store: ObjectStore) -> list[BenchResults]:
    """Every stored run's results, newest first."""
    found = [o.key for o in store.list_objects(_PREFIX) if o.key.endswith("/results.json")]
    runs = [BenchResults.model_validate_json(store.get_bytes(key)) for key in found]
    return sorted(runs, key=lambda r: r.started_at, reverse=True)


def _percent(part: float | None) -> str:
    return "-" if part is None else f"{part:.0%}"


def _summary_rows(s: BenchSummary) -> list[tuple[str, str]]:
    return [
        ("tasks asked", str(s.tasks)),
        ("scoring points stated as answers (coverage)", f"{s.points_found}/{s.points_total} ({s.coverage:.0%})"),
        ("tasks fully answered (every point, no wrong value)", f"{s.fully_answered}/{s.tasks}"),
        ("accuracy (points / points and wrong values stated)", f"{_percent(s.accuracy)} ({s.wrong_values} wrong)"),
        ("redundancy (claims tied to no point)", _percent(s.redundancy)),
        ("app-level decomposition right", f"{s.apps_right}/{s.tasks}"),
        ("page-mode decomposition right", f"{s.mode_right}/{s.tasks}"),
        ("navigation (apps whose target page was reached and captured)", f"{s.navigated_apps}/{s.wanted_apps}"),
        ("tasks with every scoring point on a captured page", f"{s.all_points_captured}/{s.tasks}"),
        ("steps (of which a person's)", f"{s.steps} ({s.intervention_steps})"),
        ("interventions: tasks with a pause", f"{s.tasks_paused}/{s.tasks}"),
        ("model calls / tokens", f"{s.model_calls} / {s.tokens}"),
        ("wall time per task (median)", f"{s.median_wall_s:.1f} s"),
        ("tasks that ended in an error", str(s.errors)),
    ]


def _task_row(t: BenchTaskResult) -> str:
    score, m = t.score, t.metrics
    points = f"{len(score.found)}/{score.points_total}" if score else "-"
    if score is not None and score.fully_answered:
        points += " ✓"
    if t.below_expectation:
        points += f" (expected {t.expected_coverage:.0%})"
    wrong = ", ".join(score.wrong) if score and score.wrong else "-"
    outcome = t.error or ", ".join(f"{a} {s}" for a, s in m.statuses.items()) or "-"
    return (f"| {t.task_id}{f' #{t.repeat}' if t.repeat > 1 else ''} | {points} | {wrong} | "
            f"{'✓' if m.apps_right else '✗'} | {'✓' if m.mode_right else '✗'} | "
            f"{len(m.navigated)}/{len(m.apps_wanted)} | {m.steps} ({m.intervention_steps}) | "
            f"{t.operator_answers} | {m.model_calls} | {m.wall_s:.1f} | {outcome.replace('|', '/')} |")


def render_markdown(results: BenchResults) -> str:
    """The run as a Markdown page: conditions, the suite's figures, one row per task."""
    r = results.request
    lines = [f"# Benchmark {results.bench_run_id}: suite {results.suite}", "",
             f"Command: `droidretriever bench run {r.suite} --devices {r.devices} --repeat {r.repeat} "
             f"--operator {r.operator.value}`  ",
             f"Host: {results.host}; started {results.started_at:%Y-%m-%d %H:%M} UTC; "
             f"{len(results.phones)} phone(s); plan by {results.decomposer}; "
             f"{results.wall_s:.0f} s in all", "",
             "| measure | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in _summary_rows(results.summary())]
    lines += ["", "| task | points | wrong | apps | mode | navigated | steps (person) | operator | "
              "model calls | s | outcome |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += [_task_row(t) for t in results.tasks]
    return "\n".join(lines) + "\n"


def _figures(a: BenchResults) -> dict[str, float | None]:
    s = a.summary()
    return {"coverage": s.coverage, "fully answered": float(s.fully_answered), "accuracy": s.accuracy,
            "redundancy": s.redundancy, "apps right": float(s.apps_right), "mode right": float(s.mode_right),
            "navigated apps": float(s.navigated_apps),
            "every point captured": float(s.all_points_captured), "steps": float(s.steps),
            "tasks paused": float(s.tasks_paused), "model calls": float(s.model_calls),
            "median wall s": s.median_wall_s}


# Metrics where less is better; the others improve upwards.
_LOWER_IS_BETTER = {"redundancy", "steps", "model calls", "median wall s", "wall s", "wrong"}


def _mark(name: str, old: float | None, new: float | None) -> str:
    if old is None or new is None or abs(new - old) < 1e-9:
        return ""
    better = (new < old) if name in _LOWER_IS_BETTER else (new > old)
    return " ▲ better" if better else " ▼ worse"


def _show(value: float | None, name: str) -> str:
    if value is None:
        return "-"
    if name in {"coverage", "accuracy", "redundancy"}:
        return f"{value:.0%}"
    return f"{value:.1f}" if name.endswith(" s") else f"{value:g}"


def compare_results(a: BenchResults, b: BenchResults) -> str:
    """Differences from run ``a`` to run ``b``: the suite's figures, then per task; ▲ better, ▼ worse."""
    lines = [f"# {a.bench_run_id} ({a.suite}) -> {b.bench_run_id} ({b.suite})", "",
             "| metric | before | after | |", "|---|---|---|---|"]
    fa, fb = _figures(a), _figures(b)
    for name in fa:
        lines.append(f"| {name} | {_show(fa[name], name)} | {_show(fb[name], name)} |"
                     f"{_mark(name, fa[name], fb[name])} |")
    before = {(t.task_id, t.repeat): t for t in a.tasks}
    lines += ["", "| task | metric | before | after | |", "|---|---|---|---|---|"]
    for t in b.tasks:
        old = before.get((t.task_id, t.repeat))
        if old is None:
            lines.append(f"| {t.task_id} | (new) | - | {t.coverage:.0%} | |")
            continue
        for name, x, y in (("coverage", old.coverage, t.coverage),
                           ("wrong", float(len(old.score.wrong) if old.score else 0),
                            float(len(t.score.wrong) if t.score else 0)),
                           ("navigated apps", float(len(old.metrics.navigated)), float(len(t.metrics.navigated))),
                           ("steps", float(old.metrics.steps), float(t.metrics.steps)),
                           ("wall s", old.metrics.wall_s, t.metrics.wall_s)):
            mark = _mark(name, x, y)
            if name == "wall s" and abs(y - x) < 0.2 * max(x, 1.0):
                mark = ""  # timing noise: only a change of a fifth or more is marked
            if mark:
                lines.append(f"| {t.task_id} | {name} | {_show(x, name)} | {_show(y, name)} |{mark} |")
    gone = sorted(set(before) - {(t.task_id, t.repeat) for t in b.tasks})
    lines += [f"| {task_id} | (not asked) | | | |" for task_id, _ in gone]
    return "\n".join(lines) + "\n"


def _plots(results: BenchResults) -> dict[str, bytes]:
    """PNG plots of the run: coverage per task, wall time per task, tokens per role (if any)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = results.tasks
    if not tasks:
        return {}
    names = [t.task_id + (f" #{t.repeat}" if t.repeat > 1 else "") for t in tasks]
    height = max(3.0, 0.28 * len(tasks) + 1.2)
    plots: dict[str, bytes] = {}

    fig, ax = plt.subplots(figsize=(8, height))
    ax.barh(names, [t.coverage for t in tasks], color="#3b7dd8")
    for i, t in enumerate(tasks):
        if t.score is not None and t.score.wrong:
            ax.plot([t.coverage], [i], "x", color="#c0392b", markersize=9)
    ax.set_xlim(0, 1)
    ax.invert_yaxis()
    ax.set_xlabel("share of scoring points stated as cited answers (x: a wrong value stated)")
    ax.set_title(f"{results.suite}: coverage per task ({results.bench_run_id})")
    plots["coverage.png"] = _png(fig, plt)

    fig, ax = plt.subplots(figsize=(8, height))
    ax.barh(names, [t.metrics.wall_s for t in tasks], color="#7f8c8d")
    ax.invert_yaxis()
    ax.set_xlabel("wall time per task, s")
    ax.set_title(f"{results.suite}: time per task on {len(results.phones)} phone(s)")
    plots["time.png"] = _png(fig, plt)

    roles: dict[str, list[int]] = {}
    for t in tasks:
        for r in t.metrics.tokens:
            text_image = roles.setdefault(r.role, [0, 0])
            text_image[0] += r.text_tokens + r.completion_tokens
            text_image[1] += r.image_tokens
    if roles:
        fig, ax = plt.subplots(figsize=(8, max(2.5, 0.4 * len(roles) + 1.2)))
        labels = sorted(roles)
        ax.barh(labels, [roles[r][0] for r in labels], color="#3b7dd8", label="text")
        ax.barh(labels, [roles[r][1] for r in labels], left=[roles[r][0] for r in labels],
                color="#e67e22", label="image")
        ax.set_xlabel("tokens over the run")
        ax.legend()
        ax.set_title("tokens per model role")
        plots["tokens.png"] = _png(fig, plt)
    return plots


def _png(fig: object, plt: object) -> bytes:
    buffer = io.BytesIO()
    fig.tight_layout()  # type: ignore[attr-defined]
    fig.savefig(buffer, format="png", dpi=110)  # type: ignore[attr-defined]
    plt.close(fig)  # type: ignore[attr-defined]
    return buffer.getvalue()
