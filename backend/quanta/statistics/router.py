"""HTTP endpoints of the workload by table, index and account, and the index review."""

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from quanta.deps import AUTH_RESPONSES, ErrorDetail, ReadPrincipal, SessionDep, SettingsDep
from quanta.queries.window import TimeWindow, resolve_window
from quanta.statistics import review, workload
from quanta.statistics.schemas import IndexReviewOut, TablesOut, UsersOut

router = APIRouter(
    tags=["tables"],
    responses={
        **AUTH_RESPONSES,
        400: {"model": ErrorDetail, "description": "A bad time range."},
        404: {"model": ErrorDetail, "description": "No such instance."},
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


def _window(settings: SettingsDep, from_: FromParam = None, to: ToParam = None) -> TimeWindow:
    return resolve_window(start=from_, end=to, default_hours=settings.default_range_hours)


WindowDep = Annotated[TimeWindow, Depends(_window)]


@router.get("/instances/{instance_id}/tables", operation_id="list_table_workload")
def list_table_workload(
    instance_id: int,
    window: WindowDep,
    session: SessionDep,
    settings: SettingsDep,
    _principal: ReadPrincipal,
) -> TablesOut:
    """Per table: rows read and changed in the range (userstat or performance_schema), rates
    and shares, the query classes that name it with their load, and its snapshot's size."""
    return workload.table_workload(
        session=session, settings=settings, instance_id=instance_id, window=window
    )


@router.get("/instances/{instance_id}/users", operation_id="list_user_workload")
def list_user_workload(
    instance_id: int,
    window: WindowDep,
    session: SessionDep,
    settings: SettingsDep,
    _principal: ReadPrincipal,
) -> UsersOut:
    """Per database account: CPU and busy time, connections, rows, commands and errors from
    USER_STATISTICS where the server keeps it, and its query classes' statements and time."""
    return workload.user_workload(
        session=session, settings=settings, instance_id=instance_id, window=window
    )


@router.get("/instances/{instance_id}/index-review", operation_id="review_indexes")
def review_indexes(
    instance_id: int,
    window: WindowDep,
    session: SessionDep,
    settings: SettingsDep,
    _principal: ReadPrincipal,
) -> IndexReviewOut:
    """Duplicate, redundant, primary-key-suffix and unused indexes of the instance's
    snapshotted tables, each index's reads in the range, and the statistics' unbroken window."""
    return review.review_indexes(
        session=session, settings=settings, instance_id=instance_id, window=window
    )
