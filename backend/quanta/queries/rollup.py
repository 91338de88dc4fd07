"""The roll-up: hours, days and totals summed from the minute rows ingest appended.

Ingest writes each bucket once, as a minute row (quanta.queries.writes); each write leaves a
pending entry per hour it touched (``RollupPending``), whose id its rows carry. Beat's
``rollup-store`` job takes the due entries (their hour has ended, ``rollup_grace_seconds``
ago), adds their minute rows into every table rolled up from them, and deletes the entries,
all in one transaction: a minute row counts in the rolled-up tables exactly when its entry is
gone, so a roll-up that fails or is killed leaves nothing half done, and running it again
rolls up nothing twice. Reads add the minute rows of entries still pending to the rolled-up
rows (quanta.queries.repository), so answers are exact at every moment. Minutes that arrive
after their hour was rolled up (an import a week late) come with entries of their own and
are added to the stored hour and day rows the same way.

The tables rolled up are data (``MINUTE_TABLES``): each append-only minute table with the
tables summed from it, each from the finest one at hand (a day from the hours just summed,
not from the minutes). Another table of minute data joins by adding an entry, with its own
rows' merge; the metric tables share one merge by column name (counts and sums add up,
``*_min`` and ``*_max`` keep the extreme, histograms merge).
"""

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

from sqlalchemy import BigInteger, Table, and_, cast, delete, func, insert, or_, select, tuple_
from sqlalchemy.orm import Session, aliased

from quanta.analysis.histogram import merge_stored
from quanta.analysis.resolution import Resolution, floor_to
from quanta.core.db import floor_day, floor_hour
from quanta.core.upsert import (
    HISTOGRAM,
    chunks,
    is_postgresql,
    key_getter,
    merge_rows,
)
from quanta.queries.models import (
    BUCKET_KEY,
    QUERY_TOTALS_KEY,
    TOTALS_KEY,
    InstanceTotalsDay,
    InstanceTotalsHour,
    InstanceTotalsMinute,
    QueryBucketDay,
    QueryBucketHour,
    QueryBucketMinute,
    QueryExample,
    QueryExampleMinute,
    QueryTotalsDay,
    QueryTotalsHour,
    RollupPending,
)

Row = dict[str, Any]
# Rows of one key merged into one (the rows are deltas of the same target row).
MergeRows = Callable[[Sequence[Row], Table, random.Random], Row]
# A stored row and a delta of it merged (SQLite's path of merge_rows; PostgreSQL merges
# metric rows in SQL).
Combine = Callable[[Mapping[str, Any], Row, random.Random], Row]


@dataclass(frozen=True, eq=False)  # one object per table rolled up: hashed by identity
class Rolled:
    """A table rolled up from a minute table, at ``resolution``, keyed by ``key``."""

    model: Any
    resolution: Resolution
    key: tuple[str, ...]
    # What its rows are summed from: None, the minute rows; else the rows just rolled up for
    # another table, finer and with every column of this key (fewer rows to sum).
    source: "Rolled | None" = None
    # Columns of the same value in every row (the resolution of the examples' table).
    fixed: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MinuteTable:
    """An append-only minute table and the tables rolled up from it."""

    model: Any
    rolled: tuple[Rolled, ...]
    merge: MergeRows
    combine: Combine
    metrics: bool  # merge_rows' metric mode: PostgreSQL merges the stored rows in SQL
    # Else the same merge in SQL for PostgreSQL, by column (see core.upsert.merge_rows).
    merged_sql: Mapping[str, str] | None = None


def merge_metric_rows(rows: Sequence[Row], table: Table, draw: random.Random) -> Row:
    """Metric rows of one key summed into one: counts and sums add up, ``*_min`` and
    ``*_max`` keep the least and greatest, histograms merge; NULL (the source does not give
    the metric) and x give x."""
    return dict(rows[0]) if len(rows) == 1 else _merged_metrics(rows, rows[0].keys())


def combine_metric_rows(stored: Mapping[str, Any], new: Row, draw: random.Random) -> Row:
    """A stored metric row and a delta of it merged (see :func:`merge_metric_rows`)."""
    return _merged_metrics([{name: stored[name] for name in new}, new], new.keys())


# Columns that key a row (equal in every row of a group).
_KEYS = frozenset({*BUCKET_KEY, "resolution"})


