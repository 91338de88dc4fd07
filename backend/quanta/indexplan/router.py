"""HTTP endpoints of workload index plans."""

from typing import Annotated

from fastapi import APIRouter, Query, status

from quanta.audit.service import Actor
from quanta.deps import (
    AUTH_RESPONSES,
    DiagnosePrincipal,
    ErrorDetail,
    ReadPrincipal,
    SessionDep,
    SettingsDep,
)
from quanta.indexplan import service
from quanta.indexplan.schemas import IndexPlanList, PlanRequested

router = APIRouter(tags=["suggestions"], responses=AUTH_RESPONSES)

NOT_FOUND: dict[int | str, dict[str, object]] = {
    404: {"model": ErrorDetail, "description": "No such instance."}
}


@router.get(
    "/instances/{instance_id}/index-plan", operation_id="get_index_plan", responses=NOT_FOUND
)
def get_index_plan(
    instance_id: int, session: SessionDep, _principal: ReadPrincipal
) -> IndexPlanList:
    """The instance's latest workload index plan: per table one ALTER TABLE, each index with
    the queries it serves, their share of load, rows examined per call before/after, write
    overhead, width and the sandbox's verdict. Heaviest table first."""
    return service.instance_plans(session=session, instance_id=instance_id)


@router.post(
    "/instances/{instance_id}/index-plan",
    operation_id="request_index_plan",
    status_code=status.HTTP_202_ACCEPTED,
    responses={
        **NOT_FOUND,
        409: {"model": ErrorDetail, "description": "The instance has no usable DSN."},
        503: {"model": ErrorDetail, "description": "The task queue is unreachable."},
    },
)
def request_index_plan(
    instance_id: int,
    session: SessionDep,
    settings: SettingsDep,
    principal: DiagnosePrincipal,
    hours: Annotated[
        int | None,
        Query(
            ge=1,
            le=720,
            description="Weigh the last N hours; default QUANTA_INDEX_PLAN_WINDOW_HOURS.",
        ),
    ] = None,
) -> PlanRequested:
    """Queue a fresh plan (snapshots refreshed, sandbox check); GET for the result.

    Needs the `diagnose` scope; the sandbox run is audited with who asked.
    """
    return service.request_plans(
        session=session,
        settings=settings,
        instance_id=instance_id,
        actor=Actor(principal.name, principal.token_id),
        window_hours=hours,
    )
