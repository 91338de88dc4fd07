"""HTTP endpoints of index suggestions."""

from typing import Annotated

from fastapi import APIRouter, Query, status

from quanta.advice import service
from quanta.advice.schemas import AdviceRequested, SuggestionList, SuggestionOut, SuggestionPatch
from quanta.audit.service import Actor
from quanta.deps import (
    AUTH_RESPONSES,
    DiagnosePrincipal,
    ErrorDetail,
    ReadPrincipal,
    SessionDep,
    SettingsDep,
)

router = APIRouter(tags=["suggestions"], responses=AUTH_RESPONSES)

NOT_FOUND: dict[int | str, dict[str, object]] = {
    404: {"model": ErrorDetail, "description": "No such query or instance."}
}


@router.get("/queries/{query_id}/suggestions", operation_id="list_suggestions", responses=NOT_FOUND)
def list_suggestions(
    query_id: str,
    session: SessionDep,
    _principal: ReadPrincipal,
    instance: Annotated[str | None, Query(description="Instance name; default all.")] = None,
    include_rejected: Annotated[
        bool, Query(description="Also those a sandbox showed not to improve the plan.")
    ] = False,
) -> SuggestionList:
    """The query's index suggestions with their status and sandbox plans."""
    return service.list_suggestions(
        session=session,
        query_id=query_id,
        instance=instance,
        include_rejected=include_rejected,
    )


@router.post(
    "/queries/{query_id}/suggestions",
    operation_id="request_suggestions",
    status_code=status.HTTP_202_ACCEPTED,
    responses={
        **NOT_FOUND,
        409: {"model": ErrorDetail, "description": "The instance has no usable DSN."},
        503: {"model": ErrorDetail, "description": "The task queue is unreachable."},
    },
)
def request_suggestions(
    query_id: str,
    session: SessionDep,
    settings: SettingsDep,
    principal: DiagnosePrincipal,
    instance: Annotated[str, Query(description="The instance to advise the query for.")],
) -> AdviceRequested:
    """Queue a fresh advice run (snapshots refreshed, sandbox check); GET for the result.

    Needs the `diagnose` scope; the sandbox run is audited with who asked.
    """
    return service.request_advice(
        session=session,
        settings=settings,
        query_id=query_id,
        instance=instance,
        actor=Actor(principal.name, principal.token_id),
    )


@router.patch(
    "/suggestions/{suggestion_id}",
    operation_id="update_suggestion",
    responses={
        404: {"model": ErrorDetail, "description": "No suggestion with this id."},
        409: {"model": ErrorDetail, "description": "The suggestion is applied."},
    },
)
def update_suggestion(
    suggestion_id: int, body: SuggestionPatch, session: SessionDep, principal: DiagnosePrincipal
) -> SuggestionOut:
    """Dismiss a suggestion, or take a dismissal back (status new).

    Needs the `diagnose` scope; a change is audited with who made it and the old and new
    status.
    """
    return service.set_status(
        session=session,
        suggestion_id=suggestion_id,
        status=body.status,
        actor=Actor(principal.name, principal.token_id),
    )
