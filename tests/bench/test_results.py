"""A benchmark writes into docs/ only when asked (``--write``); otherwise its block and plots go to
a scratch copy of the page and docs/benchmarks.md stays as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import results
from bench.results import create_figure, parse_bench_args, save_plot, write_section


@pytest.fixture
def pages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """docs/benchmarks.md (one area written before) and the scratch folder, under ``tmp_path``."""
    docs = tmp_path / "docs" / "benchmarks.md"
    docs.parent.mkdir()
    docs.write_text("# Benchmarks\n\n<!-- bench:old -->\n## Old\n\nkept\n<!-- /bench:old -->\n")
    monkeypatch.setattr(results, "BENCHMARKS_MD", docs)
    monkeypatch.setattr(results, "SCRATCH_DIR", tmp_path / "scratch")
    monkeypatch.setattr(results, "WRITE_DOCS", False)
    monkeypatch.setattr("sys.argv", ["bench.probe"])
    return docs, tmp_path / "scratch"


def _write_area() -> Path:
    figure = create_figure(2.0, 1.0)
    figure.subplots().plot([0, 1], [1, 0])
    line = save_plot("probe", "line", figure, "a line")
    return write_section("probe", "Probe", "python -m bench.probe", f"| a | 1 |\n\n{line}")


def test_without_write_docs_are_left_alone_and_the_scratch_copy_has_the_block(
        pages: tuple[Path, Path]) -> None:
    docs, scratch = pages
    before = docs.read_text()
    parse_bench_args(argv=[])
    written = _write_area()
    assert docs.read_text() == before and not (docs.parent / "images").exists()
    assert written == scratch / "benchmarks.md"
    text = written.read_text()
    assert "## Old" in text and "<!-- bench:probe -->" in text  # a copy of the page, plus the block
    assert (scratch / "images" / "bench-probe-line.png").exists()


def test_with_write_the_block_and_its_plot_go_into_docs(pages: tuple[Path, Path],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    docs, scratch = pages
    monkeypatch.setattr("sys.argv", ["bench.probe", "--write"])
    parse_bench_args(argv=["--write"])
    assert _write_area() == docs
    text = docs.read_text()
    assert "## Old" in text and "## Probe" in text and "![a line](images/bench-probe-line.png)" in text
    assert "Command: `python -m bench.probe`" in text  # --write is how it was written, not what ran
    assert (docs.parent / "images" / "bench-probe-line.png").exists() and not scratch.exists()
