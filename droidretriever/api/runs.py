"""Runs: ask (text, a corrected recording, or a raw recording), list, one run's record.

A run asked here never runs in this process: it becomes a Prefect flow run of
the ``retrieve/dashboard`` deployment, announced on Redis to the local stack's
``runner`` service, which starts it at once in its warm process
(:mod:`flows.runner`). Before that, a pending manifest is written, so the run has
a page at once.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request, status

from core.models import (
    Heard,
    PageMode,
    RunManifest,
    RunStatus,
    new_id,
)
from core.models import (
    Query as Question,
)
from droidretriever.api.auth import Caller, caller
from droidretriever.api.context import ApiContext, get_context
from droidretriever.api.errors import NotFound
from droidretriever.api.schemas import (
    RUN_ID,
    DraftView,
    RunCreate,
    RunDetail,
    RunPage,
    RunStarted,
    RunSummary,
)
from droidretriever.api.uploads import read_audio
from flows.errors import FlowError
from flows.history import list_runs
from flows.models import RetrieveRequest
from flows.retrieve import check_apps_installed
from flows.runner import start_run
from storage import ManifestError, ObjectNotFoundError, RunKeys
from tasks.run_steps import transcribe_recording

__all__ = ["router"]

router = APIRouter(tags=["runs"])

RunId = Annotated[str, Path(pattern=RUN_ID, description="a run id, e.g. run-20261121T101500-3f9a1c")]
_SPOKEN = "a spoken question, not heard yet"


def run_link(context: ApiContext, run_id: str) -> str:
    """The run's page in the dashboard."""
    return f"{context.settings.api.base_url}/#/runs/{run_id}"


def prefect_link(context: ApiContext, flow_run_id: str | None) -> str | None:
    """The run in the Prefect UI."""
    if flow_run_id is None:
        return None
    return context.settings.prefect.flow_run_url(flow_run_id)


def _start(context: ApiContext, request: RetrieveRequest, question: Question) -> RunStarted:
    run_id = request.run_id or new_id("run")
    context.manifests.write(RunManifest(run_id=run_id, query=question, status=RunStatus.PENDING))
    try:
        flow_run_id = start_run(request.model_copy(update={"run_id": run_id}), context.redis)
    except FlowError as exc:
        reason = str(exc)
        context.manifests.update(run_id, lambda m: m.model_copy(update={
            "status": RunStatus.FAILED, "error": reason}))
        raise
    context.manifests.update(run_id, lambda m: m.model_copy(update={
        "prefect_flow_run_id": m.prefect_flow_run_id or str(flow_run_id)}))
    return RunStarted(run_id=run_id, flow_run_id=str(flow_run_id), dashboard=run_link(context, run_id),
                      prefect=prefect_link(context, str(flow_run_id)) or "")


@router.post("/runs", status_code=status.HTTP_201_CREATED, response_model=RunStarted,
             summary="Ask a question (text, or a recording heard by POST /transcripts)")
def create_run(body: RunCreate, context: ApiContext = Depends(get_context),
               who: Caller = Depends(caller)) -> RunStarted:
    check_apps_installed(body.apps, context.installed_apps())
    run_id = new_id("run")
    audio_key: str | None = None
    heard: Heard | None = None
    if body.draft is not None:
        heard, audio_key = _take_draft(context, body.draft, run_id)
    request = RetrieveRequest(text=body.text, apps=body.apps, mode=body.mode,
                              browsing_limit=body.limit, run_id=run_id, audio_key=audio_key,
                              heard=heard)
    question = Question(text=body.text, apps=body.apps, mode=body.mode, browsing_limit=body.limit,
                        audio_key=audio_key, heard=heard)
    return _start(context, request, question)


@router.post("/runs/audio", status_code=status.HTTP_201_CREATED, response_model=RunStarted,
             summary="Ask with a recording (WAV body); it is transcribed in the run",
             openapi_extra={"requestBody": {"required": True, "content": {
                 "audio/wav": {"schema": {"type": "string", "format": "binary"}}}}})
