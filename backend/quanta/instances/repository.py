"""Statements on instances."""

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from quanta.instances.models import Instance


def find_by_name(session: Session, name: str) -> Instance | None:
    """The instance with this name, if registered."""
    return session.scalars(select(Instance).where(Instance.name == name)).one_or_none()


def set_primary_source_if_unset(session: Session, instance_id: int, source: str) -> None:
    """Make ``source`` the instance's primary source unless one is already set."""
    session.execute(
        update(Instance)
        .where(Instance.id == instance_id, Instance.primary_source.is_(None))
        .values(primary_source=source)
    )
