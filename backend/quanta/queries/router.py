"""HTTP endpoints of query analytics."""

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, status

from quanta.deps import AUTH_RESPONSES, ReadPrincipal, SessionDep, SettingsDep
from quanta.queries import service
from quanta.queries.schemas import TopQueries

# Bounded so one request cannot ask for the whole catalog with its sparklines.
MAX_ROWS_PER_PAGE = 1000

router = APIRouter(tags=["queries"], responses=AUTH_RESPONSES)


@router.get("/queries", operation_id="list_queries")
def list_queries(
    session: SessionDep,
    settings: SettingsDep,
    _principal: ReadPrincipal,
    from_: Annotated[
        datetime | None, Query(alias="from", description="ISO 8601 start; default 24 h ago.")
    ] = None,
    to: Annotated[datetime | None, Query(description="ISO 8601 end; default now.")] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_ROWS_PER_PAGE)] = 50,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> TopQueries:
    """The top queries of a time range by total query time, with totals and sparklines."""
    try:
        window = service.resolve_window(
            start=from_, end=to, default_hours=settings.default_range_hours
        )
    except service.InvalidRange as exc:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, str(exc)) from exc
    return service.top_queries(
        session=session,
        settings=settings,
        window=window,
        limit=limit,
        offset=offset,
        sparkline_points=settings.sparkline_points,
    )
