"""``droidretriever ask "..."`` and ``droidretriever resume RUN``: the main job from a terminal.

``ask`` checks what was typed first (nothing starts on a typo), makes sure
the local stack and a farm are up (starting ``up`` and virtual phones when
they are not), runs the ``retrieve`` flow in this process against the local
Prefect server, shows the run's live events (sub-tasks, steps, captures,
pauses) and prints the report with where to open it. Text from outside (the
question, screen text in events and the report) reaches the terminal without
control characters.

SIGTERM or Ctrl-C ends ``ask`` at once, waiting for a person or not: the flow runs
in a thread and this process's main thread, which takes the signal, ends the run
``stopped`` everywhere (:func:`flows.ending.stop_run_now`: manifest sealed, pauses
withdrawn, phones freed, Prefect told) and exits 143 or 130. A second signal while
that is under way exits at once.
"""

from __future__ import annotations

import contextvars
import logging
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console, Group
from rich.live import Live
from rich.markdown import Markdown
from rich.markup import escape
from rich.table import Table

from core.config import Settings, load_settings
from core.errors import DroidRetrieverError, InputError, ServiceError
from core.models import Heard, InstalledApp, RunEvent, RunEventKind, new_id
from core.text import mask_url, strip_controls
from droidretriever.cli._app import app, state
from droidretriever.cli.inputs import (
    check_apps,
    check_audio,
    check_id,
    check_question,
    parse_mode,
    validated,
)

if TYPE_CHECKING:
    from flows.models import RetrieveRequest, RunOutcome

__all__ = ["ask", "resume"]

console = Console()


class _WithoutLibraryLines(logging.Filter):
    """Drops Prefect's and Celery's own records from the terminal.

    Prefect's still reach the Prefect UI; Celery's are its retries of a Redis that
    restarts (the live view says that it waits for Redis instead).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.name.startswith(("prefect", "celery"))


@contextmanager
def _local_prefect(settings: Settings) -> Iterator[None]:
    """Talk to the local stack's Prefect server; keep Prefect's own log lines out of the way.

    The live view shows progress and the CLI prints a failure as one line plus the
    fix; Prefect's run lines (and its tracebacks of those failures) would scroll the
    view away, so they go only to the Prefect UI (``--debug`` shows them here too).
    Our own warnings (a spooling store, a lost phone) still print.
    """
    import httpx
    import prefect.main  # noqa: F401  # sets up Prefect's log handlers, filtered below
    from prefect.exceptions import PrefectHTTPStatusError

    from flows.runtime import use_prefect_server

    quiet = _WithoutLibraryLines()
    # Prefect's internal services (its event sender) log through their own handler.
    loggers = (logging.getLogger(), logging.getLogger("prefect._internal"))
    handlers = [] if state.debug else [h for lg in loggers for h in lg.handlers]
    for handler in handlers:
        handler.addFilter(quiet)
    # Prefect writes "Error logging to API" when its server restarts and a log batch
    # cannot be sent (the batch is dropped); that is noise in the live view.
    raising, logging.raiseExceptions = logging.raiseExceptions, state.debug
    try:
        with use_prefect_server(settings):
            yield
    except (httpx.HTTPError, PrefectHTTPStatusError) as exc:
        # The API is this CLI's boundary with Prefect: its faults are one line, not a traceback.
        unauthorized = isinstance(exc, httpx.HTTPStatusError) and exc.response.status_code == 401
        raise ServiceError(
            f"the Prefect API at {mask_url(str(settings.prefect.api_url))} "
            + ("refused our credentials" if unauthorized else f"failed ({type(exc).__name__})"),
            hint="set DROIDRETRIEVER_PREFECT__AUTH_STRING to the server's USER:PASSWORD"
            if unauthorized else "start it with `droidretriever up`, then try again",
        ) from exc
    finally:
        logging.raiseExceptions = raising
        for handler in handlers:
            handler.removeFilter(quiet)


def _check_models(settings: Settings, *, spoken: bool) -> None:
    """Probe each configured role once; a role a run could not use stops here, with the fix."""
    from inference.llm import check_roles

    roles = ("decomposer", "navigator", "evaluator", "synthesizer", *(("transcriber",) if spoken else ()))
    if not any(getattr(settings.llm, role).configured for role in roles):
        return
    with console.status("checking the model roles (`droidretriever doctor` shows them all)..."):
        check_roles(settings, roles)


def _ensure_stack(settings: Settings) -> Settings:
    """The settings to run with, once the services a run needs are healthy (started if not)."""
    from deploy.local import build_stack, ensure_stack_secrets, make_state_private

    stack = build_stack(settings)
    # Healthy is enough, whoever started it (`up`, or services run by the person themselves);
    # the subscriptions service is not needed to answer a question.
    if all(s.check_health().healthy for s in stack.services if s.needed_by_runs):
        return settings
    settings = ensure_stack_secrets(settings)
    make_state_private(settings.state_dir)
    with console.status("starting the local stack (`droidretriever up`)..."):
        build_stack(settings).up()
    return settings


def _ensure_farm(settings: Settings) -> tuple[InstalledApp, ...]:
    """The apps on the farm's phones, once some are online (virtual ones started if none are)."""
    from deploy.farm import bring_up_sim, wait_for_workers
    from device_farm.registry import DeviceRegistry

    registry = DeviceRegistry.from_settings(settings, retry_window_s=0)
    if any(s.heartbeat_alive for s in registry.statuses()):
        return registry.installed_apps()
    with console.status(f"starting {settings.sim.phones} virtual phones "
                        "(`droidretriever farm up --sim`)..."):
        manifest = bring_up_sim(settings, settings.sim.phones)
        wait_for_workers(registry, manifest.serials, timeout_s=120)
    return registry.installed_apps()


