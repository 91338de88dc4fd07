"""Use cases around table, index and account statistics: recording the agents' deltas (sums
since first seen, buckets of time, the window they cover), retention, and what other domains
read of them (write rates, index reads)."""

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

from sqlalchemy.orm import Session

from quanta.analysis.advisor.workload import TableWrites
from quanta.analysis.resolution import Resolution, floor_to
from quanta.core.config import Settings
from quanta.core.db import utcnow
from quanta.instances.models import Instance
from quanta.instances.service import find_instance
from quanta.queries.window import retained_since
from quanta.statistics import repository
from quanta.statistics.counters import (
    COUNTS,
    GAUGE_COLUMNS,
    READ_COUNTERS,
    SECONDS,
    WRITE_COUNTERS,
    first_of,
)
from quanta.statistics.coverage import Observation, Window, advance
from quanta.statistics.models import BUCKET_KEY, StatisticsCoverage
from quanta.tables import service as tables_service

# Fields of a delta that place it rather than count something.
_NOT_COUNTERS = frozenset(
    ("origin", "schema_name", "table_name", "index_name", "user", "interval_start",
     "interval_end", "reset")
)  # fmt: skip
# Tables one stats batch asks snapshots for; the others are asked by the next batches.
SNAPSHOTS_PER_BATCH = 100


class _Delta(Protocol):
    """A row of deltas over one interval, as the ingest wire format carries it
    (quanta.ingest.schemas): described structurally, so this domain does not import ingest,
    which calls it."""

    def model_dump(self, *, exclude_none: bool = ...) -> dict[str, Any]: ...


class TableDelta(_Delta, Protocol):
    """A table's deltas (TableStatIn)."""

    @property
    def schema_name(self) -> str: ...
    @property
    def table_name(self) -> str: ...


class IndexDelta(TableDelta, Protocol):
    """An index's deltas (IndexStatIn); ``index_name`` None: reads using no index."""

    @property
    def index_name(self) -> str | None: ...


class UserDelta(_Delta, Protocol):
    """An account's deltas (UserStatIn)."""

    @property
    def user(self) -> str: ...


class ObservedInterval(Protocol):
    """The interval one poll covered, whether or not anything moved (StatsObservedIn)."""

    @property
    def origin(self) -> str: ...
    @property
    def interval_start(self) -> datetime: ...
    @property
    def interval_end(self) -> datetime: ...
    @property
    def reset(self) -> Literal["restart", "flush"] | None: ...


def record_statistics(
    *,
    session: Session,
    settings: Settings,
    instance_id: int,
    tables: Sequence[TableDelta],
    indexes: Sequence[IndexDelta],
    users: Sequence[UserDelta],
    observed: ObservedInterval | None = None,
) -> int:
    """Add a stats batch to the instance's sums, buckets and coverage, and ask for the
    schema snapshots its tables lack; returns the rows it carried."""
    rows = [_row(instance_id, "table", t.schema_name, t.table_name, "", t) for t in tables]
    rows += [
        _row(instance_id, "index", i.schema_name, i.table_name, i.index_name or "", i)
        for i in indexes
    ]
    rows += [_row(instance_id, "user", "", u.user, "", u) for u in users]
    # One row per key: a batch may carry two intervals of the same object.
    merged: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in rows:
        key = (row["kind"], row["schema_name"], row["object_name"], row["index_name"])
        merged[key] = _combine(merged[key], row) if key in merged else row
    repository.add(session, list(merged.values()), _combine)
    repository.add_buckets(session, _bucket_rows(rows))
    observation = _observation(observed, tables, indexes, users)
    if observation is not None:
        _advance_coverage(session, instance_id, observation)
    snapshot_tables(
        session=session,
        settings=settings,
        instance=find_instance(session=session, instance_id=instance_id),
        tables=sorted({(r["schema_name"], r["object_name"]) for r in rows if r["kind"] == "table"}),
    )
    return len(rows)


