"""Statements on table snapshots."""

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from quanta.instances.models import Instance
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


def all_of(session: Session, instance_id: int) -> dict[str, TableSnapshot]:
    """Every table snapshot of an instance, by table name."""
    rows = session.scalars(select(TableSnapshot).where(TableSnapshot.instance_id == instance_id))
    return {row.table_name: row for row in rows}


def connected_instances(session: Session) -> list[Instance]:
    """Instances a worker can reach (a DSN is registered), by id.

    Read here rather than through the instances domain because that domain has no listing
    use case yet; it is one plain filter on the model.
    """
    return list(
        session.scalars(
            select(Instance).where(Instance.dsn_encrypted.is_not(None)).order_by(Instance.id)
        )
    )
