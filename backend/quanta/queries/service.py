"""Use cases of the query catalog and metric store."""

import logging
import random
import re
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from quanta.analysis.aggregate import (
    SUM_METRICS,
    BatchDigest,
    BucketKey,
    BucketMetrics,
    Example,
    ExamplePick,
    merged,
    rollup,
    rollup_examples,
)
from quanta.analysis.fingerprint import fingerprint
from quanta.analysis.histogram import LatencyHistogram, merge_stored
from quanta.analysis.redact import redact
from quanta.analysis.resolution import (
    COARSE_TO_FINE,
    Resolution,
    Segment,
    floor_to,
    plan_reads,
    series_resolution,
    width_at,
)
from quanta.analysis.statement import describe_statement
from quanta.analysis.timeseries import load_series, plan_slots
from quanta.core.config import Settings
from quanta.core.db import utcnow
from quanta.instances.models import ExamplePolicy
from quanta.queries import repository
from quanta.queries.models import (
    BUCKET_KEY,
    BUCKET_MODELS,
    QUERY_TOTALS_KEY,
    QUERY_TOTALS_MODELS,
    TOTALS_KEY,
    TOTALS_MODELS,
    QueryExample,
)
from quanta.queries.schemas import (
    BreakdownRow,
    Filters,
    FilterValue,
    MetricStat,
    QueryDetail,
    QueryExampleOut,
    QueryExamples,
    QueryFlags,
    QueryRow,
    QueryTotals,
    SeriesPoint,
    SparkPoint,
    TopQueries,
)

log = logging.getLogger(__name__)

_RELATIVE_TIME = re.compile(r"now(?:(?P<sign>[-+])(?P<amount>\d+)(?P<unit>[smhdw]))?")
_RELATIVE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}

SUM_COLUMNS = tuple(f"{name}_sum" for name in SUM_METRICS)
EXAMPLE_KEY = ("query_id", "resolution", "bucket_start", "instance_id")
# Writes go minute -> hour -> day: one fixed order across workers (no lock cycles).
WRITE_ORDER = (Resolution.MINUTE, Resolution.HOUR, Resolution.DAY)
# PostgreSQL partitions: the time each one spans, and how far ahead of now they are created.
PARTITION_AHEAD = {
    Resolution.MINUTE: timedelta(days=7),
    Resolution.HOUR: timedelta(days=62),
    Resolution.DAY: timedelta(days=366),
}


class InvalidRequest(ValueError):
    """A read whose parameters cannot be answered; the message says what to change."""


class InvalidRange(InvalidRequest):
    """A time range that cannot be read (unparseable bound, end before start)."""


class UnknownSortKey(InvalidRequest):
    """A sort key that is not a metric of the list."""


class QueryNotFound(LookupError):
    """No query class has this query_id."""


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """A half-open UTC range [start, end)."""

    start: datetime
    end: datetime

    @property
    def seconds(self) -> float:
        """Length of the window in seconds."""
        return (self.end - self.start).total_seconds()


