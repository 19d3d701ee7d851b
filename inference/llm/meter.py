"""A sub-task's model time and model requests: the budgets, and what each step spent.

The navigation loop makes one :class:`ModelMeter` per sub-task with three
budgets: ``budgets.model_s_per_subtask`` (model time of the sub-task),
``budgets.model_calls_per_subtask`` (requests of the sub-task) and, through a
:class:`ModelClock` the run's roles share, ``budgets.model_s_per_run`` (model
time of the whole run, every role and sub-task added). Roles ask it how much
time is left before a call (:meth:`ModelMeter.time_left_s`, the call's cap),
and report every request (:meth:`record`) and every fallback to the rules
(:meth:`fall_back`); the loop takes them per step (:meth:`drain`) into the
step's record. Once a budget is spent the roles do not call their model at
all: the rules decide, and each such step says which budget ended it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Protocol

from core.models import ModelCall, ModelFallback

__all__ = [
    "LocalModelClock", "ModelClock", "ModelMeter", "describe_failure", "describe_slow_calls", "run_exhausted_reason", "run_time_left_s",
]


class ModelClock(Protocol):
    """The model time a whole run has spent, shared by its roles (in Redis across processes)."""

    def spent_s(self) -> float:
        """Seconds of model time the run has spent so far."""
        ...

    def add(self, seconds: float) -> float:
        """Add ``seconds``; returns the run's new total."""
        ...


class LocalModelClock:
    """A :class:`ModelClock` of one process (a benchmark, a test, a run without Redis)."""

    def __init__(self, spent_s: float = 0.0) -> None:
        self._spent_s = spent_s

    def spent_s(self) -> float:
        """Seconds of model time spent so far."""
        return self._spent_s

    def add(self, seconds: float) -> float:
        """Add ``seconds``; returns the new total."""
        self._spent_s += seconds
        return self._spent_s


def run_time_left_s(clock: ModelClock | None, budget_s: float | None) -> float | None:
    """Model time the run has left (None: no run budget or no clock)."""
    if clock is None or budget_s is None:
        return None
    return max(0.0, budget_s - clock.spent_s())


def run_exhausted_reason(clock: ModelClock, budget_s: float) -> str:
    """Why no role calls its model any more: the run's budget and what was spent."""
    return (f"the run's model time of {budget_s:g} s is spent ({clock.spent_s():.1f} s used); "
            "budgets.model_s_per_run sets it")


class ModelMeter:
    """Model time and requests left to a sub-task, and the calls and fallbacks not yet taken by a step."""

    def __init__(self, budget_s: float | None = None, *, max_calls: int | None = None,
                 clock: ModelClock | None = None, run_budget_s: float | None = None) -> None:
        self.budget_s = budget_s
        self.max_calls = max_calls
        self.clock = clock
        self.run_budget_s = run_budget_s
        self.spent_s = 0.0
        self.sent = 0  # requests of the sub-task, failed ones included
        self.counts: Counter[str] = Counter()  # fallbacks per role, over the whole sub-task
        self._calls: list[ModelCall] = []
        self._fallbacks: list[ModelFallback] = []

    def time_left_s(self) -> float | None:
        """Seconds of model time left to the sub-task and its run, the lesser (None: no budget)."""
        lefts = [left for left in (None if self.budget_s is None else max(0.0, self.budget_s - self.spent_s),
                                   run_time_left_s(self.clock, self.run_budget_s)) if left is not None]
        return min(lefts) if lefts else None

    @property
    def exhausted(self) -> bool:
        left = self.time_left_s()
        calls_spent = self.max_calls is not None and self.sent >= self.max_calls
        return calls_spent or (left is not None and left <= 0.0)

    def exhausted_reason(self) -> str:
        """Why a role did not call its model: the budget that is spent, and what was spent."""
        if self.max_calls is not None and self.sent >= self.max_calls:
            return (f"the sub-task's {self.max_calls} model requests are spent; "
                    "budgets.model_calls_per_subtask sets it")
        if self.clock is not None and self.run_budget_s is not None and run_time_left_s(
                self.clock, self.run_budget_s) == 0.0:
            return run_exhausted_reason(self.clock, self.run_budget_s)
        return (f"the sub-task's model time of {self.budget_s or 0:g} s is spent "
                f"({self.spent_s:.1f} s used); budgets.model_s_per_subtask sets it")

    def record(self, calls: Iterable[ModelCall]) -> None:
        """Requests a role made (failed ones included): their time and number count against the budgets."""
        seconds = 0.0
        for call in calls:
            self._calls.append(call)
            self.sent += 1
            seconds += call.latency_ms / 1000.0
        self.spent_s += seconds
        if self.clock is not None and seconds:
            self.clock.add(seconds)

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


def describe_slow_calls(calls: Sequence[ModelCall]) -> str:
    """One line about the slow requests among ``calls`` ("" when none was slow)."""
    slow = [c for c in calls if c.usage.slow]
    if not slow:
        return ""
    roles = ", ".join(dict.fromkeys(f"the {c.role}'s" for c in slow))
    longest = max(c.latency_ms for c in slow) / 1000
    return (f"slow model server: {len(slow)} of {len(calls)} request(s) of {roles} model took longer than "
            f"its slow_call_s beyond its tokens' time (longest {longest:.1f} s); check the server's load")


def describe_failure(error: Exception) -> str:
    """A short reason for a fallback or a probe: the error's first line, at most 240 characters."""
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    return text if len(text) <= 240 else text[:239] + "…"
