"""What a run left: the HTML report, its captures and highlight crops, the screens of each step.

The report is the self-contained ``report.html`` synthesis wrote (its own
inline script makes citations jump to their highlighted box). It is served with
a sandboxing Content-Security-Policy: whatever a model wrote into it runs in an
opaque origin that can reach neither the API nor the session cookie.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query
from fastapi.responses import Response

from core.models import Report
from droidretriever.api.auth import Caller, caller
from droidretriever.api.context import ApiContext, get_context
from droidretriever.api.errors import NotFound
from droidretriever.api.images import thumbnail_jpeg
from droidretriever.api.schemas import CAPTURE_ID, RUN_ID, SUBTASK_ID
from storage import ObjectNotFoundError, RunKeys

__all__ = ["router"]

router = APIRouter(tags=["reports"])

RunId = Annotated[str, Path(pattern=RUN_ID)]
_REPORT_CSP = ("sandbox allow-scripts; default-src 'none'; img-src data:; "
               "style-src 'unsafe-inline'; script-src 'unsafe-inline'")
_PNG: dict[str, Any] = {"content": {"image/png": {}}}
_MAX_AGE = "private, max-age=60"


def _get(context: ApiContext, key: str, what: str) -> bytes:
    try:
        return context.store.get_bytes(key)
    except ObjectNotFoundError as exc:
        raise NotFound(f"{what} does not exist (yet)", hint="check the ids; a run writes its "
                       "report when it finishes") from exc


@router.get("/runs/{run_id}/report", response_class=Response, summary="The run's HTML report",
            responses={200: {"content": {"text/html": {}}}})
def get_report(run_id: RunId, context: ApiContext = Depends(get_context),
               who: Caller = Depends(caller)) -> Response:
    html = _get(context, RunKeys(run_id).report_html, f"the report of {run_id}")
    return Response(html, media_type="text/html; charset=utf-8",
                    headers={"content-security-policy": _REPORT_CSP, "cache-control": _MAX_AGE})


@router.get("/runs/{run_id}/report.json", response_model=Report,
            summary="The run's report: Markdown, citations with their boxes, per-app status")
def get_report_json(run_id: RunId, context: ApiContext = Depends(get_context),
                    who: Caller = Depends(caller)) -> Report:
    return _load_report(context, run_id)


def _load_report(context: ApiContext, run_id: str) -> Report:
    return Report.model_validate_json(_get(context, RunKeys(run_id).report_json,
                                           f"the report of {run_id}"))


@router.get("/runs/{run_id}/captures/{capture_id}", response_class=Response, responses={200: _PNG},
            summary="A stitched capture (PNG)")
def get_capture(run_id: RunId, capture_id: Annotated[str, Path(pattern=CAPTURE_ID)],
                context: ApiContext = Depends(get_context), who: Caller = Depends(caller)) -> Response:
    png = _get(context, RunKeys(run_id).capture_image(capture_id), f"capture {capture_id}")
    return Response(png, media_type="image/png", headers={"cache-control": _MAX_AGE})


@router.get("/runs/{run_id}/citations/{index}/crop", response_class=Response,
            responses={200: _PNG}, summary="The highlighted evidence of the report's index-th citation")
def get_citation_crop(run_id: RunId, index: Annotated[int, Path(ge=0, le=10_000)],
                      context: ApiContext = Depends(get_context),
                      who: Caller = Depends(caller)) -> Response:
    report = _load_report(context, run_id)
    if index >= len(report.citations):
        raise NotFound(f"the report of {run_id} has {len(report.citations)} citations")
    citation = report.citations[index]
    if citation.crop_key is None:
        raise NotFound(f"citation {index} could not be verified, so it has no highlight",
                       hint="the report marks it as unverified")
    png = _get(context, citation.crop_key, f"the crop of citation {index}")
    return Response(png, media_type="image/png", headers={"cache-control": _MAX_AGE})


@router.get("/runs/{run_id}/screens/{subtask_id}/{name}", response_class=Response,
            responses={200: {"content": {"image/png": {}, "image/jpeg": {}}}},
            summary="The screen of one step (PNG), or a thumbnail of it (JPEG, ?width=)")
def get_screen(run_id: RunId, subtask_id: Annotated[str, Path(pattern=SUBTASK_ID)],
               name: Annotated[str, Path(pattern=r"^(takeover-)?[0-9]{4}(-d[0-9]{1,3}r[0-9]{1,3})?\.png$")],
               width: Annotated[int | None, Query(ge=40, le=1080)] = None,
               context: ApiContext = Depends(get_context), who: Caller = Depends(caller)) -> Response:
    png = _get(context, RunKeys(run_id).key("screens", subtask_id, name), f"screen {name}")
    if width is None:
        return Response(png, media_type="image/png", headers={"cache-control": _MAX_AGE})
    return Response(thumbnail_jpeg(png, width), media_type="image/jpeg",
                    headers={"cache-control": _MAX_AGE})

