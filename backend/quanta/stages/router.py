"""HTTP endpoints of the production stage profiles."""

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query

from quanta.deps import AUTH_RESPONSES, ErrorDetail, ReadPrincipal, SessionDep, SettingsDep
from quanta.queries.window import TimeWindow, resolve_window
from quanta.stages import service
from quanta.stages.schemas import QueryStagesOut, StageQueriesOut

router = APIRouter(
    tags=["queries"],
    responses={
        **AUTH_RESPONSES,
        400: {"model": ErrorDetail, "description": "A bad time range."},
        404: {"model": ErrorDetail, "description": "No such query or instance."},
    },
)

FromParam = Annotated[
    str | None,
    Query(
        alias="from",
        description="Start: ISO 8601 or relative to now (now-24h, now-7d); default 24 h ago.",
    ),
]
ToParam = Annotated[str | None, Query(description="End: ISO 8601 or relative; default now.")]
MAX_ROWS = 1000  # the overview's largest page


def _window(settings: SettingsDep, from_: FromParam = None, to: ToParam = None) -> TimeWindow:
    return resolve_window(start=from_, end=to, default_hours=settings.default_range_hours)


WindowDep = Annotated[TimeWindow, Depends(_window)]


@router.get("/queries/{query_id}/stages", operation_id="get_query_stages")
def get_query_stages(
    query_id: str,
    instance: Annotated[str, Query(description="The instance's name.")],
    window: WindowDep,
    session: SessionDep,
    settings: SettingsDep,
    _principal: ReadPrincipal,
) -> QueryStagesOut:
    """Where the query's time goes on the instance, from the executions performance_schema's
    history kept (nothing executed): stages by time with their share of the response time,
    the lost time, the waits under their stage, and how many executions were sampled of how
    many ran; when none was, ``reason`` says why."""
    return service.query_stages(
        session=session, settings=settings, query_id=query_id, instance=instance, window=window
    )


@router.get("/stages/queries", operation_id="list_stage_queries")
def list_stage_queries(
    window: WindowDep,
    session: SessionDep,
    settings: SettingsDep,
    _principal: ReadPrincipal,
    instance: Annotated[
        list[str] | None, Query(description="Instance names (repeat for several); default all.")
    ] = None,
    stage: Annotated[
        str | None, Query(max_length=128, description="Rank the queries by this stage's share.")
    ] = None,
    min_share: Annotated[
        float, Query(ge=0, le=1, description="Leave out queries under this share (0 to 1).")
    ] = 0.0,
    sort: Annotated[
        Literal["share", "time"], Query(description="By share of the query's time, or time.")
    ] = "share",
    limit: Annotated[int, Query(ge=1, le=MAX_ROWS)] = 50,
) -> StageQueriesOut:
    """The stages of every sampled execution in the range, worst first; with ``stage``, the
    queries spending the largest share of their time in it (Quanta's own left out)."""
    return service.stage_queries(
        session=session,
        settings=settings,
        instances=tuple(instance or ()),
        window=window,
        stage=stage,
        min_share=min_share,
        sort=sort,
        limit=limit,
    )
