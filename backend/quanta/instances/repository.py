"""Statements on instances."""

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Column, Table, delete, literal, select, update
from sqlalchemy.orm import Session

from quanta.core.db import Base
from quanta.instances.models import Instance

# The column that refers to an instance in tables without a foreign key to it.
INSTANCE_ID_COLUMN = "instance_id"


def find_by_name(session: Session, name: str) -> Instance | None:
    """The instance with this name, if registered."""
    return session.scalars(select(Instance).where(Instance.name == name)).one_or_none()


def names_by_id(session: Session) -> dict[int, str]:
    """Every instance's name by id."""
    return {row.id: row.name for row in session.execute(select(Instance.id, Instance.name))}


def labels_by_id(session: Session) -> dict[int, dict[str, str]]:
    """Every labelled instance's labels by id."""
    rows = session.execute(select(Instance.id, Instance.labels))
    return {row.id: dict(row.labels) for row in rows if row.labels}


def ids_by_name(session: Session, names: Sequence[str]) -> dict[str, int]:
    """The ids of the instances among ``names`` that exist."""
    if not names:
        return {}
    stmt = select(Instance.name, Instance.id).where(Instance.name.in_(names))
    return {row.name: row.id for row in session.execute(stmt)}


def set_primary_source_if_unset(session: Session, instance_id: int, source: str) -> None:
    """Make ``source`` the instance's primary source unless one is already set."""
    session.execute(
        update(Instance)
        .where(Instance.id == instance_id, Instance.primary_source.is_(None))
        .values(primary_source=source)
    )


def prefer_primary_source(session: Session, instance_id: int, source: str) -> None:
    """Make ``source`` the instance's primary source unless an admin pinned one."""
    session.execute(
        update(Instance)
        .where(Instance.id == instance_id, Instance.primary_source_pinned.is_(False))
        .values(primary_source=source)
    )


def list_all(session: Session) -> list[Instance]:
    """Every instance, by name."""
    return list(session.scalars(select(Instance).order_by(Instance.name)))


def list_connected(session: Session) -> list[Instance]:
    """Instances with a DSN registered, by name."""
    return list(
        session.scalars(
            select(Instance).where(Instance.dsn_encrypted.is_not(None)).order_by(Instance.name)
        )
    )


def dependent_tables() -> list[Table]:
    """Tables with a column referencing instances.id, children before parents.

    Read from the metadata rather than listed by hand, so a domain's new table is covered
    by the "instance has data" check and by purging without a change here. A reference is a
    foreign key, or an ``instance_id`` column (the metric tables have no foreign keys, see
    quanta.queries.models).
    """
    import quanta.models  # noqa: F401  (every model registered on Base.metadata)

    found = [table for table in Base.metadata.sorted_tables if _instance_columns(table)]
    return list(reversed(found))


# Rows about the instance rather than data of it: they go with it without a purge.
NOT_DATA = frozenset({"agent_sources"})


def tables_with_rows(session: Session, instance_id: int) -> list[str]:
    """Names of the tables that hold data of this instance (NOT_DATA aside)."""
    names = []
    for table in dependent_tables():
        if table.name in NOT_DATA:
            continue
        for column in _instance_columns(table):
            found = session.execute(
                select(literal(1)).select_from(table).where(column == instance_id).limit(1)
            ).first()
            if found is not None:
                names.append(table.name)
                break
    return names


def delete_with_rows(session: Session, instance: Instance) -> None:
    """Delete the instance and every row referencing it (children first)."""
    for table in dependent_tables():
        for column in _instance_columns(table):
            session.execute(delete(table).where(column == instance.id))
    session.delete(instance)


def _instance_columns(table: Table) -> list[Column[Any]]:
    instances = Instance.__table__
    columns = [fk.parent for fk in table.foreign_keys if fk.column.table is instances]
    if not columns and INSTANCE_ID_COLUMN in table.c:
        columns = [table.c[INSTANCE_ID_COLUMN]]
    return columns
