"""The ``retrieve`` flow in a thread, as ``droidretriever ask`` runs it while a test acts beside it."""

from __future__ import annotations

import contextvars
import threading

from flows.models import RetrieveRequest, RunOutcome


class BackgroundRun:
    """Runs the flow in a thread with this thread's context (its Prefect settings included)."""

    def __init__(self, request: RetrieveRequest) -> None:
        from flows.retrieve import run_retrieve

        self.outcome: RunOutcome | None = None
        self.error: BaseException | None = None
        context = contextvars.copy_context()

        def run() -> None:
            try:
                self.outcome = context.run(run_retrieve, request)
            except BaseException as exc:  # surfaced by join()
                self.error = exc

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()

    def join(self, timeout_s: float) -> RunOutcome:
        """The run's outcome; re-raises what the run raised; fails if it is still running."""
        self._thread.join(timeout_s)
        if self.error is not None:
            raise self.error
        assert self.outcome is not None, f"the run did not finish within {timeout_s:.0f} s"
        return self.outcome
