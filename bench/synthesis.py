"""Benchmark of report synthesis: ``python -m bench.synthesis``.

Measures, in one process, on two drawn 1080x7000 menu captures (about five
stitched phone screens, 24 cards and ~100 text elements each):

- citation parsing of a 200-citation report, and of 1 MB of adversarial text;
- grounding one citation against a capture (rapidfuzz over elements + row runs);
- the extractive writer (items, values, comparison table);
- the whole step: write + ground + highlight crops + report.md + report.html.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.results import parse_bench_args, percentile, summarize_ms, write_section
from core.models import AppStatus, Query, SubTaskStatus
from droidretriever.testing import DrawnCapture, draw_capture, menu_card
from tasks.synthesis.citations import CitationRef, parse_citations
from tasks.synthesis.evidence import FolderStore
from tasks.synthesis.extractive import write_extractive_markdown
from tasks.synthesis.grounding import ground_citations
from tasks.synthesis.report import publish_report, synthesize_report

_DISHES = ["McChicken Meal", "Fries (large)", "Apple Pie", "McFlurry Oreo", "Filet-O-Fish",
           "Chicken McNuggets 10pc", "Double Cheeseburger", "Coca-Cola (medium)"]


def _capture(capture_id: str, package: str, big_mac_price: str, store: FolderStore) -> DrawnCapture:
    cards = []
    for index in range(24):
        name = "Big Mac Meal" if index == 13 else f"{_DISHES[index % len(_DISHES)]} #{index}"
        price = big_mac_price if index == 13 else f"¥{9 + index * 1.5:.1f}"
        cards.append(menu_card(100 + 285 * index, name, price, f"月售 {100 * (index + 1)}+"))
    drawn = draw_capture(capture_id, package, cards, height=7000, run_id="run-bench")
    store.put_bytes(drawn.capture.image_key, drawn.png, "image/png")
    return drawn


def _time(fn: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return samples


def main(argv: list[str] | None = None) -> None:
    """Run every measurement and write the synthesis block of docs/benchmarks.md."""
    parse_bench_args(argv=argv)
    with tempfile.TemporaryDirectory() as folder:
        store = FolderStore(Path(folder))
        meituan = _capture("cap-meituan", "com.sankuai.meituan", "¥25.5", store)
        eleme = _capture("cap-eleme", "me.ele", "¥26.0", store)
        captures = [meituan.capture, eleme.capture]
        apps = (AppStatus(app_label="Meituan", package="com.sankuai.meituan",
                          status=SubTaskStatus.COMPLETED),
                AppStatus(app_label="Ele.me", package="me.ele", status=SubTaskStatus.COMPLETED))
        query = Query(text="Is a Big Mac cheaper on Meituan or Ele.me?")

        report_text = " ".join(f"point {i} costs ¥{i}.5 [cap-meituan(¥{i}.5)] and [[cap-eleme(a{i})]"
                               f"[cap-meituan(b{i})]]." for i in range(100))
        adversarial = "[c1(" * 250_000
        refs = [CitationRef(capture_id="cap-meituan", quote=q)
                for q in ["¥25.5", "Big Mac Meal", "月售 1400+", "Apple Pie #2", "¥99.9"]]

        parse = _time(lambda: parse_citations(report_text), 50)
        hostile = _time(lambda: parse_citations(adversarial), 5)
        grounding = [s / len(refs) for s in _time(lambda: ground_citations(refs, captures, 0.8), 20)]
        extractive = _time(lambda: write_extractive_markdown(query, captures, apps), 10)

        def whole() -> None:
            report = synthesize_report(run_id="run-bench", query=query, captures=captures,
                                       apps=apps, store=store, threshold=0.8)
            publish_report(report, captures, store)

        step = _time(whole, 5)
        report = synthesize_report(run_id="run-bench", query=query, captures=captures, apps=apps,
                                   store=store, threshold=0.8)
        html_bytes = len(store.get_bytes(publish_report(report, captures, store).html_key))

    elements = len(meituan.capture.elements)
    grounded = sum(1 for c in report.citations if c.grounded)
    body = "\n".join([
        "| measurement | result |",
        "|---|---|",
        f"| parse a 200-citation report ({len(report_text) // 1000} KB) | {summarize_ms(parse)} |",
        f"| parse 1 MB of adversarial `[c1(` repeats | {summarize_ms(hostile)} |",
        f"| ground one citation, capture of {elements} elements | {summarize_ms(grounding)} |",
        f"| extractive writer, 2 captures x 24 items | {summarize_ms(extractive)} |",
        f"| whole step (write, ground, crops, md + html) | {summarize_ms(step)} |",
        "",
        f"The extractive report of this run: {len(report.citations)} citations, {grounded} grounded; "
        f"report.html {html_bytes / 1e6:.2f} MB with both captures embedded.",
        f"Adversarial parse per MB vs normal parse per MB: "
        f"{statistics.median(hostile) / 1.0:.3f} s vs "
        f"{statistics.median(parse) / (len(report_text) / 1e6):.3f} s "
        f"(p95 of the whole step: {percentile([s * 1000 for s in step], 0.95):.0f} ms).",
    ])
    path = write_section("synthesis", "Report synthesis and citations", "python -m bench.synthesis", body)
    print(body)
    print(f"written to {path}")


if __name__ == "__main__":
    main()
