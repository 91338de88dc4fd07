"""Response bodies of the audit log."""

from datetime import datetime
from typing import Any

from pydantic import BaseModel


class AuditEntryOut(BaseModel):
    """One admin action: who, what (method and route), on which object, when."""

    id: int
    at: datetime
    actor: str
    actor_token_id: int | None
    action: str
    target: dict[str, Any]
    detail: dict[str, Any]
