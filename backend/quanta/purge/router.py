"""HTTP endpoint of purge: DELETE /queries/{query_id}."""

from fastapi import APIRouter, Request

from quanta.deps import AUTH_RESPONSES, AdminPrincipal, ErrorDetail, SessionDep
from quanta.purge import service
from quanta.purge.schemas import QueryPurged

# The responses of the queries router, which served this path before it had its own package.
router = APIRouter(
    tags=["queries"],
    responses={
        **AUTH_RESPONSES,
        400: {"model": ErrorDetail, "description": "A bad time range, sort key or order."},
    },
)
NOT_FOUND: dict[int | str, dict[str, object]] = {
    404: {"model": ErrorDetail, "description": "No query with this query_id."}
}


@router.delete("/queries/{query_id}", operation_id="purge_query", responses=NOT_FOUND)
def purge_query(
    query_id: str, request: Request, session: SessionDep, _principal: AdminPrincipal
) -> QueryPurged:
    """Delete every stored trace of a query: buckets, examples, catalog row, runs, advice."""
    deleted = service.purge_query(session=session, query_id=query_id)
    request.state.audit_detail = {"deleted": deleted}
    return QueryPurged(query_id=query_id, deleted=deleted)
