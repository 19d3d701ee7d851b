"""The speed-up curve of a suite over phones, from ``droidretriever bench run`` results.

    for n in 1 2 4 8 16 32; do droidretriever bench run paper-study2 --devices $n --out /tmp/scale-$n; done
    python -m bench.scale_curve /tmp/scale-{1,2,4,8,16,32}/results.json --plot docs/images/bench-scale-study2.png

Prints one Markdown row per run (phones, tasks per minute, speed-up over the fewest phones,
p50 / p95 task latency, coverage, tasks that ended in an error, tasks asked again after a
Prefect fault, most tasks in flight at once) and draws tasks per minute against phones beside
ideal linear scaling. Every run asks the same suite with the product's own plan and real
navigation.

More tasks than phones (issue 32: the queue), with what each question wrote to Prefect:

    for n in 8 16 32; do droidretriever bench run paper-study2 --devices $n --repeat 4 \
        --count-writes --out /tmp/queue-$n; done
    python -m bench.scale_curve /tmp/queue-{8,16,32}/results.json
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from flows.bench import BenchResults
from flows.bench.feed import most_in_flight

__all__ = ["main", "queue_cells", "scale_rows"]


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def queue_cells(run: BenchResults) -> str:
    """``errors | asked again | most in flight`` cells of a run's row."""
    errors = sum(1 for t in run.tasks if t.error)
    again = sum(1 for t in run.tasks if t.tries > 1)
    spans = [(t.started_at.timestamp(), t.ended_at.timestamp()) for t in run.tasks
             if t.started_at and t.ended_at]
    return f"{errors} | {again} | {most_in_flight(spans)}"


def scale_rows(runs: list[BenchResults]) -> list[tuple[int, float, float, float, float, str]]:
    """(phones, tasks/min, speed-up, p50 s, p95 s, coverage) per run, fewest phones first."""
    runs = sorted(runs, key=lambda r: r.request.devices)
    base = 60 * len(runs[0].tasks) / runs[0].wall_s
    rows = []
    for run in runs:
        walls = [t.metrics.wall_s for t in run.tasks]
        rate = 60 * len(run.tasks) / run.wall_s
        s = run.summary()
        rows.append((run.request.devices, rate, rate / base, statistics.median(walls), _p95(walls),
                     f"{s.points_found}/{s.points_total}"))
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", type=Path, help="results.json of each run")
    parser.add_argument("--plot", type=Path, help="write the curve here (PNG)")
    args = parser.parse_args(argv)
    runs = [BenchResults.model_validate_json(p.read_bytes()) for p in args.results]
    rows = scale_rows(runs)
    print("| phones | tasks / min | speed-up | task latency p50 | p95 | points stated | errors "
          "| asked again | most in flight |")
    print("|---|---|---|---|---|---|---|---|---|")
    ordered = sorted(runs, key=lambda r: r.request.devices)
    for (phones, rate, speed, p50, p95, points), run in zip(rows, ordered, strict=True):
        print(f"| {phones} | {rate:.1f} | {speed:.2f}x | {p50:.1f} s | {p95:.1f} s | {points} | "
              f"{queue_cells(run)} |")
    if args.plot is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        counts = [r[0] for r in rows]
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.plot(counts, [r[1] for r in rows], "o-", color="#3b7dd8", label="measured")
        ax.plot(counts, [rows[0][1] * p / counts[0] for p in counts], "--", color="#7f8c8d",
                label="linear")
        ax.set_xlabel("phones used at once")
        ax.set_ylabel("tasks per minute")
        ax.set_title(f"{runs[0].suite}: real navigation, product's own plan")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        plt.close(fig)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
