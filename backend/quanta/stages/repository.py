"""Statements of the stage profile tables."""

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Select, delete, func, insert, select
from sqlalchemy.orm import Session

from quanta.analysis.resolution import Resolution, Segment
from quanta.core.upsert import merge_rows
from quanta.stages.models import STAGE_ONLY, StageCollection, StageTable

Row = dict[str, Any]


def add_rows(
    session: Session, table: StageTable, rows_by_resolution: Mapping[Resolution, list[Row]]
) -> None:
    """Append the minute rows and merge the hour and day rows into the stored ones (minute
    -> hour -> day, each in key order: the lock order of every writer)."""
    for resolution in (Resolution.MINUTE, Resolution.HOUR, Resolution.DAY):
        rows = rows_by_resolution.get(resolution, [])
        if not rows:
            continue
        model = table.models[resolution]
        if resolution == Resolution.MINUTE:
            session.execute(insert(model.__table__), rows)
        else:
            merge_rows(session, model, table.key, rows, _summed(table.key), metrics=True)


def _summed(key: Sequence[str]) -> Any:
    """The merge of a stored row and a new one of the same key: every value adds up."""

    def combine(stored: Mapping[Any, Any], new: Row) -> Row:
        return {name: value if name in key else stored[name] + value for name, value in new.items()}

    return combine


def sample_sums(
    session: Session,
    table: StageTable,
    segments: Sequence[Segment],
    *,
    instance_ids: Collection[int] | None,
    query_id: str | None = None,
) -> list[Row]:
    """The samples summed per query over the segments' buckets (of these instances; None:
    all)."""
    return _summed_rows(
        session,
        table,
        segments,
        ("query_id",),
        ("executions_sampled", "executions_total", "response_sum", "waits_sampled"),
        instance_ids=instance_ids,
        query_id=query_id,
    )


def time_sums(
    session: Session,
    table: StageTable,
    segments: Sequence[Segment],
    *,
    instance_ids: Collection[int] | None,
    query_id: str | None = None,
    stage: str | None = None,
    stages_only: bool = False,
) -> list[Row]:
    """Stage (and wait) times summed per query, stage and wait event over the segments."""
    return _summed_rows(
        session,
        table,
        segments,
        ("query_id", "stage", "wait_event"),
        ("time_sum", "count"),
        instance_ids=instance_ids,
        query_id=query_id,
        stage=stage,
        stages_only=stages_only,
    )


def _summed_rows(
    session: Session,
    table: StageTable,
    segments: Sequence[Segment],
    group: Sequence[str],
    sums: Sequence[str],
    *,
    instance_ids: Collection[int] | None,
    query_id: str | None = None,
    stage: str | None = None,
    stages_only: bool = False,
) -> list[Row]:
    """``sums`` per ``group`` over the segments (a resolution and range each), added up in
    Python across the segments (a read has at most five)."""
    totals: dict[tuple[Any, ...], Row] = {}
    for segment in segments:
        model = table.models[segment.resolution]
        columns = model.__table__.c
        statement: Select[Any] = (
            select(
                *(columns[name] for name in group), *(func.sum(columns[n]).label(n) for n in sums)
            )
            .where(
                columns.bucket_start >= segment.start,
                columns.bucket_start < segment.end,
            )
            .group_by(*(columns[name] for name in group))
        )
        if instance_ids is not None:
            statement = statement.where(columns.instance_id.in_(instance_ids))
        if query_id is not None:
            statement = statement.where(columns.query_id == query_id)
        if stage is not None:
            statement = statement.where(columns.stage == stage)
        if stages_only:
            statement = statement.where(columns.wait_event == STAGE_ONLY)
        for row in session.execute(statement).mappings():
            key = tuple(row[name] for name in group)
            known = totals.get(key)
            if known is None:
                totals[key] = dict(row)
            else:
                for name in sums:
                    known[name] += row[name]
    return list(totals.values())


def delete_before(session: Session, model: Any, cutoff: datetime) -> int:
    """Delete a table's rows older than ``cutoff``; how many."""
    table = model.__table__
    result = session.execute(delete(table).where(table.c.bucket_start < cutoff))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


def save_collection(session: Session, row: Row) -> None:
    """Store what an instance's agent said of its consumers (the latest report wins)."""
    merge_rows(session, StageCollection, ("instance_id",), [row], lambda stored, new: new)


def collections(session: Session, instance_ids: Collection[int]) -> dict[int, StageCollection]:
    """The latest consumer reports of these instances."""
    found = session.scalars(
        select(StageCollection).where(StageCollection.instance_id.in_(instance_ids))
    )
    return {row.instance_id: row for row in found}
