"""Fingerprint events and fold them into per-minute buckets, in memory; roll them up.

A batch from one agent is for one instance and one source, so within a batch a bucket is
identified by (query_id, schema, user, host, start). :func:`digest_events` folds slow-log
events, :func:`digest_perfschema` performance_schema digest deltas; :func:`rollup` turns minute
buckets into hour or day buckets (exactly: every metric and the histogram merge).

A metric a source does not give stays ``None`` (stored NULL), never 0.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.histogram import LatencyHistogram
from quanta.analysis.resolution import Resolution, floor_to

__all__ = [
    "SUM_METRICS",
    "BatchDigest",
    "BucketKey",
    "BucketMetrics",
    "Example",
    "ExamplePick",
    "QuerySeen",
    "digest_events",
    "digest_perfschema",
    "rollup",
    "rollup_examples",
]

SUM_METRICS: tuple[str, ...] = (
    "lock_time",
    "rows_sent",
    "rows_examined",
    "rows_affected",
    "bytes_sent",
    "tmp_tables",
    "tmp_disk_tables",
    "filesort",
    "filesort_on_disk",
    "full_scan",
    "full_join",
    "merge_passes",
    "innodb_io_r_ops",
    "innodb_io_r_bytes",
    "innodb_io_r_wait",
    "innodb_rec_lock_wait",
    "innodb_queue_wait",
    "errors",
    "warnings",
    "no_index_used",
    "no_good_index_used",
)
"""Metrics summed per bucket, by their event attribute name (stored as ``<name>_sum``)."""

# performance_schema columns giving each metric (their sum when several).
_PERFSCHEMA_SUMS: dict[str, tuple[str, ...]] = {
    "lock_time": ("sum_lock_time",),
    "rows_sent": ("sum_rows_sent",),
    "rows_examined": ("sum_rows_examined",),
    "rows_affected": ("sum_rows_affected",),
    "tmp_tables": ("sum_created_tmp_tables",),
    "tmp_disk_tables": ("sum_created_tmp_disk_tables",),
    # A statement's sort is counted in one of these two, whichever access it sorted.
    "filesort": ("sum_sort_scan", "sum_sort_range"),
    "full_scan": ("sum_select_scan",),
    "full_join": ("sum_select_full_join",),
    "merge_passes": ("sum_sort_merge_passes",),
    "errors": ("sum_errors",),
    "warnings": ("sum_warnings",),
    "no_index_used": ("sum_no_index_used",),
    "no_good_index_used": ("sum_no_good_index_used",),
}


class Event(Protocol):
    """What aggregation needs from an event; extended attributes (SUM_METRICS) are optional."""

    @property
    def ts(self) -> datetime | None: ...
    @property
    def query(self) -> str: ...
    @property
    def query_time(self) -> float: ...
    @property
    def lock_time(self) -> float | None: ...
    @property
    def db(self) -> str | None: ...
    @property
    def user(self) -> str | None: ...
    @property
    def host(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class BucketKey:
    """The dimensions of one bucket; a missing dimension is ''."""

    query_id: str
    schema: str
    user: str
    host: str
    start: datetime


@dataclass(slots=True)
class BucketMetrics:
    """Sums and extremes of one bucket; a metric no event carried stays None.

    ``sums`` holds only the SUM_METRICS some event gave; ``histogram`` is None when the
    source gave no latency distribution (performance_schema without its histogram table).
    """

    count: int = 0
    query_time_sum: float = 0.0
    query_time_min: float | None = None
    query_time_max: float | None = None
    lock_time_max: float | None = None
    histogram: LatencyHistogram | None = None
    sums: dict[str, int | float] = field(default_factory=dict)

    def merge(self, other: BucketMetrics) -> None:
        """Add ``other`` to this bucket, in place (exact for every metric)."""
        self.count += other.count
        self.query_time_sum += other.query_time_sum
        self.query_time_min = _least(self.query_time_min, other.query_time_min)
        self.query_time_max = _greatest(self.query_time_max, other.query_time_max)
        self.lock_time_max = _greatest(self.lock_time_max, other.lock_time_max)
        if other.histogram is not None:
            if self.histogram is None:
                self.histogram = LatencyHistogram()
            self.histogram.merge(other.histogram)
        sums = self.sums
        for name, value in other.sums.items():
            sums[name] = sums.get(name, 0) + value


@dataclass(slots=True)
class Example:
    """One real statement of a query class."""

    query: str
    query_time: float
    ts: datetime
    schema: str
    masked: bool = False
    truncated: bool = False  # the agent cut the statement


@dataclass(slots=True)
class ExamplePick:
    """The slowest statement of a bucket and one drawn uniformly from its ``seen`` ones."""

    slowest: Example
    sampled: Example
    seen: int

    def merge(self, other: ExamplePick, rng: random.Random) -> None:
        """Fold another pick in: keep the slower, and a sample uniform over both."""
        if other.slowest.query_time > self.slowest.query_time:
            self.slowest = other.slowest
        total = self.seen + other.seen
        if rng.random() * total < other.seen:
            self.sampled = other.sampled
        self.seen = total


@dataclass(slots=True)
class QuerySeen:
    """A query class as one batch saw it, with one statement of it (for table extraction)."""

    fingerprint: str
    first_seen: datetime
    last_seen: datetime
    sample: str


@dataclass(slots=True)
class BatchDigest:
    """Everything a batch contributes to the metric store, at minute resolution."""

    buckets: dict[BucketKey, BucketMetrics] = field(default_factory=dict)
    queries: dict[str, QuerySeen] = field(default_factory=dict)
    examples: dict[tuple[str, datetime], ExamplePick] = field(default_factory=dict)


def digest_events(
    events: Iterable[Event],
    fingerprinter: Fingerprinter | None = None,
    rng: random.Random | None = None,
) -> BatchDigest:
    """Fingerprint each event and aggregate per query, dimensions and minute.

    Events without a timestamp cannot be placed in time and must be dated by the caller.

    Args:
        events: The batch's events.
        fingerprinter: Gives each statement's fingerprint and query_id, with the grouping
            rules in force; a plain one by default.
        rng: Draws the random example of each query and minute.

    Example:
        >>> digest = digest_events(events)
        >>> sum(m.count for m in digest.buckets.values()) == len(events)
        True
    """
    classify = fingerprinter or Fingerprinter()
    draw = (rng or random.Random()).random
    digest = BatchDigest()
    buckets = digest.buckets
    queries = digest.queries
    examples = digest.examples
    for event in events:
        ts = event.ts
        if ts is None:
            raise ValueError("event without a timestamp")
        text = event.query
        fp, qid = classify(text)
        seen = queries.get(qid)
        if seen is None:
            queries[qid] = QuerySeen(fp, ts, ts, text)
        elif ts < seen.first_seen:
            seen.first_seen = ts
        elif ts > seen.last_seen:
            seen.last_seen = ts
        minute = ts.replace(second=0, microsecond=0)
        schema = event.db or ""
        key = BucketKey(qid, schema, event.user or "", event.host or "", minute)
        bucket = buckets.get(key)
        query_time = event.query_time
        if bucket is None:
            bucket = buckets[key] = BucketMetrics(
                query_time_min=query_time, query_time_max=query_time, histogram=LatencyHistogram()
            )
        else:
            if query_time < bucket.query_time_min:  # type: ignore[operator]
                bucket.query_time_min = query_time
            if query_time > bucket.query_time_max:  # type: ignore[operator]
                bucket.query_time_max = query_time
        bucket.count += 1
        bucket.query_time_sum += query_time
        bucket.histogram.add(query_time)  # type: ignore[union-attr]
        lock_time = event.lock_time
        if lock_time is not None and (
            bucket.lock_time_max is None or lock_time > bucket.lock_time_max
        ):
            bucket.lock_time_max = lock_time
        sums = bucket.sums
        for name in SUM_METRICS:
            value = getattr(event, name, None)
            if value is not None:
                sums[name] = sums.get(name, 0) + value
        pick = examples.get((qid, minute))
        truncated = getattr(event, "truncated", False)  # only slow-log events can be cut
        if pick is None:
            example = Example(text, query_time, ts, schema, truncated=truncated)
            examples[(qid, minute)] = ExamplePick(example, example, 1)
        else:
            pick.seen += 1
            if query_time > pick.slowest.query_time:
                pick.slowest = Example(text, query_time, ts, schema, truncated=truncated)
            if draw() * pick.seen < 1.0:
                pick.sampled = Example(text, query_time, ts, schema, truncated=truncated)
    return digest


class PerfSchemaRow(Protocol):
    """What aggregation needs from a performance_schema digest delta (see SUM_METRICS)."""

    @property
    def schema_name(self) -> str | None: ...
    @property
    def digest(self) -> str: ...
    @property
    def digest_text(self) -> str | None: ...
    @property
    def interval_start(self) -> datetime: ...
    @property
    def interval_end(self) -> datetime: ...
    @property
    def count_star(self) -> int: ...
    @property
    def sum_timer_wait(self) -> float: ...
    @property
    def example(self) -> str | None: ...
    @property
    def example_literals(self) -> str | None: ...


def digest_perfschema(
    rows: Iterable[PerfSchemaRow], fingerprinter: Fingerprinter | None = None
) -> BatchDigest:
    """Aggregate performance_schema digest deltas into minute buckets.

    A delta covers a poll interval and lands in the minute of the interval's midpoint. Its
    query_id is that of its DIGEST_TEXT, fingerprinted like slow-log text, so both sources
    agree. Per-interval minimum and maximum are unknown (the server keeps lifetime ones):
    they are None unless the delta is one statement. The histogram comes from MySQL 8's
    histogram buckets (each counted at the geometric middle of its bucket) where sent.

    Example:
        >>> digest = digest_perfschema(rows)
        >>> sum(m.count for m in digest.buckets.values()) == sum(r.count_star for r in rows)
        True
    """
    classify = fingerprinter or Fingerprinter()
    digest = BatchDigest()
    for row in rows:
        if not row.count_star:
            continue
        # A digest without text (performance_schema_max_digest_length reached) is still load.
        text = row.digest_text or row.example or f"/* digest {row.digest} */"
        fp, qid = classify(text)
        middle = row.interval_start + (row.interval_end - row.interval_start) / 2
        seen = digest.queries.get(qid)
        if seen is None:
            digest.queries[qid] = QuerySeen(fp, middle, middle, row.example or text)
        else:
            seen.first_seen = min(seen.first_seen, middle)
            seen.last_seen = max(seen.last_seen, middle)
        minute = middle.replace(second=0, microsecond=0)
        schema = row.schema_name or ""
        metrics = _perfschema_metrics(row)
        key = BucketKey(qid, schema, "", "", minute)
        known = digest.buckets.get(key)
        if known is None:
            digest.buckets[key] = metrics
        else:
            known.merge(metrics)
        if row.example is not None:
            example = Example(
                row.example,
                row.sum_timer_wait / row.count_star,
                middle,
                schema,
                masked=row.example_literals == "masked",
            )
            pick = ExamplePick(example, example, row.count_star)
            current = digest.examples.get((qid, minute))
            if current is None:
                digest.examples[(qid, minute)] = pick
            else:
                current.merge(pick, random.Random())
    return digest


def _perfschema_metrics(row: PerfSchemaRow) -> BucketMetrics:
    single = row.count_star == 1
    metrics = BucketMetrics(
        count=row.count_star,
        query_time_sum=row.sum_timer_wait,
        query_time_min=row.sum_timer_wait if single else None,
        query_time_max=row.sum_timer_wait if single else None,
    )
    for name, columns in _PERFSCHEMA_SUMS.items():
        values = [v for v in (getattr(row, c, None) for c in columns) if v is not None]
        if values:
            metrics.sums[name] = sum(values)
    buckets = getattr(row, "histogram", None)
    if buckets:
        histogram = LatencyHistogram()
        for bucket in buckets:
            if bucket.count:
                middle = (bucket.low * bucket.high) ** 0.5 if bucket.low > 0 else bucket.high / 2
                histogram.add(middle, bucket.count)
        metrics.histogram = histogram if histogram.count else None
    return metrics


def rollup(
    buckets: Mapping[BucketKey, BucketMetrics], resolution: Resolution, *, dimensions: bool = True
) -> dict[BucketKey, BucketMetrics]:
    """Merge minute buckets into buckets of ``resolution`` (new objects; the input is kept).

    Without ``dimensions``, the buckets of a query are merged whatever their schema, user
    and host (the keys have '' for them).

    Example:
        >>> hours = rollup(digest.buckets, Resolution.HOUR)
        >>> sum(m.count for m in hours.values()) == sum(m.count for m in digest.buckets.values())
        True
    """
    out: dict[BucketKey, BucketMetrics] = {}
    for key, metrics in buckets.items():
        start = floor_to(key.start, resolution)
        if dimensions:
            wide = BucketKey(key.query_id, key.schema, key.user, key.host, start)
        else:
            wide = BucketKey(key.query_id, "", "", "", start)
        target = out.get(wide)
        if target is None:
            target = out[wide] = BucketMetrics()
        target.merge(metrics)
    return out


def rollup_examples(
    examples: Mapping[tuple[str, datetime], ExamplePick],
    resolution: Resolution,
    rng: random.Random | None = None,
) -> dict[tuple[str, datetime], ExamplePick]:
    """Merge per-minute example picks into picks of ``resolution``."""
    draw = rng or random.Random()
    out: dict[tuple[str, datetime], ExamplePick] = {}
    for (qid, start), pick in examples.items():
        wide = (qid, floor_to(start, resolution))
        target = out.get(wide)
        if target is None:
            out[wide] = ExamplePick(pick.slowest, pick.sampled, pick.seen)
        else:
            target.merge(pick, draw)
    return out


def _least(a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    return a if b is None or a <= b else b


def _greatest(a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    return a if b is None or a >= b else b
