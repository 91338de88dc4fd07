"""HTTP endpoint of the audit log (admin)."""

from typing import Annotated

from fastapi import APIRouter, Query

from quanta.audit import service
from quanta.audit.schemas import AuditEntryOut
from quanta.deps import AUTH_RESPONSES, AdminPrincipal, SessionDep, SettingsDep

router = APIRouter(tags=["audit"], responses=AUTH_RESPONSES)


@router.get("/audit", operation_id="list_audit_entries")
def list_audit_entries(
    session: SessionDep,
    settings: SettingsDep,
    _principal: AdminPrincipal,
    limit: Annotated[
        int, Query(ge=1, description="Entries per page (capped by the server).")
    ] = 100,
    before_id: Annotated[
        int | None, Query(ge=1, description="Only entries older than this id (next page).")
    ] = None,
) -> list[AuditEntryOut]:
    """Admin actions, newest first: token and user changes, instance, channel and purges."""
    rows = service.list_entries(
        session=session, limit=min(limit, settings.audit_max_rows), before_id=before_id
    )
    return [AuditEntryOut.model_validate(row, from_attributes=True) for row in rows]