def snapshot_tables(
    *, session: Session, settings: Settings, instance: Instance, tables: Sequence[tuple[str, str]]
) -> list[str]:
    """Ask for the schema snapshots of the tables with statistics whose snapshot is missing or
    older than QUANTA_SCHEMA_SNAPSHOT_MAX_AGE_HOURS, when the instance has a DSN; the tables
    asked for. Through tables.service.refresh_soon (the guarded read, queued after the
    commit), the ingest path's one way to refresh; a table is asked for at most once per
    maximum age, so a table the server cannot show is not asked for at every batch."""
    if instance.dsn_encrypted is None or not tables:
        return []
    now = utcnow()
    stale = set(
        tables_service.stale_tables(
            session=session,
            settings=settings,
            instance_id=instance.id,
            tables=[f"{schema}.{table}" for schema, table in tables],
            now=now,
        )
    )
    retry_after = now - timedelta(hours=settings.schema_snapshot_max_age_hours)
    wanted = repository.not_requested_since(
        session,
        instance.id,
        [(schema, table) for schema, table in tables if f"{schema}.{table}".lower() in stale],
        retry_after,
        SNAPSHOTS_PER_BATCH,
    )
    if not wanted:
        return []
    names = sorted({f"{schema}.{table}".lower() for schema, table in wanted})
    tables_service.refresh_soon(
        session=session, settings=settings, instance=instance, tables=names, first_snapshots=True
    )
    repository.mark_snapshot_requested(session, instance.id, wanted, now)
    return names


def _observation(
    observed: ObservedInterval | None,
    tables: Sequence[TableDelta],
    indexes: Sequence[IndexDelta],
    users: Sequence[UserDelta],
) -> Observation | None:
    """The interval the batch covers: the agent's word, or (agents that do not send it) the
    span of its rows, whose idle intervals then look like gaps, which errs on caution."""
    if observed is not None:
        return Observation(
            observed.origin, observed.interval_start, observed.interval_end, observed.reset
        )
    fields = [row.model_dump(exclude_none=True) for row in (*tables, *indexes)]
    if not fields:
        return None
    return Observation(
        str(fields[0]["origin"]),
        min(f["interval_start"] for f in fields),
        max(f["interval_end"] for f in fields),
    )


def _advance_coverage(session: Session, instance_id: int, observation: Observation) -> None:
    stored = repository.coverage(session, instance_id, lock=True)
    before = coverage_window(stored)
    after = advance(before, observation)
    if after == before:
        return
    if stored is None:
        stored = StatisticsCoverage(instance_id=instance_id)
        session.add(stored)
    stored.origin, stored.first_seen = after.origin, after.first_seen
    stored.since, stored.until = after.since, after.until
    stored.broken_at, stored.break_reason = after.broken_at, after.break_reason
    session.flush()


def coverage_window(stored: StatisticsCoverage | None) -> Window | None:
    """The stored coverage as a coverage.Window (None: no statistics yet)."""
    if stored is None:
        return None
    return Window(
        stored.origin, stored.first_seen, stored.since, stored.until, stored.broken_at,
        stored.break_reason,
    )  # fmt: skip


def instance_coverage(*, session: Session, instance_id: int) -> Window | None:
    """How long the instance's statistics cover without a break (None: none received)."""
    return coverage_window(repository.coverage(session, instance_id))


def _bucket_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each delta in the minute, hour and day bucket of its interval's midpoint."""
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in rows:
        midpoint = row["since"] + (row["until"] - row["since"]) / 2
        for resolution in Resolution:
            bucket = {
                "instance_id": row["instance_id"],
                "resolution": resolution.value,
                "bucket_start": floor_to(midpoint, resolution),
                "kind": row["kind"],
                "schema_name": row["schema_name"],
                "object_name": row["object_name"],
                "index_name": row["index_name"],
                **bucket_counters(row["counters"]),
            }
            key = tuple(bucket[name] for name in BUCKET_KEY)
            out[key] = repository.combine_bucket(out[key], bucket) if key in out else bucket
    return list(out.values())


def bucket_counters(counters: Mapping[str, Any]) -> dict[str, Any]:
    """A delta's counters as a bucket's columns: every column present, NULL where the
    source gave nothing; gauges under their ``_max`` column.

    Example:
        >>> row = bucket_counters({"rows_read": 4, "concurrent_connections": 2})
        >>> (row["rows_read"], row["rows_sent"], row["concurrent_connections_max"])
        (4, None, 2)
    """
    out: dict[str, Any] = {name: counters.get(name) for name in (*COUNTS, *SECONDS)}
    for gauge, column in GAUGE_COLUMNS.items():
        out[column] = counters.get(gauge)
    return out


