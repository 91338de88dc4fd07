"""Use cases of the audit log: record an admin action, page through the log."""

from collections.abc import Collection, Mapping
from typing import Any

from sqlalchemy.orm import Session

from quanta.audit import repository
from quanta.audit.models import AuditEntry


def record(
    *,
    session: Session,
    actor: str,
    action: str,
    actor_token_id: int | None = None,
    target: dict[str, Any] | None = None,
    detail: dict[str, Any] | None = None,
) -> AuditEntry:
    """Add an entry in the caller's transaction: it commits with the action or not at all."""
    entry = AuditEntry(
        actor=actor,
        actor_token_id=actor_token_id,
        action=action,
        target=target or {},
        detail=detail or {},
    )
    session.add(entry)
    session.flush()
    return entry


def list_entries(*, session: Session, limit: int, before_id: int | None = None) -> list[AuditEntry]:
    """The newest entries first; pass the last id seen as ``before_id`` for the next page."""
    return repository.newest(session, limit=limit, before_id=before_id)


def field_changes(
    before: Mapping[str, Any], after: Mapping[str, Any], *, secret: Collection[str] = ()
) -> dict[str, Any]:
    """What an update changed, for an entry's detail: ``{"field": {"old": a, "new": b}}``, and
    ``{"field": "changed"}`` for a secret field (a DSN, a webhook URL): never its value.

    >>> field_changes({"name": "a", "dsn": "x"}, {"name": "b", "dsn": "y"}, secret={"dsn"})
    {'name': {'old': 'a', 'new': 'b'}, 'dsn': 'changed'}
    """
    changes: dict[str, Any] = {}
    for field, new in after.items():
        old = before.get(field)
        if old == new:
            continue
        changes[field] = "changed" if field in secret else {"old": old, "new": new}
    return changes
