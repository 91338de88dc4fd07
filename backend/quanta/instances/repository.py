"""Statements on instances."""

from sqlalchemy import select
from sqlalchemy.orm import Session

from quanta.instances.models import Instance


def find_by_name(session: Session, name: str) -> Instance | None:
    """The instance with this name, if registered."""
    return session.scalars(select(Instance).where(Instance.name == name)).one_or_none()
