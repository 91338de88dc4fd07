"""Fingerprint events and fold them into per-minute buckets, in memory; roll them up.

A batch from one agent is for one instance and one source, so within a batch a bucket is
identified by (query_id, schema, user, host, start). :func:`digest_events` folds slow-log
events, :func:`digest_perfschema` performance_schema digest deltas, and
:func:`digest_buckets` the minute buckets an agent folded itself (its query_ids taken again
from its fingerprints, so that the server's grouping rules apply); :func:`rollup` turns
minute buckets into hour or day buckets (exactly: every metric and the histogram merge).

A metric a source does not give stays ``None`` (stored NULL), never 0.
"""

from __future__ import annotations

import math
import operator
import random
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from itertools import accumulate, groupby
from types import SimpleNamespace
from typing import Any, Protocol, TypeVar, cast

from quanta.analysis.fingerprinter import Fingerprinter, cache_key
from quanta.analysis.histogram import LatencyHistogram, encode_values
from quanta.analysis.metrics import MAX_COUNTER, PERFSCHEMA_SUMS, SUM_METRICS
from quanta.analysis.resolution import Resolution, floor_to
from quanta.analysis.slowlog import SINK_COLUMNS

__all__ = [
    "MAX_COUNTER",
    "SUM_METRICS",
    "BatchDigest",
    "BucketKey",
    "BucketMetrics",
    "Example",
    "ExamplePick",
    "FoldedBatch",
    "MinuteFolder",
    "QuerySeen",
    "digest_buckets",
    "digest_events",
    "digest_perfschema",
    "merged",
    "rollup",
    "rollup_examples",
]

_N = TypeVar("_N", int, float)

# The metric definitions are the registry's (re-exported: their users import them from here).
_PERFSCHEMA_SUMS = PERFSCHEMA_SUMS


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


# The columns of folded buckets; a column of each extended metric some bucket has follows.
FOLDED_COLUMNS = (
    "query", "start", "db", "user", "host", "count", "query_time_sum", "query_time_min",
    "query_time_max", "histogram", "lock_time_max", "lock_time", "rows_sent", "rows_examined",
    "rows_affected",
)  # fmt: skip
# The counters of the usual entry, summed per bucket.
_COUNTED = ("rows_sent", "rows_examined", "rows_affected")


@dataclass(slots=True)
class FoldedBatch:
    """Minute buckets folded from slow-log events, as columns: the form they travel in.

    The n-th value of every column in ``buckets`` is the n-th bucket's (see FOLDED_COLUMNS):
    ``query`` is the position of its class in ``queries``, ``start`` its minute, and
    ``histogram`` its stored form (LatencyHistogram.to_bytes); a sum is None where no event
    of the bucket gave it. No object per bucket: a batch holds tens of thousands.
    """

    queries: dict[str, QuerySeen] = field(default_factory=dict)
    buckets: dict[str, list[Any]] = field(
        default_factory=lambda: {name: [] for name in FOLDED_COLUMNS}
    )
    examples: dict[tuple[str, datetime], ExamplePick] = field(default_factory=dict)

    @property
    def statements(self) -> int:
        """The statements the buckets count."""
        return sum(self.buckets["count"])

    def digest(self) -> BatchDigest:
        """The same buckets as a digest, histograms decoded."""
        digest = BatchDigest(queries=dict(self.queries), examples=dict(self.examples))
        histograms = [LatencyHistogram.from_bytes(data) for data in self.buckets["histogram"]]
        columns = SimpleNamespace(**{**self.buckets, "histogram": histograms})
        _digest_bucket_columns(digest, list(self.queries), cast("BucketColumns", columns))
        return digest


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


