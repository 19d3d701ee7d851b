"""Errors of the navigation policies.

    DroidRetrieverError                    core.errors
     +-- InferenceError                    inference.errors
          +-- PolicyError                  a policy's decision cannot be carried out
               +-- UnknownElementError     the decision names an element that is not on the screen

Policies that are merely unsure return ``None`` (the next policy decides);
these errors mean a policy broke its contract, which is a bug to report.
"""

from __future__ import annotations

from inference.errors import InferenceError

__all__ = ["PolicyError", "UnknownElementError"]


class PolicyError(InferenceError):
    """A policy produced a decision that cannot be carried out."""


class UnknownElementError(PolicyError):
    """A decision targets an element id the current screen does not have."""

    hint = "the policy must only name elements of the screen it was given; report this as a bug"
