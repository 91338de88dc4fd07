"""HTTP endpoints of EXPLAIN and profiles: request one (queued), read the latest."""

from collections.abc import Callable
from typing import Annotated, TypeVar

from fastapi import APIRouter, Query, status
from fastapi.responses import JSONResponse

from quanta.audit.service import Actor
from quanta.deps import (
    AUTH_RESPONSES,
    DiagnosePrincipal,
    ErrorDetail,
    ReadPrincipal,
    SessionDep,
    SettingsDep,
)
from quanta.diagnostics import service
from quanta.diagnostics.schemas import ExplainRunOut, ProfileRunOut

router = APIRouter(tags=["diagnostics"], responses=AUTH_RESPONSES)

InstanceName = Annotated[
    str, Query(min_length=1, max_length=100, description="The instance (server) to run it on.")
]
NOT_FOUND: dict[int | str, dict[str, object]] = {
    404: {"model": ErrorDetail, "description": "Unknown query or instance, or nothing yet."}
}
REQUEST_ERRORS: dict[int | str, dict[str, object]] = {
    **NOT_FOUND,
    400: {"model": ErrorDetail, "description": "No example can be sent, and why (stored)."},
    409: {"model": ErrorDetail, "description": "The instance is not set up for it, and how to."},
}


def _refused(exc: service.Refused) -> JSONResponse:
    # Returned, not raised: the request's transaction commits, so the refused run (and its
    # reason) is stored and GET shows it.
    return JSONResponse({"detail": str(exc)}, status_code=status.HTTP_400_BAD_REQUEST)


Run = TypeVar("Run", ExplainRunOut, ProfileRunOut)


def _queued(request: Callable[[], Run]) -> Run | JSONResponse:
    """Call a service's request_*: its run or the refusal (stored); other errors raise."""
    try:
        return request()
    except service.Refused as exc:
        return _refused(exc)


@router.post(
    "/queries/{query_id}/explain",
    operation_id="request_explain",
    response_model=ExplainRunOut,
    status_code=status.HTTP_202_ACCEPTED,
    responses=REQUEST_ERRORS,
)
def request_explain(
    query_id: str,
    instance: InstanceName,
    session: SessionDep,
    settings: SettingsDep,
    principal: DiagnosePrincipal,
) -> ExplainRunOut | JSONResponse:
    """Queue an EXPLAIN of the query's latest real example on the instance (never executed).

    Needs the `diagnose` scope; the run is audited with who asked.
    """
    return _queued(
        lambda: service.request_explain(
            session=session,
            settings=settings,
            query_id=query_id,
            instance_name=instance,
            actor=Actor(principal.name, principal.token_id),
        )
    )


@router.get("/queries/{query_id}/explain", operation_id="get_explain", responses=NOT_FOUND)
def get_explain(
    query_id: str, instance: InstanceName, session: SessionDep, _principal: ReadPrincipal
) -> ExplainRunOut:
    """The latest EXPLAIN of the query on the instance, with its findings and when it ran."""
    return service.latest_explain(session=session, query_id=query_id, instance_name=instance)


@router.post(
    "/queries/{query_id}/profile",
    operation_id="request_profile",
    response_model=ProfileRunOut,
    status_code=status.HTTP_202_ACCEPTED,
    responses=REQUEST_ERRORS,
)
def request_profile(
    query_id: str,
    instance: InstanceName,
    session: SessionDep,
    settings: SettingsDep,
    principal: DiagnosePrincipal,
) -> ProfileRunOut | JSONResponse:
    """Queue a profile (SELECTs only) on the instance's execution target; 409 without one.

    Needs the `diagnose` scope; the run is audited with who asked.
    """
    return _queued(
        lambda: service.request_profile(
            session=session,
            settings=settings,
            query_id=query_id,
            instance_name=instance,
            actor=Actor(principal.name, principal.token_id),
        )
    )


@router.get("/queries/{query_id}/profile", operation_id="get_profile", responses=NOT_FOUND)
def get_profile(
    query_id: str, instance: InstanceName, session: SessionDep, _principal: ReadPrincipal
) -> ProfileRunOut:
    """The latest ranked profile of the query on the instance and when it ran."""
    return service.latest_profile(session=session, query_id=query_id, instance_name=instance)