def _merged_metrics(rows: Sequence[Mapping[str, Any]], names: Iterable[str]) -> Row:
    out: Row = {}
    for name in names:
        known = [row[name] for row in rows if row[name] is not None]
        if name in _KEYS or not known:
            out[name] = rows[0][name]
        elif name == HISTOGRAM:
            out[name] = merge_stored(*known) if len(known) > 1 else known[0]
        elif name.endswith("_min"):
            out[name] = min(known)
        elif name.endswith("_max"):
            out[name] = max(known)
        else:
            out[name] = sum(known)
    return out


_EXAMPLE_FIELDS = ("text", "truncated", "literals", "query_time", "ts", "schema")


def merge_example_rows(rows: Sequence[Row], table: Table, draw: random.Random) -> Row:
    """Example rows of one key merged: the slowest statement of all, and a sampled one drawn
    uniformly over every statement they saw (each row's weighs its ``seen``)."""
    out = dict(rows[0])
    for row in rows[1:]:
        out = combine_example_rows(out, row, draw)
    return out


def combine_example_rows(stored: Mapping[str, Any], new: Row, draw: random.Random) -> Row:
    """A stored example row and a new one for the same key merged (reservoir: the new sample
    replaces the stored one with probability new/(stored + new))."""
    out = dict(new)
    if stored["slowest_query_time"] >= new["slowest_query_time"]:
        for name in _EXAMPLE_FIELDS:
            out[f"slowest_{name}"] = stored[f"slowest_{name}"]
    total = stored["seen"] + new["seen"]
    if draw.random() * total >= new["seen"]:
        for name in _EXAMPLE_FIELDS:
            out[f"sampled_{name}"] = stored[f"sampled_{name}"]
    out["seen"] = total
    return out


# combine_example_rows in SQL (core.upsert.merge_rows' merged_sql), for PostgreSQL.
_EXAMPLE_SQL = {
    "seen": "t.seen + s.seen",
    **{
        f"slowest_{name}": f"CASE WHEN s.slowest_query_time > t.slowest_query_time "
        f"THEN s.slowest_{name} ELSE t.slowest_{name} END"
        for name in _EXAMPLE_FIELDS
    },
    **{
        f"sampled_{name}": f"CASE WHEN s.draw * (t.seen + s.seen) < s.seen "
        f"THEN s.sampled_{name} ELSE t.sampled_{name} END"
        for name in _EXAMPLE_FIELDS
    },
}

EXAMPLE_KEY = ("query_id", "resolution", "bucket_start", "instance_id")
_BUCKET_HOUR = Rolled(QueryBucketHour, Resolution.HOUR, BUCKET_KEY)
_QUERY_HOUR = Rolled(QueryTotalsHour, Resolution.HOUR, QUERY_TOTALS_KEY, _BUCKET_HOUR)
_INSTANCE_MINUTE = Rolled(InstanceTotalsMinute, Resolution.MINUTE, TOTALS_KEY)
_INSTANCE_HOUR = Rolled(InstanceTotalsHour, Resolution.HOUR, TOTALS_KEY, _INSTANCE_MINUTE)
_EXAMPLE_HOUR = Rolled(QueryExample, Resolution.HOUR, EXAMPLE_KEY, fixed={"resolution": "hour"})

MINUTE_TABLES: tuple[MinuteTable, ...] = (
    MinuteTable(
        QueryBucketMinute,
        (
            _BUCKET_HOUR,
            Rolled(QueryBucketDay, Resolution.DAY, BUCKET_KEY, _BUCKET_HOUR),
            _QUERY_HOUR,
            Rolled(QueryTotalsDay, Resolution.DAY, QUERY_TOTALS_KEY, _QUERY_HOUR),
            _INSTANCE_MINUTE,
            _INSTANCE_HOUR,
            Rolled(InstanceTotalsDay, Resolution.DAY, TOTALS_KEY, _INSTANCE_HOUR),
        ),
        merge_metric_rows,
        combine_metric_rows,
        metrics=True,
    ),
    MinuteTable(
        QueryExampleMinute,
        (
            _EXAMPLE_HOUR,
            Rolled(QueryExample, Resolution.DAY, EXAMPLE_KEY, _EXAMPLE_HOUR, {"resolution": "day"}),
        ),
        merge_example_rows,
        combine_example_rows,
        metrics=False,
        merged_sql=_EXAMPLE_SQL,
    ),
)

# Entries rolled up per transaction: the more, the fewer times a shared hour or day row is
# rewritten; bounded for the minute rows SQLite's path holds in memory at once.
ENTRIES_PER_ROUND = 500


def rolled_models() -> set[Any]:
    """Every table rolled up from minutes (reads add the minutes still pending to them)."""
    return {rolled.model for table in MINUTE_TABLES for rolled in table.rolled}