@dataclass
class _Progress:
    """What the live view shows, built from the run's events."""

    run_id: str
    plan: str = "planning..."
    subtasks: dict[str, str] = field(default_factory=dict)
    steps: dict[str, int] = field(default_factory=dict)
    captures: int = 0
    notes: list[str] = field(default_factory=list)
    fallbacks: dict[str, int] = field(default_factory=dict)  # role -> model failures the rules covered
    waiting: str = ""  # what the run waits for (a service coming back), shown while it lasts
    act: str = ""  # a request to act: the plan's one line saying the agent does not do it

    def apply(self, event: RunEvent) -> None:
        # Event messages quote the question and screen text: data, never terminal commands.
        event = event.model_copy(update={"message": escape(strip_controls(event.message))})
        sid = event.subtask_id or ""
        if event.kind is RunEventKind.PLAN_READY and event.plan is not None:
            self.plan = event.message
            if event.plan.act_request is not None:
                self.act = escape(strip_controls(event.plan.act_request.notice))
            for subtask in event.plan.subtasks:
                self.subtasks[subtask.id] = "pending"
        elif event.kind is RunEventKind.SUBTASK_STARTED:
            self.subtasks[sid] = "running"
        elif event.kind is RunEventKind.STEP:
            self.steps[sid] = self.steps.get(sid, 0) + 1
        elif event.kind is RunEventKind.CAPTURE_SAVED:
            self.captures += 1
        elif event.kind is RunEventKind.NEEDS_USER:
            self.subtasks[sid] = "[yellow]needs you[/]"
            self.notes.append(f"[yellow]paused:[/] {event.message}\n  when done: "
                              f"`droidretriever resume {self.run_id}` (or the Prefect UI form)")
        elif event.kind is RunEventKind.RESUMED:
            self.subtasks[sid] = "running"
        elif event.kind is RunEventKind.SUBTASK_FINISHED and event.result is not None:
            self.subtasks[sid] = event.result.status.value
        elif event.kind is RunEventKind.ERROR:
            self.notes.append(f"[red]error:[/] {event.message}")
        elif event.kind in (RunEventKind.PHONE_LOST, RunEventKind.SUBTASK_MOVED):
            self.notes.append(f"[yellow]phone:[/] {event.message}")
        elif event.kind is RunEventKind.MODEL_FALLBACK:
            role = event.fallback.role if event.fallback is not None else "a model"
            self.fallbacks[role] = self.fallbacks.get(role, 0) + 1
            self.notes.append(f"[yellow]model fallback:[/] {event.message}")  # escaped above

    def render(self) -> Group:
        table = Table(title=f"run {self.run_id}: {self.plan}", title_justify="left")
        for column in ("sub-task", "status", "steps"):
            table.add_column(column)
        for sid, status in self.subtasks.items():
            table.add_row(escape(strip_controls(sid)), status, str(self.steps.get(sid, 0)))
        fell = ", ".join(f"{role} {count}" for role, count in self.fallbacks.items())
        summary = f"captures saved: {self.captures}" + (
            f" · [yellow]model fallbacks to the rules: {fell}[/]" if fell else "")
        waiting = [f"[yellow]{self.waiting}[/]"] if self.waiting else []
        act = [f"[yellow]{self.act}[/]"] if self.act else []
        return Group(*act, table, summary, *self.notes[-3:], *waiting)


