"""Statements on table snapshots."""

from collections.abc import Sequence

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from quanta.tables.models import TableSnapshot


def find(session: Session, instance_id: int, table_name: str) -> TableSnapshot | None:
    """The snapshot of one table of an instance, if one was ever taken."""
    return session.scalars(
        select(TableSnapshot).where(
            TableSnapshot.instance_id == instance_id, TableSnapshot.table_name == table_name
        )
    ).one_or_none()


def find_many(
    session: Session, instance_id: int, table_names: Sequence[str]
) -> dict[str, TableSnapshot]:
    """The snapshots of these tables of an instance, by table name (absent: never taken)."""
    if not table_names:
        return {}
    rows = session.scalars(
        select(TableSnapshot).where(
            TableSnapshot.instance_id == instance_id,
            TableSnapshot.table_name.in_(sorted(set(table_names))),
        )
    )
    return {row.table_name: row for row in rows}


def lock_many(
    session: Session, instance_id: int, table_names: Sequence[str]
) -> list[TableSnapshot]:
    """The snapshots of these tables of an instance, locked for update until the transaction
    ends (in name order, so that two writers never wait on each other crosswise)."""
    if not table_names:
        return []
    stmt = (
        select(TableSnapshot)
        .where(
            TableSnapshot.instance_id == instance_id,
            TableSnapshot.table_name.in_(sorted(set(table_names))),
        )
        .order_by(TableSnapshot.table_name)
        .with_for_update()
    )
    return list(session.scalars(stmt))


def all_of(session: Session, instance_id: int) -> dict[str, TableSnapshot]:
    """Every table snapshot of an instance, by table name."""
    rows = session.scalars(select(TableSnapshot).where(TableSnapshot.instance_id == instance_id))
    return {row.table_name: row for row in rows}


def named(session: Session, names: Sequence[str]) -> list[TableSnapshot]:
    """Snapshots of these tables on every instance: ``db.table`` exactly, or ``table`` in
    any database."""
    wanted = {name.lower() for name in names}
    if not wanted:
        return []
    qualified = [name for name in wanted if "." in name]
    # Table names never hold '%' or '_' wildcards here unescaped: match the suffix exactly.
    suffixes = [name for name in wanted if "." not in name]
    stmt = select(TableSnapshot).where(
        or_(
            TableSnapshot.table_name.in_(qualified),
            *(TableSnapshot.table_name.endswith(f".{name}", autoescape=True) for name in suffixes),
        )
    )
    return list(session.scalars(stmt.order_by(TableSnapshot.table_name, TableSnapshot.instance_id)))