def apply_retention(*, session: Session, settings: Settings, now: datetime) -> int:
    """Delete the buckets older than the metric store keeps their resolution; how many."""
    kept = retained_since(settings=settings, now=now)
    return sum(repository.delete_buckets_before(session, r, before) for r, before in kept.items())


def index_reads(*, session: Session, instance_id: int) -> dict[str, dict[str, int]]:
    """Reads per index name since first seen, by ``db.table`` (lower case).

    Only indexes the agent reported appear; an index of a reported table that is missing
    had no reads (userstat and performance_schema list only indexes that were used, or
    list them with zero).
    """
    usage: dict[str, dict[str, int]] = {}
    for row in repository.of_kind(session, instance_id, "index"):
        if not row.index_name:
            continue
        table = f"{row.schema_name}.{row.object_name}".lower()
        usage.setdefault(table, {})[row.index_name] = int(
            first_of(row.counters, READ_COUNTERS) or 0
        )
    return usage


def table_write_rates(*, session: Session, instance_id: int) -> dict[str, TableWrites]:
    """Rows inserted, updated and deleted per second, by ``db.table`` (lower case), over the
    period the agent's table statistics cover.

    performance_schema's table I/O counts each operation (count_insert, count_update,
    count_delete); userstat has only rows_changed, which is counted as inserted: a change of
    unknown kind is taken as one that maintains every index (an insert or delete does, an
    update only the indexes with a changed column), so the write cost is not understated.
    Tables without statistics are absent.
    """
    rates: dict[str, TableWrites] = {}
    for row in repository.of_kind(session, instance_id, "table"):
        seconds = (row.until - row.since).total_seconds()
        if seconds <= 0:
            continue
        counters = row.counters
        table = f"{row.schema_name}.{row.object_name}".lower()
        if any(counters.get(k) is not None for k in WRITE_COUNTERS):
            rates[table] = TableWrites(
                table,
                inserted_per_s=float(counters.get("count_insert") or 0) / seconds,
                updated_per_s=float(counters.get("count_update") or 0) / seconds,
                deleted_per_s=float(counters.get("count_delete") or 0) / seconds,
            )
        elif counters.get("rows_changed") is not None:
            rates[table] = TableWrites(
                table, inserted_per_s=float(counters["rows_changed"]) / seconds
            )
    return rates


def _row(
    instance_id: int, kind: str, schema: str, name: str, index: str, delta: _Delta
) -> dict[str, Any]:
    fields = delta.model_dump(exclude_none=True)
    counters = {k: v for k, v in fields.items() if k not in _NOT_COUNTERS}
    end = fields["interval_end"]
    read = kind != "user" and (first_of(counters, READ_COUNTERS) or 0) > 0
    return {
        "instance_id": instance_id,
        "kind": kind,
        "schema_name": schema,
        "object_name": name,
        "index_name": index,
        "since": fields["interval_start"],
        "until": end,
        "resets": int(fields.get("reset", False)),
        "counters": counters,
        "reset_at": end if fields.get("reset") else None,
        "last_read_at": end if read else None,
        "snapshot_requested_at": None,
    }


def _combine(stored: Mapping[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    counters = dict(stored["counters"])
    for name, value in new["counters"].items():
        counters[name] = counters.get(name, 0) + value
    return {
        **new,
        "since": min(stored["since"], new["since"]),
        "until": max(stored["until"], new["until"]),
        "resets": stored["resets"] + new["resets"],
        "counters": counters,
        "reset_at": _latest(stored["reset_at"], new["reset_at"]),
        "last_read_at": _latest(stored["last_read_at"], new["last_read_at"]),
        "snapshot_requested_at": stored["snapshot_requested_at"],
    }


def _latest(a: datetime | None, b: datetime | None) -> datetime | None:
    return b if a is None else a if b is None else max(a, b)
