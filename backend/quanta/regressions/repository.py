"""SQL statements of the regressions domain."""

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from quanta.instances.models import Instance
from quanta.regressions.models import Regression, RegressionStatus

UNRESOLVED = (RegressionStatus.PENDING.value, RegressionStatus.OPEN.value)


def unresolved(session: Session, instance_id: int) -> list[Regression]:
    """The instance's pending and open regressions, oldest first."""
    stmt = (
        select(Regression)
        .where(Regression.instance_id == instance_id, Regression.status.in_(UNRESOLVED))
        .order_by(Regression.id)
    )
    return list(session.scalars(stmt))


def add(session: Session, row: Regression) -> bool:
    """Insert a regression; False when a concurrent check stored the same one first."""
    try:
        with session.begin_nested():
            session.add(row)
    except IntegrityError:
        return False
    return True


def get(session: Session, regression_id: int) -> Regression | None:
    """One regression."""
    return session.get(Regression, regression_id)


def listed(
    session: Session,
    *,
    instance: str | None,
    status: Sequence[str],
    query_id: str | None,
    since: datetime | None,
    limit: int,
) -> list[tuple[Regression, str]]:
    """Regressions with their instance's name, newest first, filtered."""
    stmt = (
        select(Regression, Instance.name)
        .join(Instance, Instance.id == Regression.instance_id)
        .order_by(Regression.detected_at.desc(), Regression.id.desc())
        .limit(limit)
    )
    if instance is not None:
        stmt = stmt.where(Instance.name == instance)
    if status:
        stmt = stmt.where(Regression.status.in_(status))
    if query_id is not None:
        stmt = stmt.where(Regression.query_id == query_id)
    if since is not None:
        stmt = stmt.where(Regression.detected_at >= since)
    return [(row, name) for row, name in session.execute(stmt)]
