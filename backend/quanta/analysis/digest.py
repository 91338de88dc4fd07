"""Offline digest of slow-log events: per query class, what pt-query-digest reports.

:class:`Digest` folds events one at a time into per-class statistics (count, sums, extremes,
a latency histogram for percentiles, databases, users, hosts, first and last seen, the worst
example) and into global totals. Digests of parts of a log merge into the digest of the whole,
so a large file can be read by several processes.

Example:
    >>> from quanta.analysis.slowlog import SlowLogEvent
    >>> digest = Digest()
    >>> event = SlowLogEvent("SELECT 1", None, 0.5, 0.0, 1, 1, None, "db", "u", "h", 1, {})
    >>> digest.add(event, "select ?", "1FE1379FE2A31B8D")
    >>> digest.query_time.sum
    0.5
"""

from __future__ import annotations

import math
import operator
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from quanta.analysis.fingerprinter import Fingerprinter, cache_key
from quanta.analysis.histogram import LatencyHistogram
from quanta.analysis.ptstats import Buckets
from quanta.analysis.slowlog import SINK_COLUMNS, ColumnSink, SlowLogEvent

__all__ = ["Digest", "Example", "Metric", "QueryClassDigest"]

_T = TypeVar("_T")

# Header attributes that identify rather than measure: never summed.
_NOT_METRICS = frozenset(("Thread_id", "Id", "InnoDB_trx_id", "Log_slow_rate_type", "ip"))


@dataclass(slots=True)
class Metric:
    """Count, sum, extremes and sum of squares of one numeric attribute.

    ``count`` is the number of events that had the attribute: a metric a source does not give
    stays empty rather than being counted as 0.
    """

    count: int = 0
    sum: float = 0.0
    min: float = math.inf
    max: float = -math.inf
    sum_of_squares: float = 0.0

    def add(self, value: float) -> None:
        """Fold in one value."""
        self.count += 1
        self.sum += value
        self.sum_of_squares += value * value
        if value < self.min:
            self.min = value
        if value > self.max:
            self.max = value

    def add_all(self, values: list[float] | list[int]) -> None:
        """Fold in many values at once."""
        if not values:
            return
        self.count += len(values)
        self.sum += math.fsum(values)
        self.sum_of_squares += math.fsum(map(operator.mul, values, values))
        self.min = min(self.min, min(values))
        self.max = max(self.max, max(values))

    def merge(self, other: Metric) -> None:
        """Fold in another metric of the same attribute."""
        self.count += other.count
        self.sum += other.sum
        self.sum_of_squares += other.sum_of_squares
        self.min = min(self.min, other.min)
        self.max = max(self.max, other.max)

    @property
    def avg(self) -> float | None:
        """Mean value, None when no event had the attribute."""
        return self.sum / self.count if self.count else None

    @property
    def stddev(self) -> float | None:
        """Population standard deviation, None when no event had the attribute."""
        if not self.count:
            return None
        mean = self.sum / self.count
        return math.sqrt(max(self.sum_of_squares / self.count - mean * mean, 0.0))


@dataclass(slots=True)
class Example:
    """The slowest occurrence of a query class."""

    query: str
    query_time: float
    ts: datetime | None
    database: str | None


def _new_columns() -> list[Any]:
    """One list per SINK_COLUMNS field, then the attribute columns: {name: values}."""
    return [*([] for _ in SINK_COLUMNS), {}]


