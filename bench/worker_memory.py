"""What a device worker's OCR costs in resident memory, per option: ``python -m bench.worker_memory``.

Area "worker memory" of docs/benchmarks.md (issue 16). A device worker holds its
phone's perception, whose RapidOCR engine (PP-OCRv4 det + rec on onnxruntime) reads
full screenshots; after a Study 2 run the workers of an 8-phone farm held 226-617 MB
each. This measures, each option in a fresh process (one after another, never side by
side with a run), the resident memory (VmRSS) and its peak (VmHWM) after the engine
read the same screens: every app's launch screen on a virtual phone and two scrolls
of it, read ``--rounds`` times. Options:

    default        RapidOCR as the workers create it
    arena-2        the same with MALLOC_ARENA_MAX=2 (glibc: two malloc arenas, not 8 per core)
    threads-1      onnxruntime with one intra-op thread per session (det, cls, rec)
    arena-2+threads-1
    trim           glibc's malloc_trim(0) after each read: freed pages go back to the system
    arena-2+trim

``--farm`` reads a running farm's processes instead (the farm of
``DROIDRETRIEVER_STATE_DIR``: its workers, the shared OCR service when the
workers use one, the monitor, the phones): VmRSS and VmHWM of each from
``/proc``, one table row each, and the total for 32 workers and one OCR service
at the largest worker's resident memory. Run it right after ``farm up`` and
after a suite, e.g. ``droidretriever bench run paper-study2 --devices 1``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

_ONE_THREAD = {"det_intra_op_num_threads": 1, "cls_intra_op_num_threads": 1, "rec_intra_op_num_threads": 1}
# option -> (environment, RapidOCR keyword arguments, malloc_trim after each read)
VARIANTS: dict[str, tuple[dict[str, str], dict[str, int], bool]] = {
    "default": ({}, {}, False),
    "arena-2": ({"MALLOC_ARENA_MAX": "2"}, {}, False),
    "threads-1": ({}, _ONE_THREAD, False),
    "arena-2+threads-1": ({"MALLOC_ARENA_MAX": "2"}, _ONE_THREAD, False),
    "trim": ({}, {}, True),
    "arena-2+trim": ({"MALLOC_ARENA_MAX": "2"}, {}, True),
}


def _memory_kb() -> tuple[int, int]:
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines()
                  if ":" in line)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def _process_memory_kb(pid: int) -> tuple[int, int]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                  if ":" in line)
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def print_farm_memory(phones: int = 32) -> None:
    """A row per process of the running farm, then what ``phones`` workers and one OCR service hold."""
    from core.config import load_settings
    from deploy.farm import is_running, read_manifest, shared_ocr_engine

    settings = load_settings()
    manifest = read_manifest(settings.state_dir)
    if manifest is None:
        raise SystemExit(f"no farm is up under {settings.state_dir}: `droidretriever farm up` first")
    engine = shared_ocr_engine(settings)
    ocr_is = (f"one shared OCR service ({engine})" if engine
              else f"OCR in each worker ({settings.perception.ocr_backend})")
    print(f"farm under {settings.state_dir}: {ocr_is}")
    print("| process | VmRSS | VmHWM (peak) |")
    print("|---|---|---|")
    workers: list[int] = []
    ocr = 0
    for record in manifest.processes:
        if not is_running(record):
            print(f"| {record.name} | not running | |")
            continue
        rss, peak = _process_memory_kb(record.pid)
        print(f"| {record.name} | {rss / 1024:.0f} MB | {peak / 1024:.0f} MB |")
        if record.name.startswith("worker-"):
            workers.append(rss)
        elif record.name == "ocr":
            ocr = rss
    if workers:
        total = phones * max(workers) + ocr
        print(f"{phones} workers at {max(workers) / 1024:.0f} MB + OCR service {ocr / 1024:.0f} MB = "
              f"{total / 1024 / 1024:.2f} GB")


def _screens(folder: Path) -> list[Path]:
    """PNG screenshots of every app's launch screen and two scrolls (made once, kept)."""
    done = sorted(folder.glob("*.png"))
    if done:
        return done
    import adbutils

    from device_farm.sim import SimServer, load_catalog

    folder.mkdir(parents=True, exist_ok=True)
    with SimServer(phones=1, port=0, seed=7) as server:
        device = adbutils.AdbClient("127.0.0.1", server.port).device(server.serials[0])
        for number, spec in enumerate(load_catalog().apps.values()):
            device.shell(f"monkey -p {spec.package} -c android.intent.category.LAUNCHER 1")
            time.sleep(0.2)
            for scroll in range(3):
                png = device.shell("screencap -p", encoding=None)
                (folder / f"{number:02d}-{scroll}.png").write_bytes(png)
                device.swipe(540, 1800, 540, 700, 0.2)
    return sorted(folder.glob("*.png"))


def _child(variant: str, screens: list[Path], rounds: int) -> None:
    import ctypes

    import numpy as np
    from PIL import Image
    from rapidocr_onnxruntime import RapidOCR

    trim = ctypes.CDLL("libc.so.6").malloc_trim if VARIANTS[variant][2] else None
    start = _memory_kb()[0]
    engine = RapidOCR(text_score=0.5, **VARIANTS[variant][1])
    loaded = _memory_kb()[0]
    pngs = [p.read_bytes() for p in screens]  # decoded one at a time, as a worker does
    started = time.perf_counter()
    lines = 0
    for _ in range(rounds):
        for png in pngs:
            image = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
            result, _ = engine(image, use_cls=False)
            lines += len(result or ())
            del image
            if trim is not None:
                trim(0)
    seconds = time.perf_counter() - started
    rss, peak = _memory_kb()
    reads = rounds * len(pngs)
    print(json.dumps({"variant": variant, "start_mb": start / 1024, "loaded_mb": loaded / 1024,
                      "rss_mb": rss / 1024, "peak_mb": peak / 1024, "reads": reads,
                      "ms_per_read": 1000 * seconds / reads, "lines": lines}))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2, help="times every screen is read")
    parser.add_argument("--screens", type=Path, default=Path("/tmp/dr-worker-memory-screens"))
    parser.add_argument("--only", default="", help="only the options whose name contains this")
    parser.add_argument("--farm", action="store_true",
                        help="read the running farm's processes (workers, OCR service) instead")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.farm:
        print_farm_memory()
        return
    screens = _screens(args.screens)
    if args.child:
        _child(args.child, screens, args.rounds)
        return
    print(f"{len(screens)} screens, {args.rounds} rounds; one fresh process per option", flush=True)
    print("| option | RSS after loading | RSS after reading | peak RSS | ms per read |")
    print("|---|---|---|---|---|")
    for variant, (env, _, _) in VARIANTS.items():
        if args.only not in variant:
            continue
        out = subprocess.run([sys.executable, "-m", "bench.worker_memory", "--child", variant,
                              "--rounds", str(args.rounds), "--screens", str(args.screens)],
                             env={**os.environ, **env}, capture_output=True, text=True, check=True)
        row = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"| {variant} | {row['loaded_mb']:.0f} MB | {row['rss_mb']:.0f} MB | {row['peak_mb']:.0f} MB | "
              f"{row['ms_per_read']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