class MinuteFolder:
    """Folds a stream of slow-log events into per-minute buckets, as :func:`digest_events`
    does, with the events of the usual shape handed over by the C reader as columns.

    It is a :class:`~quanta.analysis.slowlog.ColumnSink` for
    :func:`~quanta.analysis.slowlog.read_slow_log`: each query class's events wait in columns
    (:data:`~quanta.analysis.slowlog.SINK_COLUMNS`), found by the statement's literal mask,
    and are folded a class at a time by :meth:`digest`. The events the reader yields are
    given to :meth:`add`, with the extended metrics (SUM_METRICS beyond the usual entry's)
    the caller read from their attributes. The sampled example of a minute is drawn from its
    events with ``rng``: the same events and seed give the same digest.

    Example:
        >>> folder = MinuteFolder(Fingerprinter(), random.Random(0))
        >>> for event in read_slow_log(log, sink=folder):  # only the unusual entries
        ...     folder.add(event, extended={"bytes_sent": 60})
        >>> batch = folder.fold()
    """

    __slots__ = ("_classes", "_extended", "_fingerprinter", "_rng", "_truncated", "groups")

    def __init__(self, fingerprinter: Fingerprinter, rng: random.Random) -> None:
        self._fingerprinter = fingerprinter
        self._rng = rng
        self.groups: dict[str, list[list[Any]]] = {}
        self._classes: dict[str, tuple[str, list[list[Any]]]] = {}
        # Per (query_id, schema, user, host, minute), a BucketKey's fields as a tuple (hashed
        # in C: a BucketKey's hash is Python code, and this runs per event): extended sums.
        self._extended: dict[tuple[str, str, str, str, datetime], dict[str, int | float]] = {}
        self._truncated: set[tuple[str, int]] = set()  # (query_id, position in its columns)

    def classify(self, query: str) -> list[list[Any]]:
        """The columns of the statement's class, remembered by its literal mask."""
        columns = self._class_of(query)[1]
        key = cache_key(query)
        if key is not None:
            self.groups[key] = columns
        return columns

    def room(self) -> int:
        """No limit: the caller decides when to fold (see :meth:`digest`)."""
        return 1 << 62

    def filled(self, count: int) -> None:
        """Nothing to do: the caller decides when to fold."""

    def add(
        self, event: Event, extended: Mapping[str, int | float], truncated: bool = False
    ) -> None:
        """Take an event the reader yielded, its extended metrics, and whether it was cut."""
        if event.ts is None:
            raise ValueError("event without a timestamp")
        query_id, columns = self._class_of(event.query)
        if truncated:
            self._truncated.add((query_id, len(columns[0])))
        try:
            values = _sink_fields(event)
        except AttributeError:  # an event without some field: None for it
            values = tuple(getattr(event, name, None) for name in SINK_COLUMNS)
        for column, value in zip(columns, values, strict=True):
            column.append(value)
        if extended:
            minute = _minute(event.ts)
            key = (query_id, event.db or "", event.user or "", event.host or "", minute)
            sums = self._extended.setdefault(key, {})
            for name, value in extended.items():
                sums[name] = sums.get(name, 0) + value

    def __len__(self) -> int:
        return sum(len(columns[0]) for _, columns in self._classes.values())

    def fold(self, before: datetime | None = None) -> FoldedBatch:
        """Fold the events taken so far into minute buckets, and forget them.

        With ``before``, only the events of earlier minutes are folded; the others are kept
        for the next fold (so that consecutive batches of a log in time order share no
        minute bucket).
        """
        batch = FoldedBatch()
        extended: list[dict[str, int | float] | None] = []
        truncated, self._truncated = self._truncated, set()
        for query_id, (fingerprint, columns) in self._classes.items():
            if not columns[0]:
                continue
            kept = self._fold(batch, extended, query_id, fingerprint, columns, before)
            for column in columns:  # in place: the groups hold these lists
                column[:] = [column[i] for i in kept]
            self._truncated.update(
                (query_id, n) for n, i in enumerate(kept) if (query_id, i) in truncated
            )
        if before is None:
            self._extended.clear()
        else:
            self._extended = {k: v for k, v in self._extended.items() if k[4] >= before}
        for name in sorted(set().union(*filter(None, extended)) - set(batch.buckets)):
            batch.buckets[name] = [sums.get(name) if sums else None for sums in extended]
        return batch

    def digest(self, before: datetime | None = None) -> BatchDigest:
        """:meth:`fold`, as a digest."""
        return self.fold(before).digest()

    def latest_minute(self) -> datetime | None:
        """The minute of the newest event taken (None when there is none)."""
        latest = [max(columns[1]) for _, columns in self._classes.values() if columns[1]]
        return _minute(max(latest)) if latest else None

    def _class_of(self, query: str) -> tuple[str, list[list[Any]]]:
        fingerprint, query_id = self._fingerprinter(query)
        known = self._classes.get(query_id)
        if known is None:
            known = self._classes[query_id] = (fingerprint, [[] for _ in SINK_COLUMNS])
        return query_id, known[1]

    def _fold(
        self,
        batch: FoldedBatch,
        extended: list[dict[str, int | float] | None],
        query_id: str,
        fingerprint: str,
        columns: list[list[Any]],
        before: datetime | None,
    ) -> list[int]:
        """Fold one class's events (those before ``before``) into buckets and example picks;
        return the positions of the events left, in file order.

        The events are sorted by (minute, schema, user, host), in file order within: each
        bucket is then one slice of every column, summed by built-in functions a column at
        a time, and the events left are the end of that order.
        """
        times = columns[1]
        if None in times:
            raise ValueError("event without a timestamp")
        keys = [
            (_minute(ts), db or "", user or "", host or "")
            for ts, db, user, host in zip(times, columns[7], columns[8], columns[9], strict=True)
        ]
        order = sorted(range(len(keys)), key=keys.__getitem__)
        left: list[int] = []
        if before is not None:
            split = bisect_left(order, before, key=lambda i: keys[i][0])
            order, left = order[:split], sorted(order[split:])
        if not order:
            return left
        folded_times = [times[i] for i in order]
        first = min(order)  # the class's sample: its first statement in the batch
        batch.queries[query_id] = QuerySeen(
            fingerprint, min(folded_times), max(folded_times), columns[0][first]
        )
        runs = [(key, len(list(run))) for key, run in groupby(keys[i] for i in order)]
        ends = list(accumulate(length for _, length in runs))
        bounds = list(zip([0, *ends[:-1]], ends, strict=True))
        query_times, lock_times, rows_sent, rows_examined, rows_affected = (
            [column[i] for i in order] for column in columns[2:7]
        )
        out = batch.buckets
        out["query"] += [len(batch.queries) - 1] * len(runs)
        for name, n in (("start", 0), ("db", 1), ("user", 2), ("host", 3)):
            out[name] += [key[n] for key, _ in runs]
        out["count"] += [length for _, length in runs]
        run_times = [query_times[start:end] for start, end in bounds]
        out["query_time_sum"] += map(math.fsum, run_times)
        out["query_time_min"] += map(min, run_times)
        out["query_time_max"] += map(max, run_times)
        out["histogram"] += map(encode_values, run_times)
        locks = [lock_times[start:end] for start, end in bounds]
        if None in lock_times:
            locks = [_known_values(run) for run in locks]
        out["lock_time_max"] += [max(known) if known else None for known in locks]
        out["lock_time"] += [math.fsum(known) if known else None for known in locks]
        for name, values in zip(_COUNTED, (rows_sent, rows_examined, rows_affected), strict=True):
            out[name] += _run_sums(values, bounds)
        if self._extended:
            extended += [
                self._extended.get((query_id, db, user, host, minute))
                for (minute, db, user, host), _ in runs
            ]
        else:
            extended += [None] * len(runs)
        start = 0
        for minute, minute_runs in groupby(runs, key=lambda run: run[0][0]):
            end = start + sum(length for _, length in minute_runs)
            self._pick(batch, query_id, columns, order, query_times, start, end, minute)
            start = end
        return left

    def _pick(
        self,
        batch: FoldedBatch,
        query_id: str,
        columns: list[list[Any]],
        order: list[int],
        query_times: list[float],
        start: int,
        end: int,
        minute: datetime,
    ) -> None:
        """The example pick of the minute that is ``order[start:end]``."""
        slowest_time = max(query_times[start:end])
        # The first of equals in file order, as digest_events keeps it.
        slowest = min(order[n] for n in range(start, end) if query_times[n] == slowest_time)
        sampled = order[start + int(self._rng.random() * (end - start))]
        batch.examples[(query_id, minute)] = ExamplePick(
            self._example(query_id, columns, slowest),
            self._example(query_id, columns, sampled),
            end - start,
        )

    def _example(self, query_id: str, columns: list[list[Any]], index: int) -> Example:
        return Example(
            columns[0][index], columns[2][index], columns[1][index], columns[7][index] or "",
            truncated=(query_id, index) in self._truncated,
        )  # fmt: skip


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