def roll_up_due(
    *, session: Session, now: datetime, grace_seconds: float, rng: random.Random | None = None
) -> int:
    """Roll up the minute rows of up to ENTRIES_PER_ROUND due pending entries; returns how
    many entries were rolled up (0: none was due). Call again until it returns 0.

    The entries are taken by deleting them (PostgreSQL skips those another roll-up holds),
    so two roll-ups never take the same one, and a failure rolls the deletion back with
    everything else.
    """
    draw = rng or random.Random()
    ids = _take_due(session, now=now, grace=timedelta(seconds=grace_seconds))
    if not ids:
        return 0
    in_sql = is_postgresql(session)
    for table in MINUTE_TABLES:
        minute_rows: list[Row] | None = None
        deltas: dict[Rolled, list[Row]] = {}
        for rolled in table.rolled:
            if rolled.source is not None:
                deltas[rolled] = _rolled_rows(deltas[rolled.source], rolled, table.merge, draw)
            elif table.metrics and in_sql:
                deltas[rolled] = _summed_minutes(session, table.model, rolled, ids)
            else:
                minute_rows = minute_rows or _rows_of(session, table.model, ids)
                deltas[rolled] = _rolled_rows(minute_rows, rolled, table.merge, draw)
            merge_rows(
                session,
                rolled.model,
                rolled.key,
                deltas[rolled],
                partial(_combine_with, table.combine, draw),
                metrics=table.metrics,
                merged_sql=table.merged_sql,
            )
    return len(ids)


def _combine_with(
    combine: Combine, draw: random.Random, stored: Mapping[str, Any], new: Row
) -> Row:
    return combine(stored, new, draw)


def _rolled_rows(
    rows: Sequence[Row], rolled: Rolled, merge: MergeRows, draw: random.Random
) -> list[Row]:
    """``rows`` summed per key of ``rolled`` (bucket_start floored to its resolution)."""
    table: Table = rolled.model.__table__
    if not rows:
        return []
    names = [column.name for column in table.c if column.name in rows[0]]
    starts: dict[datetime, datetime] = {}
    groups: dict[tuple[Any, ...], list[Row]] = {}
    key_of = key_getter(rolled.key)
    for row in rows:
        start = row["bucket_start"]
        floored = starts.get(start) or starts.setdefault(start, floor_to(start, rolled.resolution))
        wide = {name: row[name] for name in names}
        wide.update(rolled.fixed, bucket_start=floored)
        groups.setdefault(key_of(wide), []).append(wide)
    return [merge(group, table, draw) for group in groups.values()]


def add_pending(
    session: Session, instance_id: int, hours: Sequence[datetime], *, now: datetime
) -> dict[datetime, int]:
    """A pending entry per hour a write adds minutes to; their ids by hour (the rows carry
    them as ``rollup_id``).

    An entry is due at the end of its hour, or at once when the hour has ended (late data).
    """
    if not hours:
        return {}
    rows = [
        {"instance_id": instance_id, "hour_start": hour, "due_at": max(now, hour + _HOUR)}
        for hour in hours
    ]
    stmt = insert(RollupPending).returning(RollupPending.id, sort_by_parameter_order=True)
    ids = session.scalars(stmt, rows).all()
    return dict(zip(hours, ids, strict=True))


_HOUR = Resolution.HOUR.width


# An hour that never goes quiet (a sender that keeps adding to it) is rolled up all the same
# once its oldest entry has been due this many graces.
MAX_WAIT_GRACES = 5


def _rollable(now: datetime, grace: timedelta) -> Any:
    """The condition of an entry the roll-up may take: due (its hour has ended, or it came
    after) ``grace`` ago, and its instance's hour quiet for as long: no entry of that hour
    came due since. The hour's last minutes, or a late import's many batches into old hours,
    arrive meanwhile and are added to each hour row in one round, not one per round (an
    entry's own grace let a trickle of batches rewrite the hour and day rows every round)."""
    cutoff = now - grace
    newer = aliased(RollupPending)
    # Not correlated: PostgreSQL hashes the busy hours once. Over the 30,000 entries of an
    # hour of 500 servers: 4.8 ms; a correlated EXISTS, planned 80 times as costly, 27 ms
    # (JIT compiled).
    busy = select(newer.instance_id, newer.hour_start).where(newer.due_at > cutoff)
    quiet = tuple_(RollupPending.instance_id, RollupPending.hour_start).not_in(busy)
    waited = RollupPending.due_at <= now - grace * MAX_WAIT_GRACES
    return and_(RollupPending.due_at <= cutoff, or_(quiet, waited))


