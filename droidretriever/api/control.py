"""Steering a run (``POST /runs/{id}/control``) and the farm's pause queue (``GET /pauses``).

The state machine is :mod:`flows.steering` (shared with the CLI): this module
only names the caller. An invalid transition answers 409 with the reason (a
command for one phone of a run on several phones, naming none, among them).
The run's page polls ``GET`` with ``watching=true``: only a watched run's planned
actions wait the confirm window.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query

from droidretriever.api.auth import Caller, caller
from droidretriever.api.context import ApiContext, get_context
from droidretriever.api.errors import ErrorBody
from droidretriever.api.schemas import RUN_ID, PauseView
from flows.steering import WATCH_TTL_S, SteeringState, SteerRequest

__all__ = ["router"]

router = APIRouter(tags=["control"])


@router.post("/runs/{run_id}/control", response_model=SteeringState,
             responses={409: {"model": ErrorBody, "description": "not possible now; says why"}},
             summary="Pause, take over, back to auto, save this screen, stop and report, "
                     "or answer a pause (continue / skip)")
def control_run(run_id: Annotated[str, Path(pattern=RUN_ID)], body: SteerRequest,
                context: ApiContext = Depends(get_context),
                who: Caller = Depends(caller)) -> SteeringState:
    return context.steering.apply(run_id, body, who.actor)


@router.get("/runs/{run_id}/control", response_model=SteeringState,
            summary="How the run is steered now, which phones it runs on (each with its app and "
                    "sub-task), what waits; watching=true: a person sees the run now")
def read_control(run_id: Annotated[str, Path(pattern=RUN_ID)],
                 watching: Annotated[bool, Query(
                     description="the caller shows the run to a person: for the next "
                                 f"{WATCH_TTL_S} s each planned action waits the confirm window "
                                 "(budgets.confirm_window_s)")] = False,
                 context: ApiContext = Depends(get_context),
                 who: Caller = Depends(caller)) -> SteeringState:
    state = context.steering.state(run_id)  # first: a run that does not exist is a 404
    if watching and not state.finished:
        context.steering.watch(run_id)
    return state


@router.get("/pauses", response_model=list[PauseView],
            summary="Every pause waiting for a person, farm-wide, oldest first")
def list_pauses(context: ApiContext = Depends(get_context),
                who: Caller = Depends(caller)) -> list[PauseView]:
    base = context.settings.api.base_url
    return [PauseView(entry=e, waited_s=round(e.waited_s, 1), dashboard=f"{base}/#/runs/{e.run_id}")
            for e in context.pauses.list()]