@dataclass(slots=True)
class QueryClassDigest:
    """Everything the report says about one query class.

    Events wait in ``pending``, one list per field (:data:`~quanta.analysis.slowlog.
    SINK_COLUMNS`: the C reader fills them directly), and are folded in by :meth:`flush` a
    column at a time with built-in functions: several times faster than updating every
    statistic per event. ``pending`` is the same list object for the life of the class.
    """

    query_id: str
    fingerprint: str
    count: int = 0
    query_time: Metric = field(default_factory=Metric)
    query_time_histogram: LatencyHistogram = field(default_factory=LatencyHistogram)
    lock_time: Metric = field(default_factory=Metric)
    rows_sent: Metric = field(default_factory=Metric)
    rows_examined: Metric = field(default_factory=Metric)
    rows_affected: Metric = field(default_factory=Metric)
    query_length: Metric = field(default_factory=Metric)
    # Every other numeric header attribute under the name the log uses (Bytes_sent, ...);
    # Yes/No attributes count as 1/0, so their sum is the number of Yes.
    attributes: dict[str, Metric] = field(default_factory=dict)
    databases: Counter[str] = field(default_factory=Counter)
    users: Counter[str] = field(default_factory=Counter)
    hosts: Counter[str] = field(default_factory=Counter)
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    example: Example | None = None
    pending: list[Any] = field(default_factory=_new_columns)
    # pt-query-digest's buckets of each metric of _METRIC_FIELDS and of each numeric
    # attribute: the report's overall 95th percentile, stddev and median are computed from
    # them as pt-query-digest does.
    buckets: dict[str, Buckets] = field(default_factory=dict)
    # The attributes logged as Yes/No (pt-query-digest's "Boolean" section).
    flags: set[str] = field(default_factory=set)

    def add(self, event: SlowLogEvent) -> None:
        """Take one event (folded in by the next :meth:`flush`)."""
        for column, name in zip(self.pending, SINK_COLUMNS, strict=False):
            column.append(getattr(event, name))
        if not _NOT_METRICS.issuperset(event.attributes):
            self._add_attributes(event)

    def flush(self) -> None:
        """Fold the pending events into the statistics."""
        columns = self.pending
        if not columns[0]:
            return  # the attribute columns fill only with the others
        queries, times, query_times, lock_times, rows_sent, rows_examined, rows_affected = columns[
            :7
        ]
        databases, users, hosts, attributes = columns[7:]
        columns[:] = _new_columns()  # in place: a sink's groups hold this list
        for name, values in attributes.items():
            if name not in _NOT_METRICS:
                metric = self.attributes.get(name)
                if metric is None:
                    metric = self.attributes[name] = Metric()
                # Ints and flags as they are (fsum takes them), the extremes as floats.
                metric.add_all(values)
                metric.min, metric.max = float(metric.min), float(metric.max)
                if not values:
                    continue
                if type(values[0]) is bool:
                    self.flags.add(name)
                else:
                    self.buckets.setdefault(name, Buckets()).add_many(values)
        self.count += len(queries)
        self.query_time.add_all(query_times)
        self.query_time_histogram.add_many(query_times)
        self.lock_time.add_all(lock_times)
        self.rows_sent.add_all(_known(rows_sent))
        self.rows_examined.add_all(_known(rows_examined))
        self.rows_affected.add_all(_known(rows_affected))
        lengths = list(map(len, queries))
        self.query_length.add_all(lengths)
        for name, values in (
            ("query_time", query_times),
            ("lock_time", lock_times),
            ("rows_sent", _known(rows_sent)),
            ("rows_examined", _known(rows_examined)),
            ("rows_affected", _known(rows_affected)),
            ("query_length", lengths),
        ):
            if values:
                self.buckets.setdefault(name, Buckets()).add_many(values)
        _count_names(self.databases, databases)
        _count_names(self.users, users)
        _count_names(self.hosts, hosts)
        known_times = _known(times)
        if known_times:
            self.first_seen = _earliest(self.first_seen, min(known_times))
            self.last_seen = _latest(self.last_seen, max(known_times))
        worst = query_times.index(max(query_times))  # the first of equals: the earliest
        if self.example is None or query_times[worst] > self.example.query_time:
            self.example = Example(
                queries[worst], query_times[worst], times[worst], databases[worst]
            )

    def _add_attributes(self, event: SlowLogEvent) -> None:
        for name, value in event.attributes.items():
            if isinstance(value, str) or name in _NOT_METRICS:
                continue
            metric = self.attributes.get(name)
            if metric is None:
                metric = self.attributes[name] = Metric()
            metric.add(float(value))
            if type(value) is bool:
                self.flags.add(name)
            else:
                self.buckets.setdefault(name, Buckets()).add_many([value])

    def merge(self, other: QueryClassDigest) -> None:
        """Fold in the same class's digest of a later part of the log."""
        self.flush()
        other.flush()
        self.count += other.count
        for name in _METRIC_FIELDS:
            getattr(self, name).merge(getattr(other, name))
        self.query_time_histogram.merge(other.query_time_histogram)
        for name, buckets in other.buckets.items():
            self.buckets.setdefault(name, Buckets()).merge(buckets)
        for name, metric in other.attributes.items():
            self.attributes.setdefault(name, Metric()).merge(metric)
        self.flags |= other.flags
        self.databases.update(other.databases)
        self.users.update(other.users)
        self.hosts.update(other.hosts)
        self.first_seen = _earliest(self.first_seen, other.first_seen)
        self.last_seen = _latest(self.last_seen, other.last_seen)
        if other.example is not None and (
            self.example is None or other.example.query_time > self.example.query_time
        ):
            self.example = other.example


_METRIC_FIELDS = (
    "query_time",
    "lock_time",
    "rows_sent",
    "rows_examined",
    "rows_affected",
    "query_length",
)
# Events the classes of a digest hold pending, together, before they fold them in: bounds
# memory whatever the log's size, and the busy classes fold thousands at a time.
_PENDING_LIMIT = 1 << 16