def _take_due(session: Session, *, now: datetime, grace: timedelta) -> list[int]:
    """Delete up to ENTRIES_PER_ROUND rollable entries, oldest hour first; their ids.

    Deleting is the claim: on PostgreSQL entries another roll-up holds are skipped, SQLite
    has one writer at a time.
    """
    # An hour's entries of one instance together: a round adds to each hour row once.
    due = (
        select(RollupPending.id)
        .where(_rollable(now, grace))
        .order_by(RollupPending.hour_start, RollupPending.instance_id, RollupPending.id)
        .limit(ENTRIES_PER_ROUND)
    )
    if is_postgresql(session):
        due = due.with_for_update(skip_locked=True)
    stmt = delete(RollupPending).where(RollupPending.id.in_(due)).returning(RollupPending.id)
    return sorted(session.scalars(stmt))


def _summed_minutes(session: Session, model: Any, rolled: Rolled, ids: Sequence[int]) -> list[Row]:
    """The metric rows of these entries summed per key of ``rolled`` by PostgreSQL, by the
    same rules as :func:`merge_metric_rows`; only the histograms, which SQL cannot merge,
    are merged here (from one array per key). Reading every minute row into Python took
    most of a roll-up's time."""
    minutes: Table = model.__table__
    target: Table = rolled.model.__table__
    floor = _FLOOR[rolled.resolution]
    keys = [
        (floor(minutes.c.bucket_start) if name == "bucket_start" else minutes.c[name]).label(name)
        for name in rolled.key
    ]
    sums = [_summed(minutes.c[c.name]).label(c.name) for c in target.c if c.name not in rolled.key]
    # At most ENTRIES_PER_ROUND ids: one statement.
    result = session.execute(
        select(*keys, *sums).where(minutes.c.rollup_id.in_(ids)).group_by(*keys)
    )
    names = list(result.keys())
    rows: list[Row] = []
    for values in result:
        row = dict(zip(names, values, strict=True))
        if HISTOGRAM in row:
            parts = [part for part in row[HISTOGRAM] or () if part is not None]
            row[HISTOGRAM] = merge_stored(*parts) if len(parts) > 1 else next(iter(parts), None)
        rows.append(row)
    return rows


def _summed(column: Any) -> Any:
    """The aggregate of a metric column by its name (see merge_metric_rows)."""
    if column.name == HISTOGRAM:
        return func.array_agg(column)
    if column.name.endswith("_min"):
        return func.min(column)
    if column.name.endswith("_max"):
        return func.max(column)
    # PostgreSQL sums BIGINT as NUMERIC: back to the column's type.
    return (
        cast(func.sum(column), column.type)
        if isinstance(column.type, BigInteger)
        else func.sum(column)
    )


def _same_minute(column: Any) -> Any:
    return column


_FLOOR: dict[Resolution, Callable[[Any], Any]] = {
    Resolution.MINUTE: _same_minute,
    Resolution.HOUR: floor_hour,
    Resolution.DAY: floor_day,
}


def _rows_of(session: Session, model: Any, ids: Sequence[int]) -> list[Row]:
    """The rows of a minute table that carry one of these roll-up ids."""
    table: Table = model.__table__
    rows: list[Row] = []
    for chunk in chunks(ids):
        result = session.execute(select(table).where(table.c.rollup_id.in_(chunk)))
        names = list(result.keys())
        rows.extend(dict(zip(names, row, strict=True)) for row in result)
    return rows


def state(*, session: Session, now: datetime, grace_seconds: float) -> tuple[int, float]:
    """(pending entries, seconds the oldest rollable one has waited since it became so; 0
    when none is): the roll-up's backlog and lag."""
    grace = timedelta(seconds=grace_seconds)
    count = session.scalar(select(func.count()).select_from(RollupPending)) or 0
    hours = session.execute(
        select(func.min(RollupPending.due_at), func.max(RollupPending.due_at)).group_by(
            RollupPending.instance_id, RollupPending.hour_start
        )
    )
    # An hour's entries become rollable together once it is quiet (see _rollable), its
    # oldest on its own once it has waited MAX_WAIT_GRACES graces.
    became = [
        min(_aware(last) + grace, _aware(first) + grace * MAX_WAIT_GRACES) for first, last in hours
    ]
    ready = [moment for moment in became if moment <= now]
    if not ready:
        return count, 0.0
    return count, (now - min(ready)).total_seconds()


def _aware(value: datetime) -> datetime:
    # An aggregate over a UTC column may come back naive (SQLite): it is UTC.
    return value if value.tzinfo else value.replace(tzinfo=UTC)