def _follow_events(settings: Settings, progress: _Progress, live: Live,
                   done: threading.Event) -> None:
    from core.redis_client import open_redis
    from storage import RunEventReader, StorageError

    # This view's own client fails at once, so it can say that the run waits for Redis.
    reader = RunEventReader(open_redis(settings.redis, retry_window_s=0))
    last_seq = 0
    while not done.is_set():
        try:
            for event in reader.iter_live(progress.run_id, last_seq, idle_timeout_s=1.0):
                last_seq = event.seq
                progress.waiting = ""
                progress.apply(event)
                live.update(progress.render())
                if done.is_set():
                    return
            if progress.waiting:
                progress.waiting = ""
                live.update(progress.render())
        except StorageError:
            # The stream is a view: keep trying until the run ends, which rides Redis out.
            progress.waiting = (f"Redis does not answer: the run waits for it to come back "
                                f"(up to {settings.redis.retry_window_s:.0f} s)")
            live.update(progress.render())
            done.wait(1.0)


def _save_html(settings: Settings, html_key: str, run_id: str) -> Path:
    from core.private_files import write_private
    from storage import open_object_store

    path = settings.state_dir / "reports" / run_id / "report.html"
    write_private(path, open_object_store(settings).get_bytes(html_key))
    return path


def _run(request: RetrieveRequest) -> RunOutcome:
    """The ``retrieve`` flow in this process; an error that is not ours becomes one line."""
    from flows.errors import RunFailedError
    from flows.retrieve import run_retrieve

    try:
        return run_retrieve(request)
    except DroidRetrieverError:
        raise
    except Exception as exc:  # Prefect's engine gave up (its API gone for too long), or a bug
        if state.debug:
            raise
        raise RunFailedError(
            f"run {request.run_id} stopped: {type(exc).__name__}: {exc}",
            hint="`droidretriever status` says which service is down; `droidretriever --debug "
                 "ask ...` shows the traceback",
        ) from exc


def _sweep_crashed_runs(settings: Settings) -> None:
    """Mark crashed the runs whose `ask` died (say which); a sweep that cannot run is skipped."""
    from flows.crashes import sweep_crashed_runs
    from flows.runtime import open_services

    try:
        crashed = sweep_crashed_runs(open_services(settings))
    except DroidRetrieverError as exc:
        logging.getLogger(__name__).warning("crashed runs not looked for: %s", exc)
        return
    notes = Console(stderr=True)  # stdout may be --json
    for found in crashed:
        notes.print(f"[dim]{escape(found.describe())}[/]", highlight=False)


def _hear(settings: Settings, audio_key: str, recording: bytes, *,
          interactive: bool) -> tuple[Heard, str]:
    """Store the recording and say what was heard; on a terminal the person may correct it.

    Returns what was heard and the question to ask.
    """
    from storage import open_object_store
    from tasks.run_steps import transcribe_recording

    store = open_object_store(settings)
    store.put_bytes(audio_key, recording, "audio/wav")
    with console.status("listening to the recording..."):
        transcript = transcribe_recording(settings, store, audio_key)
    heard = Heard(text=transcript.text.strip(), engine=transcript.backend,
                  low_accuracy=transcript.low_accuracy)
    label = ", offline engine: low accuracy" if heard.low_accuracy else ""
    console.print(f"heard: “{heard.text or '(nothing)'}” ({heard.engine}{label})", highlight=False)
    if not heard.text:
        raise DroidRetrieverError("nothing could be heard in the recording",
                                  hint="record again closer to the microphone, or type the question")
    text = heard.text
    if interactive and sys.stdin.isatty():
        corrected = typer.prompt("Press Enter to ask this, or type the question as you said it",
                                 default="", show_default=False).strip()
        text = corrected or text
    return heard, text


