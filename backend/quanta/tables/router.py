"""HTTP endpoints of schema snapshots."""

from fastapi import APIRouter, HTTPException, status

from quanta.deps import AUTH_RESPONSES, ErrorDetail, ReadPrincipal, SessionDep
from quanta.tables import service
from quanta.tables.schemas import TableSnapshotOut

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
    try:
        return service.table_snapshot(session=session, instance_id=instance_id, table=table)
    except service.InvalidTableName as exc:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, str(exc)) from exc
    except (service.InstanceNotFound, service.TableNotSnapshotted) as exc:
        raise HTTPException(status.HTTP_404_NOT_FOUND, str(exc)) from exc