async def create_spoken_run(
    request: Request,
    apps: Annotated[str, Query(max_length=500, description="only these apps: a,b")] = "",
    mode: PageMode | None = None,
    limit: Annotated[int, Query(ge=1, le=20)] = 3,
    context: ApiContext = Depends(get_context),
    who: Caller = Depends(caller),
) -> RunStarted:
    chosen = tuple(a.strip() for a in apps.split(",") if a.strip())
    check_apps_installed(chosen, context.installed_apps())
    audio = await read_audio(request, context.settings.api.max_audio_bytes)
    run_id = new_id("run")
    audio_key = RunKeys(run_id).key("query.wav")
    context.store.put_bytes(audio_key, audio, "audio/wav")
    retrieve = RetrieveRequest(audio_key=audio_key, apps=chosen, mode=mode, browsing_limit=limit,
                               run_id=run_id)
    question = Question(text=_SPOKEN, apps=chosen, mode=mode, browsing_limit=limit,
                        audio_key=audio_key)
    return _start(context, retrieve, question)


@router.post("/transcripts", status_code=status.HTTP_201_CREATED, response_model=DraftView,
             summary="Hear a recording (WAV body) so a person can correct it first",
             openapi_extra={"requestBody": {"required": True, "content": {
                 "audio/wav": {"schema": {"type": "string", "format": "binary"}}}}})
async def create_transcript(request: Request, context: ApiContext = Depends(get_context),
                            who: Caller = Depends(caller)) -> DraftView:
    from starlette.concurrency import run_in_threadpool

    audio = await read_audio(request, context.settings.api.max_audio_bytes)
    draft = new_id("draft")
    key = f"drafts/{draft}/query.wav"
    context.store.put_bytes(key, audio, "audio/wav")
    transcript = await run_in_threadpool(transcribe_recording, context.settings, context.store, key)
    heard = Heard(text=transcript.text.strip(), engine=transcript.backend,
                  low_accuracy=transcript.low_accuracy)
    context.store.put_bytes(f"drafts/{draft}/heard.json", heard.model_dump_json().encode(),
                            "application/json")
    return DraftView(draft=draft, heard=heard)


def _take_draft(context: ApiContext, draft: str, run_id: str) -> tuple[Heard, str]:
    """What was heard in the draft's recording, and the recording moved to the run."""
    try:
        heard = Heard.model_validate_json(context.store.get_bytes(f"drafts/{draft}/heard.json"))
        audio = context.store.get_bytes(f"drafts/{draft}/query.wav")
    except ObjectNotFoundError as exc:
        raise NotFound(f"no recording {draft}", hint="record the question again") from exc
    key = RunKeys(run_id).key("query.wav")
    context.store.put_bytes(key, audio, "audio/wav")
    for name in ("query.wav", "heard.json"):
        context.store.delete(f"drafts/{draft}/{name}")
    return heard, key


@router.get("/runs", response_model=RunPage, summary="Runs, newest first, a page at a time")
def get_runs(page: Annotated[int, Query(ge=1, le=10_000)] = 1,
             per_page: Annotated[int, Query(ge=1, le=100)] = 20,
             context: ApiContext = Depends(get_context),
             who: Caller = Depends(caller)) -> RunPage:
    listed = list_runs(offset=(page - 1) * per_page, limit=per_page + 1)
    shown = listed[:per_page]
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(lambda r: _status_of(context, r.run_id), shown))
    runs = tuple(RunSummary(run_id=r.run_id, question=r.question, status=s,
                            prefect_state=r.prefect_state, started_at=r.started_at,
                            flow_run_id=r.flow_run_id) for r, s in zip(shown, statuses, strict=True))
    return RunPage(runs=runs, page=page, per_page=per_page, has_more=len(listed) > per_page)


def _status_of(context: ApiContext, run_id: str) -> RunStatus | None:
    try:
        return context.manifests.read(run_id).status
    except ManifestError:
        return None


@router.get("/runs/{run_id}", response_model=RunDetail,
            summary="A run: its manifest (question, plan, sub-task statuses), steering, links")
def get_run(run_id: RunId, context: ApiContext = Depends(get_context),
            who: Caller = Depends(caller)) -> RunDetail:
    manifest = context.manifests.read(run_id)
    return RunDetail(manifest=manifest, steering=context.steering.state(run_id),
                     prefect=prefect_link(context, manifest.prefect_flow_run_id),
                     dashboard=run_link(context, run_id),
                     report=context.store.exists(RunKeys(run_id).report_html))