@app.command()
def ask(
    question: str = typer.Argument("", help="The question, e.g. \"Is a Big Mac cheaper on "
                                            "Meituan or Ele.me?\""),
    apps: str = typer.Option("", "--apps", help="Only these apps (labels or packages): a,b."),
    mode: str = typer.Option("", "--mode", help="Force a page mode: focused, list_view, multi_page."),
    limit: int = typer.Option(3, "--limit", min=1, max=20, help="Browsing limit per app."),
    audio: Path | None = typer.Option(None, "--audio", exists=True, dir_okay=False,
                                      help="Ask with a recording (WAV) instead of text."),
    as_json: bool = typer.Option(False, "--json", help="Print the run's outcome as JSON only."),
) -> None:
    """Answer a question from the apps on the farm's phones, with a cited report."""
    from flows.models import RetrieveRequest
    from storage import RunKeys

    # Everything typed is checked before anything starts or is written.
    check_question(question, required=audio is None)
    run_id = new_id("run")
    suffix = audio.suffix.lower() if audio is not None else ""
    suffix = suffix if re.fullmatch(r"\.[a-z0-9]{1,5}", suffix) else ".wav"
    audio_key = RunKeys(run_id).key("query" + suffix) if audio is not None else None
    request = validated(lambda: RetrieveRequest(
        text=question or None, audio_key=audio_key, run_id=run_id, apps=check_apps(apps),
        mode=parse_mode(mode), browsing_limit=limit,
    ), {"text": "the question", "apps": "--apps", "mode": "--mode", "browsing_limit": "--limit"})
    settings = load_settings()
    _check_models(settings, spoken=audio is not None)
    recording = check_audio(audio, settings) if audio is not None else None
    settings = _ensure_stack(settings)
    from droidretriever.cli.api import dashboard_link
    from flows.retrieve import check_apps_installed

    # Only the farm knows its apps: checked once it is up, before the run is created.
    check_apps_installed(request.apps, _ensure_farm(settings), option="--apps")

    try:
        if recording is not None and audio_key is not None:
            heard, spoken = _hear(settings, audio_key, recording, interactive=not as_json)
            request = validated(lambda: RetrieveRequest.model_validate(
                {**request.model_dump(), "text": question or spoken, "heard": heard},
            ), {"text": "what was heard"})
        dashboard = dashboard_link(settings, run_id)
        if dashboard and not as_json:
            console.print(f"watch and steer it: {dashboard}", highlight=False, soft_wrap=True)
        outcome = _run_retrieve(settings, request, run_id, as_json=as_json)
    except BaseException:
        if audio_key is not None:
            _forget_recording(settings, run_id, audio_key)
        raise
    if as_json:
        console.print_json(outcome.model_dump_json())
        return
    from tasks.synthesis import render_report_terminal

    console.print()
    console.print(Markdown(strip_controls(render_report_terminal(outcome.report))))
    html = _save_html(settings, outcome.html_key, run_id)
    console.print(f"\nreport: {html}\nobject store: {outcome.html_key}", highlight=False)
    if outcome.flow_run_id:
        console.print(f"Prefect run: {settings.prefect.flow_run_url(outcome.flow_run_id)}",
                      highlight=False)
    if dashboard:
        console.print(f"dashboard: {dashboard}", highlight=False)
    unverified = len(outcome.report.unverified)
    if unverified:
        console.print(f"[yellow]{unverified} citation(s) could not be verified[/] (marked in the "
                      "report)")


def _run_retrieve(settings: Settings, request: RetrieveRequest, run_id: str, *,
                  as_json: bool) -> RunOutcome:
    """Run the flow here, with the live view unless ``--json``; a signal stops it (module doc)."""
    progress = _Progress(run_id)
    done = threading.Event()
    try:
        with _local_prefect(settings):
            _sweep_crashed_runs(settings)
            if as_json:
                return _run_stoppable(request)
            try:
                with Live(progress.render(), console=console, refresh_per_second=4) as live:
                    follower = threading.Thread(target=_follow_events,
                                                args=(settings, progress, live, done), daemon=True)
                    follower.start()
                    try:
                        return _run_stoppable(request)
                    except DroidRetrieverError as exc:
                        done.set()
                        follower.join(timeout=3)
                        # The error prints below as one line with its fix: not twice.
                        progress.notes = [n for n in progress.notes if str(exc) not in n]
                        live.update(progress.render())
                        raise
                    finally:
                        done.set()
                        follower.join(timeout=3)
            finally:
                if not console.is_terminal:
                    console.line()  # Live ends its last frame with a newline only on a terminal
    except _Interrupted as interrupted:
        _exit_stopped(run_id, interrupted.signum)


