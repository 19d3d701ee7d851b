"""``droidretriever ask "..."`` and ``droidretriever resume RUN``: the main job from a terminal.

``ask`` makes sure the local stack and a farm are up (starting ``up`` and
virtual phones when they are not), runs the ``retrieve`` flow in this process
against the local Prefect server, shows the run's live events (sub-tasks,
steps, captures, pauses) and prints the report with where to open it.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import typer
from rich.console import Console, Group
from rich.live import Live
from rich.markdown import Markdown
from rich.table import Table

from droidretriever.cli._app import app, state
from droidretriever.config import Settings, load_settings
from droidretriever.errors import DroidRetrieverError
from droidretriever.models import Heard, PageMode, RunEvent, RunEventKind, new_id

__all__ = ["ask", "resume"]

console = Console()


class _WithoutPrefectLines(logging.Filter):
    """Drops Prefect's own records from the terminal; they still reach the Prefect UI."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.name.startswith("prefect")


@contextmanager
def _local_prefect(settings: Settings) -> Iterator[None]:
    """Talk to the local stack's Prefect server; keep Prefect's own log lines out of the way.

    The live view shows progress and the CLI prints a failure as one line plus the
    fix; Prefect's run lines (and its tracebacks of those failures) would scroll the
    view away, so they go only to the Prefect UI (``--debug`` shows them here too).
    Our own warnings (a spooling store, a lost phone) still print.
    """
    from prefect.settings import PREFECT_API_URL, temporary_settings

    quiet = _WithoutPrefectLines()
    handlers = [] if state.debug else list(logging.getLogger().handlers)
    for handler in handlers:
        handler.addFilter(quiet)
    try:
        with temporary_settings({PREFECT_API_URL: str(settings.prefect.api_url).rstrip("/")}):
            yield
    finally:
        for handler in handlers:
            handler.removeFilter(quiet)


def _ensure_stack(settings: Settings) -> None:
    from deploy.local import build_stack

    stack = build_stack(settings)
    # Healthy is enough, whoever started it (`up`, or services run by the person themselves);
    # the subscriptions service is not needed to answer a question.
    if all(s.check_health().healthy for s in stack.services if s.needed_by_runs):
        return
    with console.status("starting the local stack (`droidretriever up`)..."):
        stack.up()


def _ensure_farm(settings: Settings) -> None:
    from deploy.farm import bring_up_sim, wait_for_workers
    from device_farm.registry import DeviceRegistry

    registry = DeviceRegistry.from_settings(settings)
    if any(s.heartbeat_alive for s in registry.statuses()):
        return
    with console.status(f"starting {settings.sim.phones} virtual phones "
                        "(`droidretriever farm up --sim`)..."):
        manifest = bring_up_sim(settings, settings.sim.phones)
        wait_for_workers(registry, manifest.serials, timeout_s=120)


@dataclass
class _Progress:
    """What the live view shows, built from the run's events."""

    run_id: str
    plan: str = "planning..."
    subtasks: dict[str, str] = field(default_factory=dict)
    steps: dict[str, int] = field(default_factory=dict)
    captures: int = 0
    notes: list[str] = field(default_factory=list)

    def apply(self, event: RunEvent) -> None:
        sid = event.subtask_id or ""
        if event.kind is RunEventKind.PLAN_READY and event.plan is not None:
            self.plan = event.message
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

    def render(self) -> Group:
        table = Table(title=f"run {self.run_id}: {self.plan}", title_justify="left")
        for column in ("sub-task", "status", "steps"):
            table.add_column(column)
        for sid, status in self.subtasks.items():
            table.add_row(sid, status, str(self.steps.get(sid, 0)))
        return Group(table, f"captures saved: {self.captures}", *self.notes[-3:])


def _follow_events(settings: Settings, progress: _Progress, live: Live,
                   done: threading.Event) -> None:
    from storage import RunEventReader, StorageError, open_redis

    reader = RunEventReader(open_redis(settings.redis))
    last_seq = 0
    while not done.is_set():
        try:
            for event in reader.iter_live(progress.run_id, last_seq, idle_timeout_s=1.0):
                last_seq = event.seq
                progress.apply(event)
                live.update(progress.render())
                if done.is_set():
                    return
        except StorageError:
            done.wait(1.0)  # the stream is a view: keep trying until the run ends


def _save_html(settings: Settings, html_key: str, run_id: str) -> Path:
    from storage import open_object_store

    path = settings.state_dir / "reports" / run_id / "report.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(open_object_store(settings).get_bytes(html_key))
    return path


