"""Use cases of the audit log: record an admin action or a diagnostics run, page through it."""

from collections.abc import Collection, Mapping
from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class Actor:
    """Who made something happen: a user or token by name (and the token's id), or beat."""

    name: str
    token_id: int | None = None


BEAT = Actor("beat")


def record_run(
    *,
    session: Session,
    actor: Actor | None,
    what: str,
    target: dict[str, Any],
    where: list[dict[str, str]],
    outcome: str,
    detail: dict[str, Any] | None = None,
) -> AuditEntry:
    """Record one diagnostics run (EXPLAIN, profile, suggestion) when it ends.

    Args:
        actor: Who requested it; None is beat's automatic run.
        what: ``explain``, ``profile``, ``suggestion`` or ``index_plan``; the action is
            ``run <what>``.
        target: The instance and query (ids and names) and the run's id.
        where: The servers it reached: ``{"role": "monitored server" or "execution
            target" or "sandbox", "address": "host:port"}``.
        outcome: ``ok``, ``failed`` or ``refused``; ``detail`` adds the reason.
    """
    who = actor or BEAT
    return record(
        session=session,
        actor=who.name,
        actor_token_id=who.token_id,
        action=f"run {what}",
        target=target,
        detail={"where": where, "outcome": outcome, **(detail or {})},
    )


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