def parse_time(value: str | datetime, *, now: datetime) -> datetime:
    """An aware UTC time from ISO 8601 (naive is UTC) or ``now``, ``now-24h``, ``now-7d``...

    Units of relative times: s, m, h, d, w.
    """
    if isinstance(value, datetime):
        return _as_utc(value)
    text = value.strip()
    match = _RELATIVE_TIME.fullmatch(text)
    if match:
        amount = int(match["amount"] or 0) * _RELATIVE_UNITS.get(match["unit"] or "s", 1)
        return (
            now - timedelta(seconds=amount)
            if match["sign"] == "-"
            else now + timedelta(seconds=amount)
        )
    try:
        return _as_utc(datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        raise InvalidRange(
            f"Cannot read time {value!r}: use ISO 8601 (2026-01-31T12:00:00Z) or a time "
            "relative to now (now, now-1h, now-24h, now-7d)."
        ) from None


def resolve_window(
    *, start: str | datetime | None, end: str | datetime | None, default_hours: int
) -> TimeWindow:
    """The window to read: given bounds (naive ones are UTC), else the last `default_hours`."""
    now = utcnow()
    end = parse_time(end, now=now) if end else now
    start = parse_time(start, now=now) if start else end - timedelta(hours=default_hours)
    if start >= end:
        raise InvalidRange(f"'from' ({start.isoformat()}) must be before 'to' ({end.isoformat()}).")
    return TimeWindow(start=start, end=end)


def retained_since(*, settings: Settings, now: datetime) -> dict[Resolution, datetime]:
    """Per resolution, the oldest bucket start that retention keeps at ``now``."""
    days = {
        Resolution.MINUTE: settings.retention_minute_days,
        Resolution.HOUR: settings.retention_hour_days,
        Resolution.DAY: settings.retention_day_days,
    }
    return {r: floor_to(now - timedelta(days=d), r) for r, d in days.items()}


def own_queries(*, session: Session, query_ids: Collection[str]) -> set[str]:
    """Which of ``query_ids`` are Quanta's own statements (EXPLAIN, probes, polls), which
    views leave out by default (see quanta.queries.repository.own_query_ids)."""
    return repository.own_among(session, query_ids) if query_ids else set()


def read_plan(*, settings: Settings, window: TimeWindow) -> list[Segment]:
    """The segments (resolution, range) that answer a window: the coarsest that fit."""
    return plan_reads(window.start, window.end, retained_since(settings=settings, now=utcnow()))


def record_digest(
    *,
    session: Session,
    instance_id: int,
    source: str,
    digest: BatchDigest,
    example_policy: str,
    example_max_chars: int,
    rng: random.Random | None = None,
) -> None:
    """Add a batch's aggregates to the catalog, the buckets, the query and instance totals.

    Every resolution is written here, in the batch's transaction: no rollup job, no
    late-data window, and a batch counts at every resolution exactly once.

    The order keeps the rows that concurrent batches share locked for as short a time as
    it can (they are held until the commit): new query classes are inserted first, but the
    classes' first/last seen, which every batch of an instance updates, are widened last;
    minutes come before hours and days, which consecutive batches share. Every worker
    writes in this one order, table by table and in key order within a table, so none waits
    on another in a cycle.
    """
    draw = rng or random.Random()
    _insert_catalog(session=session, instance_id=instance_id, digest=digest)
    buckets, per_query = _rollups(digest.buckets)
    picks = _example_rollups(digest.examples, draw)
    masked = example_policy == ExamplePolicy.MASKED
    for resolution in WRITE_ORDER:
        _record_buckets(
            session, instance_id, source, resolution, buckets[resolution], per_query.get(resolution)
        )
        if example_policy == ExamplePolicy.OFF:
            continue
        example_rows = [
            _example_row(qid, start, pick, resolution, instance_id, masked, example_max_chars)
            for (qid, start), pick in picks[resolution].items()
        ]
        repository.merge_rows(
            session,
            QueryExample,
            EXAMPLE_KEY,
            example_rows,
            lambda stored, new: _combine_examples(stored, new, draw),
        )
    _widen_catalog(session=session, instance_id=instance_id, digest=digest)


Picks = dict[tuple[str, datetime], ExamplePick]


def _example_rollups(minutes: Picks, draw: random.Random) -> dict[Resolution, Picks]:
    """The example picks of every resolution, each from the finest one that holds it."""
    hours = rollup_examples(minutes, Resolution.HOUR, draw)
    return {
        Resolution.MINUTE: minutes,
        Resolution.HOUR: hours,
        Resolution.DAY: rollup_examples(hours, Resolution.DAY, draw),
    }


Buckets = dict[BucketKey, BucketMetrics]


def _rollups(minutes: Buckets) -> tuple[dict[Resolution, Buckets], dict[Resolution, Buckets]]:
    """The buckets of every resolution, and the query totals of hours and days.

    Each is rolled up from the finest one at hand that holds it, not from the minutes: an
    hour's buckets are far fewer than its minutes'.
    """
    hours = rollup(minutes, Resolution.HOUR)
    hour_totals = rollup(hours, Resolution.HOUR, dimensions=False)
    buckets = {
        Resolution.MINUTE: minutes,
        Resolution.HOUR: hours,
        Resolution.DAY: rollup(hours, Resolution.DAY),
    }
    per_query = {
        Resolution.HOUR: hour_totals,
        Resolution.DAY: rollup(hour_totals, Resolution.DAY, dimensions=False),
    }
    return buckets, per_query


def _record_buckets(
    session: Session,
    instance_id: int,
    source: str,
    resolution: Resolution,
    buckets: Buckets,
    per_query: Buckets | None,
) -> None:
    """Merge buckets of ``resolution`` into the store, with their query totals (given for
    hours and days) and instance totals."""
    rows = [_bucket_row(key, m, instance_id, source) for key, m in buckets.items()]
    repository.merge_rows(
        session, BUCKET_MODELS[resolution], BUCKET_KEY, rows, _combine_buckets, metrics=True
    )
    if per_query is not None:
        query_rows = [_query_totals_row(k, m, instance_id, source) for k, m in per_query.items()]
        model = QUERY_TOTALS_MODELS[resolution]
        repository.merge_rows(
            session, model, QUERY_TOTALS_KEY, query_rows, _combine_buckets, metrics=True
        )
    # The instance totals: from the fewest buckets at hand.
    totals = _totals_rows(per_query if per_query is not None else buckets, instance_id, source)
    repository.merge_rows(
        session, TOTALS_MODELS[resolution], TOTALS_KEY, totals, _combine_totals, metrics=True
    )


# Sort keys computed in Python from merged histograms, and their quantile.
PERCENTILE_SORTS = {"query_time_p50": 0.5, "query_time_p95": 0.95, "query_time_p99": 0.99}
SORT_KEYS: tuple[str, ...] = (*repository.SQL_SORT_KEYS, *PERCENTILE_SORTS)
ORDERS = ("asc", "desc")
# Candidates whose percentile is computed per round when sorting by one (see top_queries).
PERCENTILE_CHUNK = 200
# The detail series has at most this many points (see analysis.resolution.series_resolution).
SERIES_MAX_POINTS = 360
DETAIL_QUANTILES = (0.5, 0.95, 0.99)
BREAKDOWN_DIMENSIONS = ("schema", "user", "host")


def instance_top_queries(
    *, session: Session, settings: Settings, instance: str, window: TimeWindow, limit: int
) -> list[QueryRow]:
    """One instance's ``limit`` heaviest queries by load over ``window`` (Quanta's own left
    out): what beat's automatic EXPLAIN and advice passes work on."""
    return top_queries(
        session=session,
        settings=settings,
        window=window,
        limit=limit,
        offset=0,
        sparkline_points=1,
        flt=repository.BucketFilter(instances=(instance,)),
    ).rows


def rows_affected_by_query(
    *,
    session: Session,
    settings: Settings,
    instance: str,
    window: TimeWindow,
    query_ids: Collection[str],
) -> dict[str, int]:
    """Rows affected over ``window`` by each of ``query_ids`` on one instance, where a
    source reported them (absent otherwise): the write rate of a table without statistics."""
    if not query_ids:
        return {}
    wanted = set(query_ids)
    segments = read_plan(settings=settings, window=window)
    flt = repository.BucketFilter(instances=(instance,))
    return {
        row.query_id: int(row.rows_affected)
        for row in repository.aggregate(session, segments, flt, ("query_id",))
        if row.query_id in wanted and row.rows_affected is not None
    }


def top_queries(
    *,
    session: Session,
    settings: Settings,
    window: TimeWindow,
    limit: int,
    offset: int,
    sparkline_points: int,
    flt: repository.BucketFilter | None = None,
    sort: str = "load",
    order: str = "desc",
) -> TopQueries:
    """The top queries of the window by any metric, with totals, load share and a sparkline.

    Only each instance's primary source counts, so a query seen in both the slow log and
    performance_schema is counted once. Totals and shares are over the queries that match
    the filters. Sorting by a percentile merges histograms in Python (see `_by_percentile`).
    """
    flt = flt or repository.BucketFilter()
    if sort not in SORT_KEYS:
        raise UnknownSortKey(f"Unknown sort key {sort!r}; use one of: {', '.join(SORT_KEYS)}.")
    if order not in ORDERS:
        raise InvalidRequest(f"Unknown order {order!r}; use 'asc' or 'desc'.")
    descending = order == "desc"
    segments = read_plan(settings=settings, window=window)
    merged: dict[Any, LatencyHistogram] = {}
    if sort in PERCENTILE_SORTS:
        rows, merged = _by_percentile(
            session, segments, flt, PERCENTILE_SORTS[sort], descending, limit + offset
        )
        rows = rows[offset : offset + limit]
    else:
        rows = list(
            repository.per_query(
                session, segments, flt, sort=sort, descending=descending, limit=limit, offset=offset
            )
        )
    total = (
        _Totals.of(rows[0])
        if rows
        else _Totals.of_aggregate(
            repository.aggregate(session, segments, flt, count_queries=True)[0]
        )
    )
    total_time = total.query_time
    page_ids = [r.query_id for r in rows]
    catalog = repository.query_classes(session, page_ids)
    if not merged:  # a percentile sort merged the page's histograms already
        merged = merged_histograms(session, segments, flt, "query_id", page_ids)
    slots = plan_slots(window.start, window.end, sparkline_points)
    widths = width_at(segments)
    points_by_query: dict[str, list[tuple[datetime, float]]] = defaultdict(list)
    for query_id, start, query_time in repository.load_by_bucket(session, segments, flt, page_ids):
        points_by_query[query_id].append((start, query_time))
    seconds = window.seconds
    out_rows = []
    for r in rows:
        histogram = merged.get(r.query_id)
        p95, p99 = histogram.quantiles([0.95, 0.99]) if histogram else (None, None)
        query = catalog[r.query_id]
        out_rows.append(
            QueryRow(
                query_id=r.query_id,
                fingerprint=query.fingerprint,
                statement_type=query.statement_type,
                tables=list(query.tables or []),
                count=r.calls,
                qps=r.calls / seconds,
                query_time=r.query_time,
                load=r.query_time / seconds,
                share=r.query_time / total_time if total_time else 0.0,
                query_time_avg=r.query_time / r.calls if r.calls else None,
                query_time_p95=p95,
                query_time_p99=p99,
                query_time_max=r.query_time_max,
                rows_examined=r.rows_examined,
                rows_sent=r.rows_sent,
                flags=QueryFlags(
                    full_scan=_flag(r.full_scan),
                    filesort=_flag(r.filesort),
                    tmp_disk_tables=_flag(r.tmp_disk_tables),
                    no_index_used=_flag(r.no_index_used),
                ),
                sparkline=[
                    SparkPoint(ts=ts, load=load)
                    for ts, load in load_series(points_by_query[r.query_id], slots, widths)
                ],
            )
        )
    count = total.calls
    return TopQueries(
        from_=window.start,
        to=window.end,
        seconds=seconds,
        sort=sort,
        order=order,
        totals=QueryTotals(
            count=count,
            query_time=total_time,
            load=total_time / seconds,
            qps=count / seconds,
            query_time_avg=total_time / count if count else None,
            rows_examined=total.rows_examined,
            rows_sent=total.rows_sent,
            queries=total.queries,
        ),
        rows=out_rows,
    )


@dataclass(frozen=True, slots=True)
class _Totals:
    """What the totals row sums, over every query matching the filters."""

    calls: int
    query_time: float
    rows_examined: int | None
    rows_sent: int | None
    queries: int

    @classmethod
    def of(cls, row: Any) -> "_Totals":
        """From the window totals every row of `repository.per_query` carries."""
        return cls(
            row.total_calls or 0,
            row.total_query_time or 0.0,
            row.total_rows_examined,
            row.total_rows_sent,
            row.total_queries or 0,
        )

    @classmethod
    def of_aggregate(cls, row: Any) -> "_Totals":
        """From a `repository.aggregate` row (when the page has no row to carry them)."""
        return cls(
            row.calls or 0, row.query_time or 0.0, row.rows_examined, row.rows_sent, row.queries
        )


def query_detail(
    *,
    session: Session,
    settings: Settings,
    window: TimeWindow,
    query_id: str,
    flt: repository.BucketFilter | None = None,
) -> QueryDetail:
    """Every metric of one query over the window, its series and its breakdowns.

    Shares are of the same metric over every query matching the same filters.
    """
    query = repository.query_class(session, query_id)
    if query is None:
        raise QueryNotFound(f"No query with query_id {query_id!r}.")
    base = replace(flt or repository.BucketFilter(), search=None, query_id=None)
    mine = replace(base, query_id=query_id)
    segments = read_plan(settings=settings, window=window)
    (row,) = repository.aggregate(session, segments, mine)
    everything = _everything(session, segments, base)
    histogram = merged_histograms(session, segments, mine, "query_id", [query_id]).get(query_id)
    seconds = window.seconds
    count = row.calls or 0
    query_time = row.query_time or 0.0
    total_time = everything.query_time or 0.0
    return QueryDetail(
        query_id=query.query_id,
        fingerprint=query.fingerprint,
        statement_type=query.statement_type,
        tables=list(query.tables or []),
        first_seen=query.first_seen,
        last_seen=query.last_seen,
        from_=window.start,
        to=window.end,
        seconds=seconds,
        count=count,
        load=query_time / seconds,
        share=query_time / total_time if total_time else 0.0,
        metrics=_metric_stats(row, everything, histogram, seconds),
        **_series(session=session, settings=settings, window=window, flt=mine),
        breakdown=_breakdown(session, segments, mine, query_time),
    )


def _everything(session: Session, segments: list[Segment], flt: repository.BucketFilter) -> Any:
    """Every query matching ``flt`` summed: from the instances' totals when no dimension
    filter applies (a few rows per period), else from the buckets."""
    if flt.has_dimension:
        (row,) = repository.aggregate(session, segments, flt)
        return row
    return repository.instance_totals(session, segments, flt.instances)


# Statements that change tables, their indexes or their statistics, and so plans.
SCHEMA_CHANGE_TYPES = ("alter", "create", "drop", "rename", "truncate", "analyze", "optimize")


def last_schema_change(
    *, session: Session, instance: str, tables: Sequence[str], since: datetime
) -> datetime | None:
    """When a statement that can change plans (ALTER, CREATE INDEX, ANALYZE...) last ran on
    one of ``tables`` on ``instance``, seen in its metrics since ``since``; None if never.

    Tables match by name without their schema: the statements name them either way.
    """
    wanted = {_bare(t) for t in tables}
    seen = [
        at
        for names, at in repository.schema_statements_since(
            session, instance=instance, types=SCHEMA_CHANGE_TYPES, since=since
        )
        if wanted & {_bare(t) for t in names}
    ]
    return max(seen, default=None)


def _bare(table: str) -> str:
    return table.rsplit(".", 1)[-1].strip("`").lower()


def query_examples(
    *,
    session: Session,
    settings: Settings,
    window: TimeWindow,
    query_id: str,
    instances: tuple[str, ...] = (),
    limit: int,
) -> QueryExamples:
    """Real statements of a query in the window (slowest and sampled ones), slowest first."""
    if repository.query_class(session, query_id) is None:
        raise QueryNotFound(f"No query with query_id {query_id!r}.")
    # Every resolution, not the coarsest that fits: an hour keeps two statements where its
    # minutes kept two each, and distinct real statements are what EXPLAIN and a reader want.
    segments = [Segment(r, floor_to(window.start, r), window.end) for r in Resolution]
    found: dict[tuple[str, datetime], QueryExampleOut] = {}
    for example, instance in repository.examples(session, segments, query_id, instances):
        for kind in ("slowest", "sampled"):
            out = QueryExampleOut(
                kind=kind,
                text=getattr(example, f"{kind}_text"),
                query_time=getattr(example, f"{kind}_query_time"),
                ts=getattr(example, f"{kind}_ts"),
                schema_name=getattr(example, f"{kind}_schema"),
                instance=instance,
                literals=getattr(example, f"{kind}_literals"),
                truncated=getattr(example, f"{kind}_truncated"),
            )
            # The sampled statement is often the slowest one too, and the same statement is
            # kept at several resolutions: list it once.
            if window.start <= out.ts < window.end:
                found.setdefault((out.text, out.ts), out)
    ranked = sorted(found.values(), key=lambda e: (-e.query_time, e.ts))
    return QueryExamples(query_id=query_id, examples=ranked[:limit])


def filter_values(
    *, session: Session, settings: Settings, window: TimeWindow, flt: repository.BucketFilter
) -> Filters:
    """The values of each dimension in the window with their share of the load."""
    segments = read_plan(settings=settings, window=window)
    sums = _sums_by_dimension(session, segments, flt)
    total_time = sum(query_time for _, query_time in sums["instance"].values())
    lists = {
        dimension: sorted(
            (
                FilterValue(
                    value=value,
                    count=count,
                    share=query_time / total_time if total_time else 0.0,
                )
                for value, (count, query_time) in values.items()
            ),
            key=lambda v: (-v.share, v.value),
        )
        for dimension, values in sums.items()
    }
    return Filters(
        from_=window.start,
        to=window.end,
        instance=lists["instance"],
        schema_=lists["schema"],
        user=lists["user"],
        host=lists["host"],
    )


def _by_percentile(
    session: Session,
    segments: list[Segment],
    flt: repository.BucketFilter,
    q: float,
    descending: bool,
    needed: int,
) -> tuple[list[Any], dict[Any, LatencyHistogram]]:
    """The queries ordered by a latency percentile merged from their histograms, and the
    histograms merged on the way (every query that can be on the page has one there).

    A percentile never exceeds the query's maximum, so for a descending sort the candidates
    are taken by maximum, heaviest first, PERCENTILE_CHUNK at a time, until the `needed`-th
    best percentile found is at least the next candidate's maximum: no later query can rank
    higher. An ascending sort computes every query's percentile. No histogram: last.
    """
    candidates = list(
        repository.per_query(
            session, segments, flt, sort="query_time_max", descending=True, limit=None, offset=0
        )
    )
    values: dict[str, float | None] = {}
    histograms: dict[Any, LatencyHistogram] = {}
    for start in range(0, len(candidates), PERCENTILE_CHUNK):
        chunk = candidates[start : start + PERCENTILE_CHUNK]
        ids = [r.query_id for r in chunk]
        merged = merged_histograms(session, segments, flt, "query_id", ids)
        histograms.update(merged)
        for query_id in ids:
            histogram = merged.get(query_id)
            values[query_id] = histogram.quantile(q) if histogram else None
        following = candidates[start + PERCENTILE_CHUNK : start + PERCENTILE_CHUNK + 1]
        if descending and following and following[0].query_time_max is not None:
            known = sorted((v for v in values.values() if v is not None), reverse=True)
            if len(known) >= needed and known[needed - 1] >= following[0].query_time_max:
                candidates = candidates[: start + PERCENTILE_CHUNK]
                break
    sign = -1.0 if descending else 1.0

    def rank(row: Any) -> tuple[bool, float, str]:
        value = values.get(row.query_id)
        return (value is None, sign * (value or 0.0), row.query_id)

    return sorted(candidates, key=rank), histograms


def merged_histograms(
    session: Session,
    segments: list[Segment],
    flt: repository.BucketFilter,
    key: str,
    query_ids: list[str] | None,
) -> dict[Any, LatencyHistogram]:
    """The filtered buckets' histograms merged per value of bucket column ``key``."""
    merged: dict[Any, LatencyHistogram] = defaultdict(LatencyHistogram)
    for value, data in repository.histograms_by(session, segments, flt, key, query_ids):
        merged[value].merge_bytes(data)
    return dict(merged)


def _metric_stats(
    row: Any, everything: Any, histogram: LatencyHistogram | None, seconds: float
) -> list[MetricStat]:
    count = row.calls or 0

    def stat(name: str, value: Any, total: Any, **extra: float | None) -> MetricStat:
        return MetricStat(
            name=name,
            sum=value,
            rate=None if value is None else value / seconds,
            share=value / total if value is not None and total else None,
            avg=value / count if value is not None and count else None,
            **extra,
        )

    p50, p95, p99 = histogram.quantiles(DETAIL_QUANTILES) if histogram else (None, None, None)
    stats = [
        stat("count", count, everything.calls),
        stat(
            "query_time",
            row.query_time,
            everything.query_time,
            min=row.query_time_min,
            max=row.query_time_max,
            p50=p50,
            p95=p95,
            p99=p99,
        ),
    ]
    for name in SUM_METRICS:
        extra = {"max": row.lock_time_max} if name == "lock_time" else {}
        stats.append(stat(name, getattr(row, name), getattr(everything, name), **extra))
    return stats


def _series(
    *, session: Session, settings: Settings, window: TimeWindow, flt: repository.BucketFilter
) -> dict[str, Any]:
    """The query's series at the finest kept resolution with at most SERIES_MAX_POINTS."""
    kept = retained_since(settings=settings, now=utcnow())
    resolution = series_resolution(window.start, window.end, kept, SERIES_MAX_POINTS)
    first = floor_to(window.start, resolution)
    segments = [Segment(resolution, first, window.end)]
    rows = {r[0]: r for r in repository.aggregate(session, segments, flt, ["bucket_start"])}
    merged = merged_histograms(session, segments, flt, "bucket_start", None)
    width = resolution.width
    points = []
    ts = first
    while ts < window.end:
        r = rows.get(ts)
        histogram = merged.get(ts)
        p50, p95, p99 = histogram.quantiles(DETAIL_QUANTILES) if histogram else (None, None, None)
        points.append(
            SeriesPoint(
                ts=ts,
                load=(r.query_time if r else 0.0) / width.total_seconds(),
                count=r.calls if r else 0,
                rows_examined=(r.rows_examined or 0) if r else 0,
                p50=p50,
                p95=p95,
                p99=p99,
            )
        )
        ts += width
    return {"resolution": resolution.value, "series": points}


def _breakdown(
    session: Session, segments: list[Segment], flt: repository.BucketFilter, query_time: float
) -> dict[str, list[BreakdownRow]]:
    return {
        dimension: sorted(
            (
                BreakdownRow(
                    value=value,
                    count=count,
                    query_time=time,
                    share=time / query_time if query_time else 0.0,
                )
                for value, (count, time) in values.items()
            ),
            key=lambda v: (-v.query_time, v.value),
        )
        for dimension, values in _sums_by_dimension(session, segments, flt).items()
    }


def _sums_by_dimension(
    session: Session, segments: list[Segment], flt: repository.BucketFilter
) -> dict[str, dict[str, tuple[int, float]]]:
    """(count, query time) per value of each dimension: instance (by name), schema, user,
    host. One scan grouped by all four, added up here: a scan per dimension read the
    buckets four times."""
    names = repository.instance_names(session)
    columns = ["instance_id", *(repository.DIMENSION_COLUMNS[d] for d in BREAKDOWN_DIMENSIONS)]
    sums: dict[str, dict[str, tuple[int, float]]] = {
        d: {} for d in ("instance", *BREAKDOWN_DIMENSIONS)
    }
    for row in repository.aggregate(session, segments, flt, columns):
        instance_id, *dimension_values = row[: len(columns)]
        instance = names.get(instance_id, str(instance_id))
        for dimension, value in zip(sums, (instance, *dimension_values), strict=True):
            count, query_time = sums[dimension].get(value, (0, 0.0))
            sums[dimension][value] = (count + row.calls, query_time + row.query_time)
    return sums


def _flag(total: int | None) -> bool | None:
    return None if total is None else total > 0


def query_histogram(
    *,
    session: Session,
    settings: Settings,
    window: TimeWindow,
    query_id: str,
    instance_id: int | None = None,
) -> LatencyHistogram:
    """The latency histogram of a query over the window, merged from its stored buckets."""
    merged = LatencyHistogram()
    for data in repository.histograms(
        session, read_plan(settings=settings, window=window), query_id, instance_id
    ):
        merged.merge_bytes(data)
    return merged


def apply_retention(*, session: Session, settings: Settings, now: datetime) -> dict[str, int]:
    """Delete buckets and examples older than their resolution's retention; drop partitions.

    Returns the rows deleted per resolution (dropped partitions not counted).
    """
    kept = retained_since(settings=settings, now=now)
    deleted: dict[str, int] = {}
    for resolution in COARSE_TO_FINE:
        model = BUCKET_MODELS[resolution]
        cutoff = kept[resolution]
        if repository.is_postgresql(session):
            for name in repository.partition_names(session, model.__tablename__):
                bounds = _partition_bounds(name, model.__tablename__, resolution)
                if bounds is not None and bounds[1] <= cutoff:
                    repository.drop_partition(session, name)
        count = repository.delete_buckets_before(session, model, cutoff)
        count += repository.delete_buckets_before(session, TOTALS_MODELS[resolution], cutoff)
        if resolution in QUERY_TOTALS_MODELS:
            totals = QUERY_TOTALS_MODELS[resolution]
            count += repository.delete_buckets_before(session, totals, cutoff)
        count += repository.delete_examples_before(session, resolution.value, cutoff)
        deleted[resolution.value] = count
    return deleted


def maintain_partitions(*, session: Session, settings: Settings, now: datetime) -> list[str]:
    """On PostgreSQL, create the time partitions from the current period to ahead of now.

    Returns the partitions created (or already there).
    Rows outside every partition go to the DEFAULT one, so ingest never depends on this.
    """
    if not repository.is_postgresql(session):
        return []
    created: list[str] = []
    for resolution in COARSE_TO_FINE:
        parent = BUCKET_MODELS[resolution].__tablename__
        repository.create_partition(session, parent, f"{parent}_default", None, None)
        # From the current period on: older rows, if any, are already in the DEFAULT partition.
        lower = _period_start(now, resolution)
        horizon = now + PARTITION_AHEAD[resolution]
        while lower < horizon:
            upper = _next_period(lower, resolution)
            name = _partition_name(parent, lower)
            if repository.create_partition(session, parent, name, lower, upper):
                created.append(name)
            else:
                log.warning("partition %s not created: the default partition has its rows", name)
            lower = upper
    return created


# --------------------------------------------------------------------------- helpers


def _insert_catalog(*, session: Session, instance_id: int, digest: BatchDigest) -> None:
    """Add the batch's new query classes (buckets refer to them); known ones are left as
    they are, unlocked (see :func:`_widen_catalog`)."""
    known = repository.known_query_ids(session, list(digest.queries))
    classes = []
    for qid, seen in digest.queries.items():
        if qid in known:
            continue
        # Parsing is slow: once per new query class, never per event.
        info = describe_statement(seen.fingerprint, seen.sample)
        classes.append(
            {
                "query_id": qid,
                "fingerprint": seen.fingerprint,
                "first_seen": seen.first_seen,
                "last_seen": seen.last_seen,
                "statement_type": info.statement_type,
                "tables": list(info.tables),
            }
        )
    repository.insert_query_classes(session, classes)
    repository.insert_query_instances(session, _instance_rows(instance_id, digest))


def _widen_catalog(*, session: Session, instance_id: int, digest: BatchDigest) -> None:
    """Widen the first and last seen of the batch's query classes, on every instance too."""
    classes = [
        {
            "query_id": qid,
            "fingerprint": seen.fingerprint,
            "first_seen": seen.first_seen,
            "last_seen": seen.last_seen,
            "statement_type": None,
            "tables": None,
        }
        for qid, seen in digest.queries.items()
    ]
    repository.upsert_query_classes(session, classes)
    repository.upsert_query_instances(session, _instance_rows(instance_id, digest))


def _instance_rows(instance_id: int, digest: BatchDigest) -> list[dict[str, Any]]:
    return [
        {
            "query_id": qid,
            "instance_id": instance_id,
            "first_seen": seen.first_seen,
            "last_seen": seen.last_seen,
        }
        for qid, seen in digest.queries.items()
    ]


def _bucket_row(key: BucketKey, m: BucketMetrics, instance_id: int, source: str) -> dict[str, Any]:
    return {
        "instance_id": instance_id,
        "bucket_start": key.start,
        "query_id": key.query_id,
        "schema_name": key.schema,
        "user_name": key.user,
        "client_host": key.host,
        "source": source,
        "histogram": None if m.histogram is None else m.histogram.to_bytes(),
        **_metric_columns(m),
    }


def _metric_columns(m: BucketMetrics) -> dict[str, Any]:
    """The sums and extremes of a bucket, by column (its histogram aside)."""
    row: dict[str, Any] = {
        "count": m.count,
        "query_time_sum": m.query_time_sum,
        "query_time_min": m.query_time_min,
        "query_time_max": m.query_time_max,
        "lock_time_max": m.lock_time_max,
        **_NO_SUMS,
    }
    for name, value in m.sums.items():  # the few metrics the source gave
        row[_SUM_COLUMN[name]] = value
    return row


_SUM_COLUMN = dict(zip(SUM_METRICS, SUM_COLUMNS, strict=True))
_NO_SUMS = dict.fromkeys(SUM_COLUMNS)


def _query_totals_row(
    key: BucketKey, m: BucketMetrics, instance_id: int, source: str
) -> dict[str, Any]:
    row = _bucket_row(key, m, instance_id, source)
    for column in repository.DIMENSION_COLUMNS.values():
        del row[column]
    return row


def _combined_metrics(stored: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    out = {
        "count": stored["count"] + new["count"],
        "query_time_sum": stored["query_time_sum"] + new["query_time_sum"],
        "query_time_min": _pick(stored["query_time_min"], new["query_time_min"], min),
        "query_time_max": _pick(stored["query_time_max"], new["query_time_max"], max),
        "lock_time_max": _pick(stored["lock_time_max"], new["lock_time_max"], max),
    }
    for column in SUM_COLUMNS:
        out[column] = _pick(stored[column], new[column], _add)
    return out


def _combine_totals(stored: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    return {**{name: new[name] for name in TOTALS_KEY}, **_combined_metrics(stored, new)}


def _totals_rows(buckets: Buckets, instance_id: int, source: str) -> list[dict[str, Any]]:
    """Every query's buckets summed per period: rows of the instance totals."""
    periods: dict[datetime, list[BucketMetrics]] = {}
    for key, metrics in buckets.items():
        periods.setdefault(key.start, []).append(metrics)
    return [
        {
            "instance_id": instance_id,
            "bucket_start": start,
            "source": source,
            **_metric_columns(merged(parts, histogram=False)),
        }
        for start, parts in periods.items()
    ]


def _combine_buckets(stored: Mapping[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    out = dict(new)
    out.update(_combined_metrics(stored, new))
    if stored["histogram"] is not None and new["histogram"] is not None:
        out["histogram"] = merge_stored(stored["histogram"], new["histogram"])
    elif new["histogram"] is None:
        out["histogram"] = stored["histogram"]
    return out


def _example_row(
    qid: str,
    start: datetime,
    pick: ExamplePick,
    resolution: Resolution,
    instance_id: int,
    masked: bool,
    max_chars: int,
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "query_id": qid,
        "resolution": resolution.value,
        "bucket_start": start,
        "instance_id": instance_id,
        "seen": pick.seen,
    }
    for prefix, example in (("slowest", pick.slowest), ("sampled", pick.sampled)):
        row.update(_example_columns(prefix, example, masked, max_chars))
    return row


def _example_columns(prefix: str, example: Example, masked: bool, max_chars: int) -> dict[str, Any]:
    text = fingerprint(example.query) if masked and not example.masked else example.query
    # Whatever the policy and whether or not the agent did it: no password is ever stored.
    text = redact(text)
    return {
        f"{prefix}_text": text[:max_chars],
        f"{prefix}_truncated": example.truncated or len(text) > max_chars,
        f"{prefix}_literals": "masked" if masked or example.masked else "full",
        f"{prefix}_query_time": example.query_time,
        f"{prefix}_ts": example.ts,
        f"{prefix}_schema": example.schema[:64],
    }


_EXAMPLE_FIELDS = ("text", "truncated", "literals", "query_time", "ts", "schema")


def _combine_examples(
    stored: Mapping[str, Any], new: dict[str, Any], rng: random.Random
) -> dict[str, Any]:
    out = dict(new)
    if stored["slowest_query_time"] >= new["slowest_query_time"]:
        for name in _EXAMPLE_FIELDS:
            out[f"slowest_{name}"] = stored[f"slowest_{name}"]
    total = stored["seen"] + new["seen"]
    # Reservoir merge: the new sample replaces the stored one with probability new/total.
    if rng.random() * total >= new["seen"]:
        for name in _EXAMPLE_FIELDS:
            out[f"sampled_{name}"] = stored[f"sampled_{name}"]
    out["seen"] = total
    return out


def _add(a: Any, b: Any) -> Any:
    return a + b


def _pick(stored: Any, new: Any, both: Any) -> Any:
    # NULL means "the source does not give this metric": NULL and x give x, not NULL.
    if stored is None:
        return new
    if new is None:
        return stored
    return both(stored, new)


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


def _as_utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
