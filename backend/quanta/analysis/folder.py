"""The agent's folder: slow-log events into per-minute buckets, as columns.

:class:`MinuteFolder` folds the events of a slow log (handed over by the C reader as
columns) into minute buckets as :func:`~quanta.analysis.aggregate.digest_events` does, and
gives them as a :class:`FoldedBatch`, the columnar form they travel in to the server.

A metric a source does not give stays ``None`` (stored NULL), never 0.
"""

from __future__ import annotations

import math
import operator
import random
from bisect import bisect_left
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from itertools import accumulate, groupby
from types import SimpleNamespace
from typing import Any, TypeVar, cast

from quanta.analysis.buckets import (
    BatchDigest,
    BucketColumns,
    Event,
    Example,
    ExamplePick,
    QuerySeen,
    add_columns,
)
from quanta.analysis.fingerprinter import Fingerprinter, cache_key
from quanta.analysis.histogram import LatencyHistogram, encode_values
from quanta.analysis.metrics import MAX_COUNTER
from quanta.analysis.slowlog import SINK_COLUMNS, AttributeValue
from quanta.analysis.tags import tags_of

__all__ = ["FOLDED_COLUMNS", "FoldedBatch", "MinuteFolder"]

_N = TypeVar("_N", int, float)


# The columns of folded buckets; a column of each extended metric some bucket has follows.
FOLDED_COLUMNS = (
    "query", "start", "db", "user", "host", "tags", "count", "query_time_sum", "query_time_min",
    "query_time_max", "histogram", "lock_time_max", "lock_time", "rows_sent", "rows_examined",
    "rows_affected",
)  # fmt: skip
# The counters of the usual entry, summed per bucket.
_COUNTED = ("rows_sent", "rows_examined", "rows_affected")
# The extended metrics (name: number to sum) of an event's slow-log attributes.
ExtendedMetrics = Callable[[dict[str, AttributeValue]], Mapping[str, int | float]]


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
        add_columns(digest, list(self.queries), cast("BucketColumns", columns))
        return digest