class QueryRow(Protocol):
    """A query class an agent saw in its batch: fingerprint, first/last seen, a statement."""

    @property
    def fingerprint(self) -> str: ...
    @property
    def first_seen(self) -> datetime: ...
    @property
    def last_seen(self) -> datetime: ...
    @property
    def sample(self) -> str: ...


class BucketColumns(Protocol):
    """Minute buckets an agent folded, as columns (the n-th value of each is the n-th
    bucket's): its query (an index into the batch's queries), dimensions, count, query time,
    histogram, and the lock time maximum and SUM_METRICS sums as optional columns."""

    @property
    def query(self) -> Sequence[int]: ...
    @property
    def start(self) -> Sequence[datetime]: ...
    @property
    def db(self) -> Sequence[str]: ...
    @property
    def user(self) -> Sequence[str]: ...
    @property
    def host(self) -> Sequence[str]: ...
    @property
    def count(self) -> Sequence[int]: ...
    @property
    def query_time_sum(self) -> Sequence[float]: ...
    @property
    def query_time_min(self) -> Sequence[float]: ...
    @property
    def query_time_max(self) -> Sequence[float]: ...
    @property
    def histogram(self) -> Sequence[LatencyHistogram]: ...
    @property
    def lock_time_max(self) -> Sequence[float | None] | None: ...


