"""Retention and time partitions of the bucket tables.

On PostgreSQL each bucket table is partitioned by range of bucket_start (quanta.queries.models),
with a DEFAULT partition for anything outside the created ranges (old imports, clock skew);
``maintain_partitions`` creates them ahead of time and ``apply_retention`` drops the expired
ones and deletes expired rows everywhere (SQLite has no partitions: rows only)."""

import logging
from datetime import UTC, datetime, timedelta

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from quanta.analysis.resolution import (
    COARSE_TO_FINE,
    Resolution,
    floor_to,
)
from quanta.core.config import Settings
from quanta.core.upsert import is_postgresql
from quanta.queries import repository
from quanta.queries.models import (
    BUCKET_MODELS,
    QUERY_TOTALS_MODELS,
    TOTALS_MODELS,
)
from quanta.queries.window import retained_since

log = logging.getLogger(__name__)

# PostgreSQL partitions: the time each one spans, and how far ahead of now they are created.
PARTITION_AHEAD = {
    Resolution.MINUTE: timedelta(days=7),
    Resolution.HOUR: timedelta(days=62),
    Resolution.DAY: timedelta(days=366),
}


def apply_retention(*, session: Session, settings: Settings, now: datetime) -> dict[str, int]:
    """Delete buckets and examples older than their resolution's retention; drop partitions.

    Returns the rows deleted per resolution (dropped partitions not counted).
    """
    kept = retained_since(settings=settings, now=now)
    deleted: dict[str, int] = {}
    for resolution in COARSE_TO_FINE:
        model = BUCKET_MODELS[resolution]
        cutoff = kept[resolution]
        if is_postgresql(session):
            for name in partition_names(session, model.__tablename__):
                bounds = _partition_bounds(name, model.__tablename__, resolution)
                # Minutes whose roll-up is pending stay (see rollup): then rows, not the
                # partition, are deleted.
                if bounds is None or bounds[1] > cutoff:
                    continue
                if not repository.pending_between(session, *bounds):
                    drop_partition(session, name)
        count = repository.delete_buckets_before(session, model, cutoff)
        count += repository.delete_buckets_before(session, TOTALS_MODELS[resolution], cutoff)
        if resolution in QUERY_TOTALS_MODELS:
            totals = QUERY_TOTALS_MODELS[resolution]
            count += repository.delete_buckets_before(session, totals, cutoff)
        count += repository.delete_examples_before(session, resolution, cutoff)
        deleted[resolution.value] = count
    return deleted


def maintain_partitions(*, session: Session, settings: Settings, now: datetime) -> list[str]:
    """On PostgreSQL, create the time partitions from the current period to ahead of now.

    Returns the partitions created (or already there).
    Rows outside every partition go to the DEFAULT one, so ingest never depends on this.
    """
    if not is_postgresql(session):
        return []
    created: list[str] = []
    for resolution in COARSE_TO_FINE:
        parent = BUCKET_MODELS[resolution].__tablename__
        create_partition(session, parent, f"{parent}_default", None, None)
        # From the current period on: older rows, if any, are already in the DEFAULT partition.
        lower = _period_start(now, resolution)
        horizon = now + PARTITION_AHEAD[resolution]
        while lower < horizon:
            upper = _next_period(lower, resolution)
            name = _partition_name(parent, lower)
            if create_partition(session, parent, name, lower, upper):
                created.append(name)
            else:
                log.warning("partition %s not created: the default partition has its rows", name)
            lower = upper
    return created


def _period_start(ts: datetime, resolution: Resolution) -> datetime:
    day = floor_to(ts, Resolution.DAY)
    if resolution is Resolution.MINUTE:
        return day
    if resolution is Resolution.HOUR:
        return day.replace(day=1)
    return day.replace(month=1, day=1)


def _next_period(start: datetime, resolution: Resolution) -> datetime:
    if resolution is Resolution.MINUTE:
        return start + timedelta(days=1)
    if resolution is Resolution.HOUR:
        return (start.replace(day=28) + timedelta(days=4)).replace(day=1)
    return start.replace(year=start.year + 1)


def _partition_name(parent: str, lower: datetime) -> str:
    return f"{parent}_p{lower:%Y%m%d}"


def _partition_bounds(
    name: str, parent: str, resolution: Resolution
) -> tuple[datetime, datetime] | None:
    suffix = name.removeprefix(f"{parent}_p")
    if suffix == name or not suffix.isdigit():
        return None  # the DEFAULT partition: never dropped, only deleted from
    lower = datetime.strptime(suffix, "%Y%m%d").replace(tzinfo=UTC)
    return lower, _next_period(lower, resolution)


def partition_names(session: Session, parent: str) -> list[str]:
    """The partitions of ``parent``."""
    stmt = text(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
        "JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = :parent ORDER BY c.relname"
    )
    return list(session.scalars(stmt, {"parent": parent}))


def create_partition(
    session: Session, parent: str, name: str, lower: datetime | None, upper: datetime | None
) -> bool:
    """Create a range partition (both bounds None: the DEFAULT one); False if it cannot be.

    Creation fails when the DEFAULT partition already holds rows of that range: those rows
    then stay where they are, which is correct, only less tidy.
    """
    if lower is None or upper is None:
        bounds = "DEFAULT"
    else:
        bounds = f"FOR VALUES FROM ('{_pg_timestamp(lower)}') TO ('{_pg_timestamp(upper)}')"
    try:
        with session.begin_nested():
            session.execute(
                text(f'CREATE TABLE IF NOT EXISTS "{name}" PARTITION OF "{parent}" {bounds}')
            )
    except DBAPIError:
        return False
    return True


def drop_partition(session: Session, name: str) -> None:
    """Drop one partition and its rows."""
    session.execute(text(f'DROP TABLE IF EXISTS "{name}"'))


def _pg_timestamp(value: datetime) -> str:
    # Bucket starts are stored as naive UTC; names and bounds are generated, never user input.
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