class MinuteFolder:
    """Folds a stream of slow-log events into per-minute buckets, as
    :func:`~quanta.analysis.aggregate.digest_events` does, with the events of the usual shape
    handed over by the C reader as columns.

    It is a :class:`~quanta.analysis.slowlog.ColumnSink` for
    :func:`~quanta.analysis.slowlog.read_slow_log`: each query class's events wait in columns
    (:data:`~quanta.analysis.slowlog.SINK_COLUMNS`), found by the statement's literal mask,
    and are folded a class at a time by :meth:`digest`. The events the reader yields are
    given to :meth:`add`, with the extended metrics (SUM_METRICS beyond the usual entry's)
    the caller read from their attributes. The sampled example of a minute is drawn from its
    events with ``rng``: the same events and seed give the same digest.

    Given ``extended`` (the caller's reading of an event's attributes as extended metrics),
    the reader hands over the entries with attributes as columns too (their attribute dicts
    in one more column), where it would otherwise yield each one as an event: a Percona
    Server or MariaDB log, whose entries all have attributes, stays on the columnar path.
    :meth:`absorb` sums those entries' metrics and drops their dicts (:meth:`fold` does it
    too): the caller calls it every few thousand entries, so that the dicts do not wait for
    the fold (25,000 of them took 20 MB).

    Example:
        >>> folder = MinuteFolder(Fingerprinter(), random.Random(0))
        >>> for event in read_slow_log(log, sink=folder):  # only the unusual entries
        ...     folder.add(event, extended={"bytes_sent": 60})
        >>> batch = folder.fold()
    """

    __slots__ = (
        "_absorbed",
        "_classes",
        "_extended",
        "_fingerprinter",
        "_metrics",
        "_rng",
        "_tag_keys",
        "_tags",
        "_truncated",
        "groups",
    )

    def __init__(
        self,
        fingerprinter: Fingerprinter,
        rng: random.Random,
        *,
        extended: ExtendedMetrics | None = None,
        tag_keys: frozenset[str] | None = None,
    ) -> None:
        self._fingerprinter = fingerprinter
        self._tag_keys = tag_keys  # the tag keys folded by (None: every key)
        self._rng = rng
        self._metrics = extended
        self._absorbed: dict[str, int] = {}  # per class, the entries whose dicts are summed
        # Per class, the tags of its first statements, read once per statement (absorb, add
        # and every fold key by them; the statements a batch leaves for the next are not
        # read again): tags_of took a third of the fold's CPU on bench/ingest_pipeline.py's
        # MySQL 8 log (cProfile), a tenth of it on statements a batch had left.
        self._tags: dict[str, list[str]] = {}
        self.groups: dict[str, list[list[Any]]] = {}
        self._classes: dict[str, tuple[str, list[list[Any]]]] = {}
        # Per (query_id, schema, user, host, minute, tags), a BucketKey's fields as a tuple
        # (hashed in C: a BucketKey's hash is Python code, and this runs per event): extended
        # sums.
        self._extended: dict[tuple[str, str, str, str, datetime, str], dict[str, int | float]]
        self._extended = {}
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
        for column, value in zip(columns, values, strict=False):
            column.append(value)
        if self._metrics is not None:
            columns[-1].append(None)  # its extended metrics are the caller's, below
        if extended:
            minute = _minute(event.ts)
            tags = self._class_tags(query_id, columns[0])[-1]
            key = (query_id, event.db or "", event.user or "", event.host or "", minute, tags)
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
        self.absorb()
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
            tags = self._tags[query_id]
            tags[:] = [tags[i] for i in kept]
            self._absorbed[query_id] = len(kept)
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
            # With ``extended``, one more column: the reader's attribute dicts.
            width = len(SINK_COLUMNS) + (self._metrics is not None)
            known = self._classes[query_id] = (fingerprint, [[] for _ in range(width)])
            self._tags[query_id] = []
        return query_id, known[1]

    def _class_tags(self, query_id: str, queries: list[str]) -> list[str]:
        """The tags of each of the class's statements (``queries``, its first column), read
        for those not read yet."""
        tags = self._tags[query_id]
        if len(tags) < len(queries):
            keys = self._tag_keys
            tags += [tags_of(query, keys) for query in queries[len(tags) :]]
        return tags

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

        The events are sorted by (minute, schema, user, host, tags), in file order within: each
        bucket is then one slice of every column, summed by built-in functions a column at
        a time, and the events left are the end of that order.
        """
        times = columns[1]
        if None in times:
            raise ValueError("event without a timestamp")
        # zip builds the key tuples in C, where a comprehension took a Python step an event.
        keys = list(
            zip(
                map(_minute, times),
                _texts(columns[7]),
                _texts(columns[8]),
                _texts(columns[9]),
                self._class_tags(query_id, columns[0]),
                strict=True,
            )
        )
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
        for name, n in (("start", 0), ("db", 1), ("user", 2), ("host", 3), ("tags", 4)):
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
                self._extended.get((query_id, db, user, host, minute, tags))
                for (minute, db, user, host, tags), _ in runs
            ]
        else:
            extended += [None] * len(runs)
        start = 0
        for minute, minute_runs in groupby(runs, key=lambda run: run[0][0]):
            end = start + sum(length for _, length in minute_runs)
            self._pick(batch, query_id, columns, order, query_times, start, end, minute)
            start = end
        return left

    def absorb(self) -> None:
        """Sum the extended metrics of the entries the reader handed over with their
        attributes (see ``extended``) into their buckets' sums, and drop the dicts."""
        metrics = self._metrics
        if metrics is None:
            return
        for query_id, (_, columns) in self._classes.items():
            attributes = columns[-1]
            start = self._absorbed.get(query_id, 0)
            if start == len(attributes):
                continue
            times, databases, users, hosts = columns[1], columns[7], columns[8], columns[9]
            tags = self._class_tags(query_id, columns[0])
            for i in range(start, len(attributes)):
                event_attributes = attributes[i]
                if event_attributes:
                    key = (
                        query_id,
                        databases[i] or "",
                        users[i] or "",
                        hosts[i] or "",
                        _minute(times[i]),
                        tags[i],
                    )
                    sums = self._extended.setdefault(key, {})
                    for name, value in metrics(event_attributes).items():
                        sums[name] = sums.get(name, 0) + value
                    attributes[i] = None
            self._absorbed[query_id] = len(attributes)

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


_sink_fields = operator.attrgetter(*SINK_COLUMNS)


@lru_cache(maxsize=4096)
def _minute(ts: datetime) -> datetime:
    """The start of the minute of ``ts`` (events of one second share one datetime object)."""
    return ts.replace(second=0, microsecond=0)


def _texts(values: list[str | None]) -> list[str]:
    """The values with None as '' (a key's part: None and str do not sort together)."""
    if None not in values:
        return cast("list[str]", values)
    return [value or "" for value in values]


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
