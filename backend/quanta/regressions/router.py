"""HTTP endpoints of regressions."""

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query

from quanta.deps import AUTH_RESPONSES, ErrorDetail, ReadPrincipal, SessionDep
from quanta.regressions import service
from quanta.regressions.schemas import RegressionOut, RegressionsOut, RegressionStatusName

router = APIRouter(tags=["regressions"], responses=AUTH_RESPONSES)


@router.get("/regressions", operation_id="list_regressions")
def list_regressions(
    session: SessionDep,
    _principal: ReadPrincipal,
    instance: Annotated[str | None, Query(max_length=200)] = None,
    status: Annotated[list[RegressionStatusName] | None, Query()] = None,
    query_id: Annotated[str | None, Query(max_length=16)] = None,
    since: Annotated[datetime | None, Query(description="Found at or after this time.")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> RegressionsOut:
    """Regressions found (open and resolved), newest first: by instance, status, query."""
    return service.list_regressions(
        session=session,
        instance=instance,
        status=list(status or []),
        query_id=query_id,
        since=since,
        limit=limit,
    )


@router.get(
    "/regressions/{regression_id}",
    operation_id="get_regression",
    responses={404: {"model": ErrorDetail, "description": "No regression with this id."}},
)
def get_regression(
    regression_id: int, session: SessionDep, _principal: ReadPrincipal
) -> RegressionOut:
    """One regression with its evidence and likely cause."""
    return service.get_regression(session=session, regression_id=regression_id)
