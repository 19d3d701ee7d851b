"""A sub-task's model time and model requests: the budget, and what each step spent.

The navigation loop makes one :class:`ModelMeter` per sub-task from
``budgets.model_s_per_subtask``. Roles ask it how much time is left before a
call (:meth:`ModelMeter.time_left_s`, the call's deadline when it is shorter
than the role's ``timeout_s``), and report every request (:meth:`record`) and
every fallback to the rules (:meth:`fall_back`); the loop takes them per step
(:meth:`drain`) into the step's record. Once the budget is spent the roles do
not call their model at all: the rules decide, and each such step says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from droidretriever.models import ModelCall, ModelFallback

__all__ = ["ModelMeter", "describe_failure"]


class ModelMeter:
    """Model time left in a sub-task, and the calls and fallbacks not yet taken by a step."""

    def __init__(self, budget_s: float | None = None) -> None:
        self.budget_s = budget_s
        self.spent_s = 0.0
        self.counts: Counter[str] = Counter()  # fallbacks per role, over the whole sub-task
        self._calls: list[ModelCall] = []
        self._fallbacks: list[ModelFallback] = []

    def time_left_s(self) -> float | None:
        """Seconds of model time left (None: no budget)."""
        return None if self.budget_s is None else max(0.0, self.budget_s - self.spent_s)

    @property
    def exhausted(self) -> bool:
        left = self.time_left_s()
        return left is not None and left <= 0.0

    def exhausted_reason(self) -> str:
        """Why a role did not call its model: the budget and what was spent."""
        return (f"the sub-task's model time of {self.budget_s:g} s is spent "
                f"({self.spent_s:.1f} s used); budgets.model_s_per_subtask sets it")

    def record(self, calls: Iterable[ModelCall]) -> None:
        """Requests a role made (failed ones included): their time counts against the budget."""
        for call in calls:
            self._calls.append(call)
            self.spent_s += call.latency_ms / 1000.0

    def fall_back(self, role: str, reason: str) -> ModelFallback:
        """Note that ``role``'s rules decided because its model failed; returns the note."""
        fallback = ModelFallback(role=role, reason=reason)
        self._fallbacks.append(fallback)
        self.counts[role] += 1
        return fallback

    @property
    def pending(self) -> bool:
        """Whether calls or fallbacks wait for a step to take them."""
        return bool(self._calls or self._fallbacks)

    def pending_fallback(self, role: str) -> ModelFallback | None:
        """The latest fallback of ``role`` not yet taken by a step."""
        return next((f for f in reversed(self._fallbacks) if f.role == role), None)

    def drain(self) -> tuple[tuple[ModelCall, ...], tuple[ModelFallback, ...]]:
        """The calls and fallbacks since the last drain (a step takes them into its record)."""
        calls, fallbacks = tuple(self._calls), tuple(self._fallbacks)
        self._calls.clear()
        self._fallbacks.clear()
        return calls, fallbacks


def describe_failure(error: Exception) -> str:
    """A short reason for a fallback or a probe: the error's first line, at most 240 characters."""
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text if len(text) <= 240 else text[:239] + "…"
