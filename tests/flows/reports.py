"""Checks on a finished run's report: prices cited, grounded, and boxed on the right element."""

from __future__ import annotations

import re

from core.models import Capture, Citation, Report
from flows.models import RunOutcome
from flows.runtime import FlowServices
from flows.subscriptions import load_run_captures
from tasks.synthesis.citations import parse_citations


def run_captures(services: FlowServices, outcome: RunOutcome) -> dict[str, Capture]:
    manifest = services.manifests.read(outcome.run_id)
    return {c.id: c for c in load_run_captures(services.store, outcome.run_id,
                                                manifest.capture_ids)}


def comparison_row(report: Report, name: str) -> str:
    """The table row ``| Price | ...`` of the report's comparison table."""
    rows = [line for line in report.markdown.splitlines() if line.startswith(f"| {name} |")]
    assert rows, f"no {name} row in the comparison table of:\n{report.markdown}"
    return rows[0]


def comparison_cells(report: Report, name: str) -> dict[str, str]:
    """Row ``name`` of the comparison table, app label -> cell (``\\|`` in a cell is kept)."""
    header = next((line for line in report.markdown.splitlines() if line.startswith("| |")), None)
    assert header is not None, f"no comparison table in:\n{report.markdown}"
    labels = [c.strip() for c in re.split(r"(?<!\\)\|", header.strip().strip("|"))][1:]
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", comparison_row(report, name).strip().strip("|"))]
    return dict(zip(labels, cells[1:], strict=True))


def _box_shows(capture: Capture, citation: Citation, number: str) -> bool:
    """Some element inside the citation's box (the box's own element included) shows ``number``."""
    box = citation.box
    assert box is not None
    return any(number in e.label for e in capture.elements
               if e.bounds.area and box.intersection(e.bounds) == e.bounds.area)


def cell_citation(report: Report, captures: dict[str, Capture], cell: str, package: str,
                  number: str) -> Citation:
    """The cell shows ``number`` and cites, grounded, a box on ``package``'s capture that holds it."""
    assert number in cell.split("[", 1)[0], f"the cell {cell!r} does not show {number}"
    marks = parse_citations(cell)
    assert marks, f"the cell {cell!r} cites nothing"
    ref = marks[0].refs[0]
    citation = next(c for c in report.citations
                    if c.capture_id == ref.capture_id and c.quote == ref.quote)
    capture = captures[citation.capture_id]
    assert capture.package == package, (citation, capture.package)
    assert citation.grounded and citation.box is not None, citation
    assert _box_shows(capture, citation, number), f"the box of {citation} does not contain {number}"
    return citation


def price_citation(report: Report, captures: dict[str, Capture], package: str,
                   price: str) -> Citation:
    """A grounded citation on ``package``'s capture whose box holds an element showing ``price``."""
    for citation in report.citations:
        capture = captures.get(citation.capture_id)
        if capture is None or capture.package != package or price not in citation.quote:
            continue
        assert citation.grounded and citation.box is not None, citation
        element = next(e for e in capture.elements if e.id == citation.element_id)
        assert citation.box == element.bounds
        assert _box_shows(capture, citation, price), f"the box of {citation} does not contain {price}"
        return citation
    raise AssertionError(f"no citation of {price} on {package}'s capture in:\n{report.markdown}")
