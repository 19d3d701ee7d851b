"""Checks on a finished run's report: prices cited, grounded, and boxed on the right element."""

from __future__ import annotations

import re

from droidretriever.models import Capture, Citation, Report
from flows.models import RunOutcome
from flows.runtime import FlowServices
from flows.subscriptions import load_run_captures


def run_captures(services: FlowServices, outcome: RunOutcome) -> dict[str, Capture]:
    manifest = services.manifests.read(outcome.run_id)
    return {c.id: c for c in load_run_captures(services.store, outcome.run_id,
                                                manifest.capture_ids)}


def comparison_row(report: Report, name: str) -> str:
    """The table row ``| Price | ...`` of the report's comparison table."""
    rows = [line for line in report.markdown.splitlines() if line.startswith(f"| {name} |")]
    assert rows, f"no {name} row in the comparison table of:\n{report.markdown}"
    return rows[0]


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
        shown = " ".join([element.label, *(e.label for e in capture.elements
                                           if e.parent_id == element.id)])
        assert re.search(re.escape(price), shown) or any(
            price in e.label for e in capture.elements
            if element.bounds.intersection(e.bounds) == e.bounds.area and e.bounds.area), (
            f"the box of {citation} does not contain {price}")
        return citation
    raise AssertionError(f"no citation of {price} on {package}'s capture in:\n{report.markdown}")
