"""Statements on object statistics."""

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from quanta.core.upsert import Combine, merge_rows
from quanta.statistics.models import STATISTICS_KEY, ObjectStatistics


def add(session: Session, rows: Sequence[dict[str, Any]], combine: Combine) -> None:
    """Add rows of deltas to the stored sums (locked merge, see quanta.core.upsert)."""
    merge_rows(session, ObjectStatistics, STATISTICS_KEY, rows, combine)


def of_kind(session: Session, instance_id: int, kind: str) -> Sequence[ObjectStatistics]:
    """Every stored row of one kind for an instance."""
    return session.scalars(
        select(ObjectStatistics).where(
            ObjectStatistics.instance_id == instance_id, ObjectStatistics.kind == kind
        )
    ).all()
