"""The server's digests of a batch: fingerprint its statements, fold them per minute.

A batch from one agent is for one instance and one source, so within a batch a bucket is
identified by (query_id, schema, user, host, start, tags). :func:`digest_events` folds slow-log
events, :func:`digest_perfschema` performance_schema digest deltas, and
:func:`digest_buckets` the minute buckets an agent folded itself (its query_ids taken again
from its fingerprints, so that the server's grouping rules apply). The values they give,
and their rollups, are in :mod:`quanta.analysis.buckets`.

A metric a source does not give stays ``None`` (stored NULL), never 0.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Protocol

from quanta.analysis.buckets import (
    BatchDigest,
    BucketColumns,
    BucketKey,
    BucketMetrics,
    Event,
    Example,
    ExamplePick,
    QuerySeen,
    add_columns,
)
from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.histogram import LatencyHistogram
from quanta.analysis.metrics import PERFSCHEMA_SUMS, SUM_METRICS
from quanta.analysis.tags import tags_of

__all__ = ["digest_buckets", "digest_events", "digest_perfschema"]

# The metric definitions are the registry's.
_PERFSCHEMA_SUMS = PERFSCHEMA_SUMS


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
        tags = tags_of(text)
        key = BucketKey(qid, schema, event.user or "", event.host or "", minute, tags)
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
    they are None unless the delta is one statement, or a tagged row (its ``tags``: the
    statements the history measured, with their own min and max); a digest's rows of
    different tags are buckets of their own, rows of the same key sum. The histogram comes
    from MySQL 8's histogram buckets (each counted at the geometric middle of its bucket)
    where sent.

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
        # A digest's tagged rows and its untagged rest are buckets of their own.
        key = BucketKey(qid, schema, "", "", minute, getattr(row, "tags", "") or "")
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
    if getattr(row, "tags", ""):  # measured over the interval's statements, not lifetime
        metrics.query_time_min = getattr(row, "min_timer_wait", None)
        metrics.query_time_max = getattr(row, "max_timer_wait", None)
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
        add_columns(digest, [qid for _, qid in classes], buckets)
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


def _example_of(row: ExampleRow, masked: bool) -> Example:
    return Example(row.query, row.query_time, row.ts, row.db, masked, row.truncated)