def _hear(settings: Settings, run_id: str, audio: Path, *,
          interactive: bool) -> tuple[str, Heard, str]:
    """Store the recording and say what was heard; on a terminal the person may correct it.

    Returns the recording's key, what was heard, and the question to ask.
    """
    from storage import RunKeys, open_object_store
    from tasks.run_steps import transcribe_recording

    store = open_object_store(settings)
    audio_key = RunKeys(run_id).key("query" + (audio.suffix or ".wav"))
    store.put_bytes(audio_key, audio.read_bytes(), "audio/wav")
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
    return audio_key, heard, text


@app.command()
def ask(
    question: str = typer.Argument("", help="The question, e.g. \"Is a Big Mac cheaper on "
                                            "Meituan or Ele.me?\""),
    apps: str = typer.Option("", "--apps", help="Only these apps (labels or packages): a,b."),
    mode: str = typer.Option("", "--mode", help="Force a page mode: focused, list_view, multi_page."),
    limit: int = typer.Option(3, "--limit", min=1, max=20, help="Browsing limit per app."),
    audio: Path | None = typer.Option(None, "--audio", exists=True, dir_okay=False,
                                      help="Ask with a WAV recording instead of text."),
    as_json: bool = typer.Option(False, "--json", help="Print the run's outcome as JSON only."),
) -> None:
    """Answer a question from the apps on the farm's phones, with a cited report."""
    from flows.models import RetrieveRequest
    from flows.retrieve import retrieve

    if not question.strip() and audio is None:
        raise typer.BadParameter("ask a question, or give --audio FILE")
    settings = load_settings()
    _ensure_stack(settings)
    _ensure_farm(settings)
    run_id = new_id("run")
    audio_key = None
    heard: Heard | None = None
    if audio is not None:
        audio_key, heard, spoken = _hear(settings, run_id, audio, interactive=not as_json)
        question = question or spoken
    request = RetrieveRequest(
        text=question or None, audio_key=audio_key, run_id=run_id, heard=heard,
        apps=tuple(a.strip() for a in apps.split(",") if a.strip()),
        mode=PageMode.parse(mode) if mode else None, browsing_limit=limit,
    )
    from droidretriever.cli.api import dashboard_link

    dashboard = dashboard_link(settings, run_id)
    if dashboard and not as_json:
        console.print(f"watch and steer it: {dashboard}", highlight=False, soft_wrap=True)
    progress = _Progress(run_id)
    done = threading.Event()
    with _local_prefect(settings):
        if as_json:
            outcome = retrieve(request)
        else:
            try:
                with Live(progress.render(), console=console, refresh_per_second=4) as live:
                    follower = threading.Thread(target=_follow_events,
                                                args=(settings, progress, live, done), daemon=True)
                    follower.start()
                    try:
                        outcome = retrieve(request)
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
    if as_json:
        console.print_json(outcome.model_dump_json())
        return
    from tasks.synthesis import render_report_terminal

    console.print()
    console.print(Markdown(render_report_terminal(outcome.report)))
    html = _save_html(settings, outcome.html_key, run_id)
    ui = settings.prefect.ui_url
    console.print(f"\nreport: {html}\nobject store: {outcome.html_key}", highlight=False)
    if outcome.flow_run_id:
        console.print(f"Prefect run: {ui}/runs/flow-run/{outcome.flow_run_id}", highlight=False)
    if dashboard:
        console.print(f"dashboard: {dashboard}", highlight=False)
    unverified = len(outcome.report.unverified)
    if unverified:
        console.print(f"[yellow]{unverified} citation(s) could not be verified[/] (marked in the "
                      "report)")


@app.command()
def resume(
    run_id: str = typer.Argument(..., help="The run id `ask` printed."),
    skip: bool = typer.Option(False, "--skip", help="Give up this sub-task instead of going on."),
    note: str = typer.Option("", "--note", help="A note for the record."),
    app_name: str = typer.Option("", "--app", help="Only the paused sub-flow of this app."),
) -> None:
    """Go on with a run that waits for you (after you logged in or confirmed on the phone)."""
    from flows.pauses import resume_run

    settings = load_settings()
    with _local_prefect(settings):
        resumed = resume_run(run_id, "skip" if skip else "continue", note, app_name or None,
                             settings=settings)
    for name in resumed:
        console.print(f"resumed {name}" + (" (skipped)" if skip else ""), highlight=False)