@dataclass(slots=True)
class Digest:
    """Per-class digests of a log or a part of it; global totals are derived from them."""

    classes: dict[str, QueryClassDigest] = field(default_factory=dict)
    pending: int = 0  # events held by the classes, not folded in yet

    def add(self, event: SlowLogEvent, fingerprint: str, query_id: str) -> None:
        """Take one event whose class is ``query_id``."""
        self._class(query_id, fingerprint).add(event)
        self.took(1)

    def took(self, count: int) -> None:
        """Count events added to the classes' pending columns; fold them in past the limit."""
        self.pending += count
        if self.pending >= _PENDING_LIMIT:
            self.flush()

    def sink(self, fingerprinter: Fingerprinter) -> ColumnSink:
        """A sink for :func:`~quanta.analysis.slowlog.read_slow_log` that adds the events it
        takes to this digest, classified by ``fingerprinter``."""
        return _DigestSink(self, fingerprinter)

    def _class(self, query_id: str, fingerprint: str) -> QueryClassDigest:
        query_class = self.classes.get(query_id)
        if query_class is None:
            query_class = self.classes[query_id] = QueryClassDigest(query_id, fingerprint)
        return query_class

    def flush(self) -> None:
        """Fold every class's pending events in (before reading any statistic)."""
        self.pending = 0
        for query_class in self.classes.values():
            query_class.flush()

    def merge(self, other: Digest) -> None:
        """Fold in the digest of a later part of the same log."""
        for query_id, query_class in other.classes.items():
            mine = self.classes.get(query_id)
            if mine is None:
                self.classes[query_id] = query_class
            else:
                mine.merge(query_class)

    @property
    def events(self) -> int:
        """Events in all classes."""
        self.flush()
        return sum(c.count for c in self.classes.values())

    @property
    def query_time(self) -> Metric:
        """Response time over all classes."""
        self.flush()
        total = Metric()
        for query_class in self.classes.values():
            total.merge(query_class.query_time)
        return total

    def overall(self, name: str) -> tuple[Metric, Buckets]:
        """One metric of ``_METRIC_FIELDS`` (``rows_examined``...) over all classes."""
        self.flush()
        total, buckets = Metric(), Buckets()
        for query_class in self.classes.values():
            total.merge(getattr(query_class, name))
            if name in query_class.buckets:
                buckets.merge(query_class.buckets[name])
        return total, buckets

    def overall_attribute(self, name: str) -> tuple[Metric, Buckets]:
        """One header attribute (``Bytes_sent``...) over all classes; a Yes/No one counts
        its Yes in ``sum`` (and has no buckets)."""
        self.flush()
        total, buckets = Metric(), Buckets()
        for query_class in self.classes.values():
            if name in query_class.attributes:
                total.merge(query_class.attributes[name])
            if name in query_class.buckets:
                buckets.merge(query_class.buckets[name])
        return total, buckets

    def attribute_names(self) -> tuple[set[str], set[str]]:
        """The header attributes seen: (numeric ones, Yes/No ones)."""
        self.flush()
        names: set[str] = set()
        flags: set[str] = set()
        for query_class in self.classes.values():
            names.update(query_class.attributes)
            flags |= query_class.flags
        return names - flags, flags

    @property
    def ts_min(self) -> datetime | None:
        """Time of the earliest event."""
        self.flush()
        return min((c.first_seen for c in self.classes.values() if c.first_seen), default=None)

    @property
    def ts_max(self) -> datetime | None:
        """Time of the latest event."""
        self.flush()
        return max((c.last_seen for c in self.classes.values() if c.last_seen), default=None)

    def rename_database(self, old: str, new: str) -> None:
        """Replace a database name everywhere: a part of a log learns it from the part before."""
        self.flush()
        for query_class in self.classes.values():
            count = query_class.databases.pop(old, 0)
            if count:
                query_class.databases[new] += count
            example = query_class.example
            if example is not None and example.database == old:
                example.database = new or None

    def ranked(self) -> list[QueryClassDigest]:
        """Classes by total response time, worst first (ties by query_id, for stable output)."""
        self.flush()
        return sorted(self.classes.values(), key=lambda c: (-c.query_time.sum, c.query_id))


def _known(values: list[_T | None]) -> list[_T]:
    """The values that are not None (the list itself when all are: the usual case)."""
    missing = values.count(None)
    if not missing:
        return values  # type: ignore[return-value]
    return [] if missing == len(values) else [v for v in values if v is not None]


def _count_names(counter: Counter[str], names: list[str | None]) -> None:
    """Count names, a missing one (None) as ''."""
    counter.update(names)  # type: ignore[arg-type]
    missing = counter.pop(None, 0)  # type: ignore[call-overload]
    if missing:
        counter[""] += missing


class _DigestSink:
    """Feeds a digest from the C reader: its groups are the classes' pending columns."""

    __slots__ = ("_digest", "_fingerprinter", "groups")

    def __init__(self, digest: Digest, fingerprinter: Fingerprinter) -> None:
        self._digest = digest
        self._fingerprinter = fingerprinter
        self.groups: dict[str, list[Any]] = {}

    def room(self) -> int:
        """How many events the reader may add before the digest folds what it holds."""
        return _PENDING_LIMIT - self._digest.pending

    def classify(self, query: str) -> list[Any]:
        """The pending columns of the statement's class, remembered by its literal mask."""
        fingerprint, query_id = self._fingerprinter(query)
        columns = self._digest._class(query_id, fingerprint).pending
        key = cache_key(query)
        if key is not None:
            self.groups[key] = columns
        return columns

    def filled(self, count: int) -> None:
        """Count the events the reader added (the digest folds them in past its limit)."""
        self._digest.took(count)


def _earliest(a: datetime | None, b: datetime | None) -> datetime | None:
    return b if a is None else a if b is None else min(a, b)


def _latest(a: datetime | None, b: datetime | None) -> datetime | None:
    return b if a is None else a if b is None else max(a, b)
