"""The values a batch is folded into, at minute resolution, and their rollups.

A bucket is identified by (query_id, schema, user, host, start, tags) (:class:`BucketKey`) and
holds its sums and extremes (:class:`BucketMetrics`); a batch's buckets, query classes and
example picks make a :class:`BatchDigest`. :func:`add_columns` merges buckets given as
columns into a digest; :func:`rollup` turns minute buckets into hour or day buckets
(exactly: every metric and the histogram merge), :func:`rollup_examples` likewise for
example picks. The server's digests of a batch are in :mod:`quanta.analysis.aggregate`, the
agent's folder in :mod:`quanta.analysis.folder`.

A metric a source does not give stays ``None`` (stored NULL), never 0.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from quanta.analysis.histogram import LatencyHistogram
from quanta.analysis.metrics import SUM_METRICS
from quanta.analysis.resolution import Resolution, floor_to

__all__ = [
    "BatchDigest",
    "BucketColumns",
    "BucketKey",
    "BucketMetrics",
    "Event",
    "Example",
    "ExamplePick",
    "QuerySeen",
    "add_columns",
    "merged",
    "rollup",
    "rollup_examples",
]


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
    """The dimensions of one bucket; a missing dimension is ''.

    ``tags`` is the canonical string of the statements' tags (quanta.analysis.tags).
    """

    query_id: str
    schema: str
    user: str
    host: str
    start: datetime
    tags: str = ""


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
    @property
    def tags(self) -> Sequence[str] | None: ...


def add_columns(digest: BatchDigest, query_ids: list[str], buckets: BucketColumns) -> None:
    """Add buckets given as columns to ``digest``, merging those of one key into one.

    ``query_ids`` gives the query_id of each position the ``query`` column refers to.
    """
    rows = len(buckets.query)
    lock_time_max = buckets.lock_time_max or [None] * rows
    tags = getattr(buckets, "tags", None) or [""] * rows  # an older agent sends none
    sums = [(name, values) for name in SUM_METRICS if (values := getattr(buckets, name, None))]
    columns = zip(
        buckets.query, buckets.start, buckets.db, buckets.user, buckets.host, buckets.count,
        buckets.query_time_sum, buckets.query_time_min, buckets.query_time_max, lock_time_max,
        buckets.histogram, tags, strict=True,
    )  # fmt: skip
    for n, (
        query,
        start,
        db,
        user,
        host,
        count,
        total,
        least,
        most,
        lock,
        histogram,
        tag,
    ) in enumerate(columns):
        metrics = BucketMetrics(
            count, total, least, most, lock, histogram,
            {name: value for name, values in sums if (value := values[n]) is not None},
        )  # fmt: skip
        key = BucketKey(query_ids[query], db, user, host, start, tag)
        known = digest.buckets.get(key)
        if known is None:
            digest.buckets[key] = metrics
        else:
            known.merge(metrics)


def rollup(
    buckets: Mapping[BucketKey, BucketMetrics], resolution: Resolution, *, dimensions: bool = True
) -> dict[BucketKey, BucketMetrics]:
    """Merge minute buckets into buckets of ``resolution`` (new objects; the input is kept).

    Without ``dimensions``, the buckets of a query are merged whatever their schema, user,
    host and tags (the keys have '' for them).

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
            wide = BucketKey(key.query_id, key.schema, key.user, key.host, start, key.tags)
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
