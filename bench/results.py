"""Write one benchmark area's results into docs/benchmarks.md without touching the others.

Each area owns the text between ``<!-- bench:AREA -->`` and ``<!-- /bench:AREA -->``;
a re-run replaces only that block. Numbers are medians (and p95 where stated)
measured side by side in one run, because this machine is shared and noisy.
Plots are drawn by each script from the numbers it just measured (``create_figure``,
``save_plot``) into docs/images/bench-AREA-NAME.png and embedded in its block.

A benchmark writes into docs/ only when asked: its ``main`` parses its arguments with
:func:`parse_bench_args`, which adds ``--write``. Without it the block and its plots go to
a scratch copy (:data:`SCRATCH_DIR`: benchmarks.md and images/ there) and docs/ is left alone.
"""

from __future__ import annotations

import argparse
import platform
import shlex
import statistics
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

__all__ = [
    "BENCHMARKS_MD",
    "IMAGES_DIR",
    "SCRATCH_DIR",
    "WRITE_DOCS",
    "create_figure",
    "describe_host",
    "parse_bench_args",
    "percentile",
    "save_plot",
    "summarize_ms",
    "write_section",
]

BENCHMARKS_MD = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
IMAGES_DIR = BENCHMARKS_MD.parent / "images"
SCRATCH_DIR = Path(tempfile.gettempdir()) / "droidretriever-bench"  # where a run without --write goes
WRITE_DOCS = False  # set by parse_bench_args: this process was asked to write into docs/
# 100 dpi and a few inches wide: readable in a rendered markdown page, and each PNG
# stays well under 80 KB so re-runs do not bloat the repository.
_DPI = 100
_HEADER = (
    "# Benchmarks\n\n"
    "Each section is written by the script named in it; re-run that command with `--write` to\n"
    "refresh it.\n"
    "Numbers are medians (p95 where stated) of runs measured side by side in one process on\n"
    "the host described in the section. This machine is shared and noisy: compare ratios\n"
    "within a section, not absolute numbers across sections.\n"
)


def percentile(samples: list[float], q: float) -> float:
    """The q-quantile (0..1) by linear interpolation."""
    if not samples:
        raise ValueError("no samples")
    ordered = sorted(samples)
    pos = (len(ordered) - 1) * q
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def summarize_ms(samples_s: list[float]) -> str:
    """``median 12.3 ms, p95 20.1 ms (n=200)`` from samples in seconds."""
    ms = [s * 1000 for s in samples_s]
    return f"median {statistics.median(ms):.1f} ms, p95 {percentile(ms, 0.95):.1f} ms (n={len(ms)})"


def describe_host() -> str:
    import os

    return (
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    )


def create_figure(width_in: float = 7.0, height_in: float = 3.6) -> Figure:
    """A figure drawn by the Agg canvas: no pyplot state, no display needed."""
    figure = Figure(figsize=(width_in, height_in), dpi=_DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def parse_bench_args(parser: argparse.ArgumentParser | None = None,
                     argv: list[str] | None = None) -> argparse.Namespace:
    """A benchmark's arguments, with ``--write`` added: only then does it write into docs/."""
    parser = parser or argparse.ArgumentParser()
    parser.add_argument("--write", action="store_true",
                        help="write this benchmark's block of docs/benchmarks.md and its plots "
                             f"(without it they go to {SCRATCH_DIR} and docs/ is left alone)")
    args = parser.parse_args(argv)
    global WRITE_DOCS  # one choice per benchmark process, made by its main
    WRITE_DOCS = bool(args.write)
    return args


def _benchmarks_md() -> Path:
    """docs/benchmarks.md when this run was asked to write docs/, else its scratch copy."""
    return BENCHMARKS_MD if WRITE_DOCS else SCRATCH_DIR / "benchmarks.md"


def save_plot(area: str, name: str, figure: Figure, alt: str, colors: int | None = None) -> str:
    """Write ``images/bench-<area>-<name>.png`` beside the benchmarks page (docs/ only with
    ``--write``); returns the markdown line that embeds it.

    The path in the returned line is relative to the page, so the picture shows wherever the
    docs folder is rendered. ``colors``: a palette of that many colours (a plot full of text
    stays small).
    """
    page = _benchmarks_md()
    path = page.parent / "images" / f"bench-{area}-{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    # No "Software" stamp: a re-run with the same numbers gives the same bytes.
    figure.savefig(path, format="png", dpi=_DPI, metadata={"Software": None})
    if colors is not None:
        with Image.open(path) as image:
            palette = image.convert("RGB").quantize(colors=colors, method=Image.Quantize.FASTOCTREE)
        palette.save(path, optimize=True)
    return f"![{alt}]({path.relative_to(page.parent).as_posix()})"


def write_section(area: str, title: str, command: str, body_markdown: str) -> Path:
    """Replace (or append) the block for ``area`` in docs/benchmarks.md (with ``--write``; else
    in its scratch copy, which starts as a copy of docs/benchmarks.md); returns the page written.

    The command shown is ``command`` with the arguments this process was given that it does
    not already state (``--limit 50``, ``--phones 1,16,32``): a filtered or resized run says
    so, instead of passing for the full one.
    """
    start, end = f"<!-- bench:{area} -->", f"<!-- /bench:{area} -->"
    stated = command.split()
    unstated = [arg for arg in sys.argv[1:] if arg not in stated and arg != "--write"]
    if unstated:
        command = f"{command} {shlex.join(unstated)}"
    block = (
        f"{start}\n## {title}\n\nCommand: `{command}`  \nHost: {describe_host()}\n\n"
        f"{body_markdown.strip()}\n{end}"
    )
    page = _benchmarks_md()
    if not page.exists() and BENCHMARKS_MD.exists():
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(BENCHMARKS_MD.read_text())
    text = page.read_text() if page.exists() else _HEADER
    if start in text and end in text:
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        text = head + block + tail
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(text)
    if page != BENCHMARKS_MD:
        print(f"{page} written; docs/benchmarks.md left alone (pass --write to update it)")
    return page