class ExampleRow(Protocol):
    """One statement an agent kept as an example."""

    @property
    def query(self) -> str: ...
    @property
    def query_time(self) -> float: ...
    @property
    def ts(self) -> datetime: ...
    @property
    def db(self) -> str: ...
    @property
    def truncated(self) -> bool: ...


class PickRow(Protocol):
    """The examples an agent kept for one query (an index into its queries) and minute."""

    @property
    def query(self) -> int: ...
    @property
    def start(self) -> datetime: ...
    @property
    def seen(self) -> int: ...
    @property
    def slowest(self) -> ExampleRow: ...
    @property
    def sampled(self) -> ExampleRow: ...


def digest_buckets(
    queries: Sequence[QueryRow],
    buckets: BucketColumns | None,
    picks: Iterable[PickRow],
    fingerprinter: Fingerprinter | None = None,
    *,
    masked: bool = False,
    rng: random.Random | None = None,
) -> BatchDigest:
    """The digest of a batch an agent folded into minute buckets itself.

    Each query's fingerprint is fingerprinted again (a fingerprint is its own fingerprint,
    so this only applies the grouping rules in force, and a fingerprint an older agent
    wrote differently is written as this server writes it); buckets and examples that the
    rules put in one class are merged.

    Args:
        queries: The batch's query classes; buckets and picks refer to them by position.
        buckets: Minute buckets, as columns.
        picks: Examples per query and minute.
        fingerprinter: Gives fingerprints and query_ids with the grouping rules in force.
        masked: The examples hold fingerprints, not statements with their literals.
        rng: Draws between the sampled examples of merged picks.

    Example:
        >>> digest = digest_buckets(queries, buckets, picks)
        >>> sum(m.count for m in digest.buckets.values()) == sum(buckets.count)
        True
    """
    classify = fingerprinter or Fingerprinter()
    draw = rng or random.Random()
    digest = BatchDigest()
    classes = [classify(query.fingerprint) for query in queries]
    for query, (fp, qid) in zip(queries, classes, strict=True):
        seen = digest.queries.get(qid)
        if seen is None:
            digest.queries[qid] = QuerySeen(fp, query.first_seen, query.last_seen, query.sample)
        else:
            seen.first_seen = min(seen.first_seen, query.first_seen)
            seen.last_seen = max(seen.last_seen, query.last_seen)
    if buckets is not None:
        _digest_bucket_columns(digest, [qid for _, qid in classes], buckets)
    for pick in picks:
        qid = classes[pick.query][1]
        kept = ExamplePick(
            _example_of(pick.slowest, masked), _example_of(pick.sampled, masked), pick.seen
        )
        known_pick = digest.examples.get((qid, pick.start))
        if known_pick is None:
            digest.examples[(qid, pick.start)] = kept
        else:
            known_pick.merge(kept, draw)
    return digest


