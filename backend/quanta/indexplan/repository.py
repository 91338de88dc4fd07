"""Statements on index plans."""

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from quanta.indexplan.models import IndexPlan


def plans_of(session: Session, instance_id: int) -> list[IndexPlan]:
    """An instance's plans, heaviest estimated read cost first, then by table."""
    return list(
        session.scalars(
            select(IndexPlan)
            .where(IndexPlan.instance_id == instance_id)
            .order_by(IndexPlan.rows_before_per_s.desc(), IndexPlan.table_name)
        )
    )


def by_table(session: Session, instance_id: int) -> dict[str, IndexPlan]:
    """An instance's plans by table name."""
    return {row.table_name: row for row in plans_of(session, instance_id)}


def delete(session: Session, rows: Sequence[IndexPlan]) -> None:
    """Delete these plans (their tables are no longer planned)."""
    for row in rows:
        session.delete(row)
