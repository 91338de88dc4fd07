"""HTTP endpoints of schema snapshots."""

from fastapi import APIRouter

from quanta.deps import AUTH_RESPONSES, ErrorDetail, ReadPrincipal, SessionDep
from quanta.tables import service
from quanta.tables.schemas import QueryTablesOut, TableSnapshotOut

router = APIRouter(tags=["tables"], responses=AUTH_RESPONSES)


@router.get(
    "/instances/{instance_id}/tables/{table}",
    operation_id="get_table_snapshot",
    responses={
        400: {"model": ErrorDetail, "description": "The name is not database.table."},
        404: {"model": ErrorDetail, "description": "No such instance, or never snapshotted."},
    },
)
def get_table_snapshot(
    instance_id: int, table: str, session: SessionDep, _principal: ReadPrincipal
) -> TableSnapshotOut:
    """The latest schema snapshot of `db.table` (columns, keys, indexes, sizes) and its time."""
    return service.table_snapshot(session=session, instance_id=instance_id, table=table)


@router.get(
    "/queries/{query_id}/tables",
    operation_id="list_query_tables",
    responses={404: {"model": ErrorDetail, "description": "No query with this query_id."}},
)
def list_query_tables(
    query_id: str, session: SessionDep, _principal: ReadPrincipal
) -> QueryTablesOut:
    """The tables a query references, each with its latest schema snapshot per instance."""
    return service.query_tables(session=session, query_id=query_id)