class _Interrupted(BaseException):
    """SIGTERM or SIGINT reached ``ask``; raised in the main thread once the run is stopped."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _run_stoppable(request: RetrieveRequest) -> RunOutcome:
    """The flow in a thread; SIGTERM or SIGINT ends the run ``stopped`` and raises _Interrupted.

    The flow must not run in the main thread: Prefect swaps SIGTERM there for its own
    handler (the flow run Crashed, then the process goes on while other threads wait
    in a pause), and the pause's polling does not wake for a KeyboardInterrupt.
    """
    outcome: list[RunOutcome] = []
    error: list[BaseException] = []
    context = contextvars.copy_context()  # the Prefect server settings of _local_prefect

    def run() -> None:
        try:
            outcome.append(context.run(_run, request))
        except BaseException as exc:  # re-raised in the main thread below
            error.append(exc)

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise _Interrupted(signum)

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        thread = threading.Thread(target=run, name="retrieve", daemon=True)
        thread.start()
        while thread.is_alive():
            thread.join(0.2)
    except _Interrupted as interrupted:
        for sig in previous:  # a second signal while the run is being stopped: out at once
            signal.signal(sig, _exit_now)
        _stop_now(request.run_id or "", interrupted.signum)
        raise
    finally:
        for sig, handler in previous.items():
            if signal.getsignal(sig) is interrupt:
                signal.signal(sig, handler)
    if error:
        raise error[0]
    return outcome[0]


def _stop_now(run_id: str, signum: int) -> None:
    """End the run ``stopped`` everywhere; what cannot be done now is said, not raised."""
    from flows.ending import stop_run_now
    from flows.runtime import open_services

    name = signal.Signals(signum).name
    reason = f"stopped: `ask` received {name} ({'Ctrl-C' if signum == signal.SIGINT else 'terminated'})"
    try:
        # The flow's own services (same settings, same object), so the seal takes its lock.
        stop_run_now(open_services(load_settings()), run_id, reason)
    except DroidRetrieverError as exc:
        Console(stderr=True).print(f"[yellow]run {escape(run_id)} not fully stopped:[/] "
                                   f"{escape(str(exc))}", highlight=False)


def _exit_now(signum: int, frame: FrameType | None) -> None:
    os._exit(128 + signum)


def _exit_stopped(run_id: str, signum: int) -> NoReturn:
    """Say the run stopped and leave now: the flow's threads (a pause's polling) are not waited."""
    Console(stderr=True).print(f"run {escape(run_id)} stopped ({signal.Signals(signum).name}); "
                               "its phones are free", highlight=False)
    sys.stdout.flush()
    sys.stderr.flush()
    logging.shutdown()
    os._exit(128 + signum)


def _forget_recording(settings: Settings, run_id: str, audio_key: str) -> None:
    """A run that failed before it had a manifest leaves no recording behind in the store."""
    from storage import ManifestStore, StorageError, open_object_store

    try:
        store = open_object_store(settings)
        if not ManifestStore(store).exists(run_id):
            store.delete(audio_key)
    except StorageError:
        pass  # the store is down: the original error is what the person needs to see


@app.command()
def resume(
    run_id: str = typer.Argument(..., help="The run id `ask` printed."),
    skip: bool = typer.Option(False, "--skip", help="Give up this sub-task instead of going on."),
    note: str = typer.Option("", "--note", help="A note for the record."),
    app_name: str = typer.Option("", "--app", help="Only the paused sub-flow of this app."),
) -> None:
    """Go on with a run that waits for you (after you logged in or confirmed on the phone)."""
    from flows.pauses import resume_run

    check_id(run_id, "run", r"run-[A-Za-z0-9_-]{1,64}")
    if len(note) > 2000:
        raise InputError("--note is longer than 2,000 characters: write a shorter note")
    settings = load_settings()
    with _local_prefect(settings):
        resumed = resume_run(run_id, "skip" if skip else "continue", note, app_name or None,
                             settings=settings)
    for name in resumed:
        console.print(f"resumed {name}" + (" (skipped)" if skip else ""), highlight=False)