def _digest_bucket_columns(
    digest: BatchDigest, query_ids: list[str], buckets: BucketColumns
) -> None:
    rows = len(buckets.query)
    lock_time_max = buckets.lock_time_max or [None] * rows
    sums = [(name, values) for name in SUM_METRICS if (values := getattr(buckets, name, None))]
    columns = zip(
        buckets.query, buckets.start, buckets.db, buckets.user, buckets.host, buckets.count,
        buckets.query_time_sum, buckets.query_time_min, buckets.query_time_max, lock_time_max,
        buckets.histogram, strict=True,
    )  # fmt: skip
    for n, (query, start, db, user, host, count, total, least, most, lock, histogram) in enumerate(
        columns
    ):
        metrics = BucketMetrics(
            count, total, least, most, lock, histogram,
            {name: value for name, values in sums if (value := values[n]) is not None},
        )  # fmt: skip
        key = BucketKey(query_ids[query], db, user, host, start)
        known = digest.buckets.get(key)
        if known is None:
            digest.buckets[key] = metrics
        else:
            known.merge(metrics)


_sink_fields = operator.attrgetter(*SINK_COLUMNS)


@lru_cache(maxsize=4096)
def _minute(ts: datetime) -> datetime:
    """The start of the minute of ``ts`` (events of one second share one datetime object)."""
    return ts.replace(second=0, microsecond=0)


def _run_sums(values: list[int | None], bounds: list[tuple[int, int]]) -> list[int | None]:
    """The sum of each run's (start, end) known values: None where a run has none."""
    if None not in values and max(cast("list[int]", values), default=0) <= MAX_COUNTER:
        totals = list(accumulate(cast("list[int]", values), initial=0))  # ints: exact
        return [totals[end] - totals[start] for start, end in bounds]
    runs = [_known_values(values[start:end]) for start, end in bounds]
    return [sum(known) if known else None for known in runs]


def _known_values(values: list[_N | None]) -> list[_N]:
    """The values that are not None nor a wrapped counter (above MAX_COUNTER)."""
    if None not in values:
        known = cast("list[_N]", values)
        if max(known) <= MAX_COUNTER:
            return known
    return [v for v in values if v is not None and v <= MAX_COUNTER]


def _example_of(row: ExampleRow, masked: bool) -> Example:
    return Example(row.query, row.query_time, row.ts, row.db, masked, row.truncated)


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
    starts = {start: floor_to(start, resolution) for start in {key.start for key in buckets}}
    parts: dict[BucketKey, list[BucketMetrics]] = {}
    for key, metrics in buckets.items():
        start = starts[key.start]
        if dimensions:
            wide = BucketKey(key.query_id, key.schema, key.user, key.host, start)
        else:
            wide = BucketKey(key.query_id, "", "", "", start)
        parts.setdefault(wide, []).append(metrics)
    return {wide: merged(group) for wide, group in parts.items()}


def merged(parts: Sequence[BucketMetrics], *, histogram: bool = True) -> BucketMetrics:
    """The buckets summed into a new one: what :meth:`BucketMetrics.merge` of each into an
    empty bucket gives (the same floats), in one pass per metric; without their histograms
    if ``histogram`` is false."""
    sums: dict[str, int | float] = {}
    for part in parts:
        for name, value in part.sums.items():
            sums[name] = sums.get(name, 0) + value
    out = BucketMetrics(
        count=sum(part.count for part in parts),
        query_time_sum=sum((part.query_time_sum for part in parts), 0.0),
        query_time_min=min(_known(part.query_time_min for part in parts), default=None),
        query_time_max=max(_known(part.query_time_max for part in parts), default=None),
        lock_time_max=max(_known(part.lock_time_max for part in parts), default=None),
        sums=sums,
    )
    histograms = [part.histogram for part in parts if part.histogram is not None]
    if histogram and histograms:
        out.histogram = LatencyHistogram()
        for other in histograms:
            out.histogram.merge(other)
    return out


def _known(values: Iterable[float | None]) -> list[float]:
    return [value for value in values if value is not None]


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
