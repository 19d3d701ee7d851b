"""Benchmark: stitching 5 frames of 1080x2340 into one long capture (goal: median < 150 ms).

Run: ``python -m bench.stitch``. Frames are cut from a synthetic long page with
a fixed app bar and bottom navigation, 2/3-screen swipes apart, as the capture
task takes them; every run is checked pixel-exact against the page itself.
"""

from __future__ import annotations

import statistics
import time

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from bench.results import parse_bench_args, percentile, write_section
from tasks.capture import stitch_frames

WIDTH, HEIGHT, HEADER, FOOTER = 1080, 2340, 230, 190
FRAMES, RUNS = 5, 30


def render_page(height: int) -> np.ndarray:
    font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 40)
    page = Image.new("RGB", (WIDTH, height), "white")
    draw = ImageDraw.Draw(page)
    rng = np.random.default_rng(11)
    y = 0
    while y < height:
        row = int(rng.integers(120, 260))
        draw.rectangle((30, y + 20, 200, y + row - 20), fill=tuple(int(c) for c in rng.integers(0, 255, 3)))
        draw.text((230, y + 30), f"Item {y}: Big Mac meal ¥{rng.integers(10, 99)}.5", fill=(20, 20, 20), font=font)
        draw.line((0, y + row - 1, WIDTH, y + row - 1), fill=(225, 225, 225), width=2)
        y += row
    return np.asarray(page, dtype=np.uint8).copy()


def main(argv: list[str] | None = None) -> None:
    parse_bench_args(argv=argv)
    band = HEIGHT - HEADER - FOOTER
    shift = int(HEIGHT * 0.67)
    page = render_page((FRAMES - 1) * shift + band)
    header = np.full((HEADER, WIDTH, 3), (200, 110, 30), np.uint8)
    footer = np.full((FOOTER, WIDTH, 3), (245, 245, 245), np.uint8)
    footer[40:150, 100:210] = 90
    frames = [np.concatenate([header, page[k * shift : k * shift + band], footer]) for k in range(FRAMES)]
    truth = np.concatenate([header, page, footer])
    samples, hinted = [], []
    for _ in range(RUNS):
        started = time.perf_counter()
        result = stitch_frames(frames)
        samples.append(time.perf_counter() - started)
        if not np.array_equal(result.image, truth):
            raise SystemExit("stitched image differs from the page: the benchmark is invalid")
        started = time.perf_counter()
        stitch_frames(frames, expected_shift=shift)
        hinted.append(time.perf_counter() - started)
    ms = [s * 1000 for s in samples]
    hinted_ms = [s * 1000 for s in hinted]
    body = (
        f"{FRAMES} frames of {WIDTH}x{HEIGHT} (app bar {HEADER} px, bottom nav {FOOTER} px, "
        f"swipes of {shift} px), stitched image {truth.shape[1]}x{truth.shape[0]}, pixel-exact "
        f"against the page in every run.\n\n"
        "| case | median | p95 | runs | goal |\n|---|---|---|---|---|\n"
        f"| stitch_frames | {statistics.median(ms):.1f} ms | {percentile(ms, 0.95):.1f} ms | {RUNS} | < 150 ms |\n"
        f"| stitch_frames(expected_shift) | {statistics.median(hinted_ms):.1f} ms | "
        f"{percentile(hinted_ms, 0.95):.1f} ms | {RUNS} | < 150 ms |\n"
    )
    path = write_section("stitch", "Scrolling capture: stitching", "python -m bench.stitch", body)
    print(body)
    print(f"written to {path}")


if __name__ == "__main__":
    main()
