"""Errors raised by report synthesis.

    DroidRetrieverError                 core.errors
     +-- SynthesisError                 anything that stops a report from being written
          +-- EvidenceError             evidence cannot be read, decoded or written

A citation that matches nothing is not an error: it is kept in the report and
marked unverified. Errors here mean the report itself cannot be produced.
"""

from __future__ import annotations

from core.errors import DroidRetrieverError

__all__ = ["EvidenceError", "SynthesisError"]


class SynthesisError(DroidRetrieverError):
    """The report could not be produced."""


class EvidenceError(SynthesisError):
    """A capture image is missing or undecodable, or a crop / report file cannot be written."""
