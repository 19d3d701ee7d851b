"""Write one benchmark area's results into docs/benchmarks.md without touching the others.

Each area owns the text between ``<!-- bench:AREA -->`` and ``<!-- /bench:AREA -->``;
a re-run replaces only that block. Numbers are medians (and p95 where stated)
measured side by side in one run, because this machine is shared and noisy.
"""

from __future__ import annotations

import platform
import statistics
from datetime import UTC, datetime
from pathlib import Path

__all__ = ["BENCHMARKS_MD", "describe_host", "percentile", "summarize_ms", "write_section"]

BENCHMARKS_MD = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
_HEADER = (
    "# Benchmarks\n\n"
    "Each section is written by the script named in it; re-run that command to refresh it.\n"
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


def write_section(area: str, title: str, command: str, body_markdown: str) -> Path:
    """Replace (or append) the block for ``area`` in docs/benchmarks.md."""
    start, end = f"<!-- bench:{area} -->", f"<!-- /bench:{area} -->"
    block = (
        f"{start}\n## {title}\n\nCommand: `{command}`  \nHost: {describe_host()}\n\n"
        f"{body_markdown.strip()}\n{end}"
    )
    text = BENCHMARKS_MD.read_text() if BENCHMARKS_MD.exists() else _HEADER
    if start in text and end in text:
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        text = head + block + tail
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    BENCHMARKS_MD.parent.mkdir(parents=True, exist_ok=True)
    BENCHMARKS_MD.write_text(text)
    return BENCHMARKS_MD
