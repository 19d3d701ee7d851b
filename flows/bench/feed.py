"""A queue of questions fed to the farm at the phones' pace, riding out a failing Prefect API.

    fed = feed(items, phones, ask, fail, policy=FeedPolicy(start_gap_s=0.5), on_done=journal)

One thread per phone takes the next question when its last one has ended, so never more
questions are in flight than there are phones, and no question waits while a phone is free.
Starts are spaced by at least ``start_gap_s`` across the farm, so that a farm of 32 phones
does not create 32 runs in the same second. A question whose orchestration failed (the
Prefect API answered 5xx or did not answer, after its client's own retries) is asked again
on the same phone once the API answers, after 2, 4, 8, ... s (at most 30 s each), for up to
``outage_window_s``; every other error is the question's result, and the queue goes on.
"""

from __future__ import annotations

import contextvars
import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar

import httpx

from core.models import utcnow

__all__ = ["Fed", "FeedPolicy", "feed", "is_prefect_fault", "most_in_flight", "prefect_answers", "wait_for_prefect"]

log = logging.getLogger("flows.bench.progress")

_T = TypeVar("_T")
_R = TypeVar("_R")
_TRANSIENT = frozenset({408, 429, 500, 502, 503, 504})
_MAX_DELAY_S = 30.0


@dataclass(frozen=True)
class FeedPolicy:
    """How fast questions start and how long one waits out a failing Prefect API."""

    start_gap_s: float = 0.5
    outage_window_s: float = 600.0
    first_delay_s: float = 2.0


@dataclass(frozen=True)
class Fed(Generic[_R]):
    """One question's result, when its phone took it and gave it back, how often it was asked."""

    result: _R
    serial: str
    started_at: datetime
    ended_at: datetime
    tries: int
    gave_up: bool = False  # the Prefect API failed for longer than the window: not asked


def most_in_flight(spans: Sequence[tuple[float, float]]) -> int:
    """The most ``(start, end)`` spans open at one moment (one that ends as another starts:
    not both): how many questions were in flight at most, from their recorded times."""
    edges = sorted([(end, -1) for _, end in spans] + [(start, 1) for start, _ in spans])
    most = now = 0
    for _, step in edges:
        now += step
        most = max(most, now)
    return most


def is_prefect_fault(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error it was raised from) is the Prefect API failing for a
    while: no answer, or 408 / 429 / 5xx, on a request to the configured API URL."""
    from prefect.settings import PREFECT_API_URL

    api = str(PREFECT_API_URL.value() or "").rstrip("/")
    seen: set[int] = set()
    error: BaseException | None = exc
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, httpx.HTTPError) and api and _requested(error).startswith(api):
            return (not isinstance(error, httpx.HTTPStatusError)
                    or error.response.status_code in _TRANSIENT)
        error = error.__cause__ or error.__context__
    return False


def prefect_answers() -> bool:
    """One health check of the Prefect API, without the client's own retries."""
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_CLIENT_MAX_RETRIES, temporary_settings

    with temporary_settings({PREFECT_CLIENT_MAX_RETRIES: 0}), get_client(sync_client=True) as client:
        return client.api_healthcheck() is None


def feed(items: Sequence[_T], phones: Sequence[str], ask: Callable[[_T, str], _R],
         fail: Callable[[_T, str, BaseException], _R], *, policy: FeedPolicy,
         on_done: Callable[[Fed[_R]], None] | None = None,
         label: Callable[[_T], str] = str) -> list[Fed[_R]]:
    """Ask every item on the phones, at most one per phone at once; the results in item order.

    ``ask(item, serial)`` asks one question; ``fail(item, serial, error)`` is its result when
    it raised something else than a Prefect fault, or Prefect failed for longer than the
    window. ``on_done`` sees each result as it ends (a journal); ``label`` names an item in
    the log. Threads run in copies of the
    caller's context, so the runs they start are sub-flows of the caller's flow run.
    """
    pending: queue.SimpleQueue[int] = queue.SimpleQueue()
    for index in range(len(items)):
        pending.put(index)
    done: dict[int, Fed[_R]] = {}
    pacer = _Pacer(policy.start_gap_s)

    def serve(serial: str) -> None:
        while True:
            try:
                index = pending.get_nowait()
            except queue.Empty:
                return
            fed = _ask_riding_out(items[index], label(items[index]), serial, ask, fail, pacer, policy)
            done[index] = fed
            if on_done is not None:
                on_done(fed)

    threads = [threading.Thread(target=contextvars.copy_context().run, args=(serve, serial),
                                name=f"bench-{serial}", daemon=True) for serial in phones]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [done[i] for i in range(len(items))]


def _ask_riding_out(item: _T, name: str, serial: str, ask: Callable[[_T, str], _R],
                    fail: Callable[[_T, str, BaseException], _R], pacer: _Pacer,
                    policy: FeedPolicy) -> Fed[_R]:
    started, tries, delay = utcnow(), 0, policy.first_delay_s
    deadline: float | None = None
    gave_up = False
    while True:
        pacer.wait()
        tries += 1
        try:
            result = ask(item, serial)
        except Exception as exc:
            if is_prefect_fault(exc):
                deadline = deadline or time.monotonic() + policy.outage_window_s
                log.warning("%s on %s: the Prefect API failed (%s); asking again once it answers",
                            name, serial, _first_line(exc))
                if wait_for_prefect(deadline, delay):
                    delay = min(_MAX_DELAY_S, delay * 2)
                    continue
                gave_up = True
            result = fail(item, serial, exc)
        return Fed(result=result, serial=serial, started_at=started, ended_at=utcnow(), tries=tries,
                   gave_up=gave_up)


def wait_for_prefect(deadline: float, delay_s: float) -> bool:
    """Sleep ``delay_s``, then until the Prefect API answers: True; False once ``deadline``
    (``time.monotonic()``) has passed."""
    time.sleep(max(0.0, min(delay_s, deadline - time.monotonic())))
    while True:
        try:
            if prefect_answers():
                return True
        except Exception as exc:  # a health check that cannot even be sent: keep waiting
            log.debug("Prefect health check failed: %s", exc)
        if time.monotonic() >= deadline:
            return False
        time.sleep(min(2.0, max(0.0, deadline - time.monotonic())))


def _requested(error: httpx.HTTPError) -> str:
    try:
        return str(error.request.url)
    except RuntimeError:  # an error raised before any request was made
        return ""


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:160]


class _Pacer:
    """At least ``gap_s`` between two starts, across the threads."""

    def __init__(self, gap_s: float) -> None:
        self._gap_s = gap_s
        self._lock = threading.Lock()
        self._next = 0.0

    def wait(self) -> None:
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self._gap_s
        time.sleep(start - now)
