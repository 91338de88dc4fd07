"""Slow-log events folded per minute on the agent, in the ingest wire format.

The agent folds a batch's events into one bucket per minute, query class, schema, user and
client host (:class:`~quanta.analysis.folder.MinuteFolder`), as PMM's agent does, and
ships those instead of the events: the server stores per-minute buckets anyway, a batch
shrinks tenfold, and no statement leaves the host unless the example policy is ``full``.
The server fingerprints each fingerprint again with its grouping rules, so one query has
one query_id whichever way it arrived.

They are built as the wire models (quanta.wire) with ``model_construct``: the folder's
values are of the models' types already (the histograms their encoded bytes, which the
model's serializer writes as base64), and the server validates them.

Example:
    >>> rows = aggregates(folder.fold(), policy=ExamplePolicy.FULL, max_length=10_000)
    >>> batch = rows.batch(batch_id="b1", instance="db1", policy=ExamplePolicy.FULL)
    >>> sorted(batch.model_fields_set)
    ['batch_id', 'buckets', 'examples', 'instance', 'picks', 'queries', 'source']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from quanta.analysis.buckets import Example, QuerySeen
from quanta.analysis.folder import FoldedBatch
from quanta.analysis.metrics import MAX_COUNTER, METRIC, METRICS, Kind
from quanta.analysis.redact import redact
from quanta.analysis.slowlog import AttributeValue, SlowLogEvent
from quanta.wire import (
    IngestBatchIn,
    SlowLogBucketsIn,
    SlowLogExampleIn,
    SlowLogPickIn,
    SlowLogQueryIn,
)
from quanta_agent.payload import construct_row, policy_name
from quanta_agent.policy import ExamplePolicy

# Wire field <- the slow-log attribute names that give it, first present wins: the metric
# registry's extended metrics (those the reader does not give as fields of its events).
# Errors and warnings are not logged as counts: extended_fields derives them.
_DERIVED = ("errors", "warnings")
_EXTENDED = tuple(m for m in METRICS if m.slowlog and not m.event_field and m.name not in _DERIVED)
_COUNTERS = {m.name: m.slowlog for m in _EXTENDED if m.counter and m.kind is not Kind.FLAG}
_SECONDS = {m.name: m.slowlog for m in _EXTENDED if m.kind is Kind.SECONDS}
_FLAGS = {m.name: m.slowlog for m in _EXTENDED if m.kind is Kind.FLAG}
# Yes/No flags that stand in for a count where the count is not logged (MariaDB).
_FLAG_COUNTS = {m.name: m.slowlog_fallback for m in _EXTENDED if m.name in _COUNTERS}
# MySQL 8 logs the number of sorts rather than a Filesort flag.
_SORT_COUNTS = METRIC["filesort"].slowlog_fallback
_ERRNO = METRIC["errors"].slowlog
_WARNINGS = METRIC["warnings"].slowlog


def extended_fields(
    attributes: dict[str, AttributeValue], max_counter: int
) -> dict[str, bool | int | float]:
    """The ingest API's extended fields of an event, from its slow-log attributes.

    They are sent under one name whatever the server's flavour, and only when the log has
    them: an absent attribute is unknown, not 0. Counters above ``max_counter`` are wrapped
    server counters (MariaDB logs some as 2**64 - n), not data, and are left out.

    Example:
        >>> extended_fields({"Bytes_sent": 60, "Full_scan": True}, 2**53)
        {'bytes_sent': 60, 'full_scan': True}
    """
    fields: dict[str, bool | int | float] = {}
    if not attributes:
        return fields
    plan = _plan_of(tuple(attributes))
    for field_name, name, kind in plan.sources:
        value = attributes[name]
        if kind is _COUNTER:
            if isinstance(value, bool):
                fields[field_name] = int(value)
            elif isinstance(value, int) and value <= max_counter:
                fields[field_name] = value
        elif kind is _SECONDS_KIND:
            if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
                fields[field_name] = float(value)
        elif isinstance(value, bool):  # a flag
            fields[field_name] = value
    if plan.sorts and "filesort" not in fields:
        sorts = [attributes[name] for name in plan.sorts]
        if any(isinstance(n, int) and not isinstance(n, bool) for n in sorts):
            fields["filesort"] = any(isinstance(n, int) and n > 0 for n in sorts)
    if plan.errno is not None:
        errno = attributes[plan.errno]
        if isinstance(errno, int) and not isinstance(errno, bool):
            fields["errors"] = int(errno != 0)
    warnings = next((attributes[n] for n in _WARNINGS if n in attributes), None)
    if isinstance(warnings, str) and warnings:
        fields["warnings"] = warnings.count("\n") + 1
    return fields


_COUNTER, _SECONDS_KIND, _FLAG = "counter", "seconds", "flag"


@dataclass(frozen=True, slots=True)
class _Plan:
    """Which attribute gives each extended field, for one set of attribute names: the first
    of its names present (a value is never None), so the names alone decide."""

    sources: tuple[tuple[str, str, str], ...]  # (field, attribute, kind)
    sorts: tuple[str, ...]  # the sort counts present (MySQL 8, no Filesort flag)
    errno: str | None


_PLANS: dict[tuple[str, ...], _Plan] = {}
# Distinct attribute name lists remembered (a log has a few: one per kind of entry).
_PLAN_CACHE_SIZE = 1024


def _plan_of(names: tuple[str, ...]) -> _Plan:
    """The plan of an attribute name list, remembered: events repeat a few of them."""
    plan = _PLANS.get(names)
    if plan is None:
        present = set(names)

        def first(candidates: tuple[str, ...]) -> str | None:
            return next((name for name in candidates if name in present), None)

        sources: list[tuple[str, str, str]] = []
        for field_name, candidates in _COUNTERS.items():
            name = first(candidates)
            if name is None:
                name = first(_FLAG_COUNTS[field_name])
            if name is not None:
                sources.append((field_name, name, _COUNTER))
        for field_name, candidates in _SECONDS.items():
            if (name := first(candidates)) is not None:
                sources.append((field_name, name, _SECONDS_KIND))
        for field_name, candidates in _FLAGS.items():
            if (name := first(candidates)) is not None:
                sources.append((field_name, name, _FLAG))
        sorts = tuple(name for name in _SORT_COUNTS if name in present)
        if len(_PLANS) >= _PLAN_CACHE_SIZE:
            _PLANS.clear()
        plan = _PLANS[names] = _Plan(tuple(sources), sorts, first(_ERRNO))
    return plan


def extended_metrics(event: SlowLogEvent, max_counter: int) -> dict[str, int | float]:
    """The extended fields of an event as numbers to sum per bucket (a flag counts 1)."""
    return attribute_metrics(event.attributes, max_counter)


def attribute_metrics(
    attributes: dict[str, AttributeValue], max_counter: int = MAX_COUNTER
) -> dict[str, int | float]:
    """The extended fields of an event's slow-log attributes as numbers to sum per bucket (a
    flag counts 1): what the minute folder sums for the entries the reader hands over.

    Example:
        >>> attribute_metrics({"Bytes_sent": 60, "Full_scan": True})
        {'bytes_sent': 60, 'full_scan': 1}
    """
    fields = extended_fields(attributes, max_counter)
    return {
        name: int(value) if isinstance(value, bool) else value for name, value in fields.items()
    }


@dataclass(frozen=True, slots=True)
class SlowLogRows:
    """The rows of a bucket batch: its query classes, buckets (as columns) and picks."""

    queries: list[SlowLogQueryIn]
    buckets: SlowLogBucketsIn
    picks: list[SlowLogPickIn]

    def batch(self, *, batch_id: str, instance: str, policy: ExamplePolicy) -> IngestBatchIn:
        """The rows as one slow-log batch of ``instance``."""
        return IngestBatchIn.model_construct(
            batch_id=batch_id,
            instance=instance,
            source="slowlog",
            examples=policy_name(policy),
            queries=self.queries,
            buckets=self.buckets,
            picks=self.picks,
        )


def aggregates(batch: FoldedBatch, *, policy: ExamplePolicy, max_length: int) -> SlowLogRows:
    """A folded batch as the ingest API's ``queries``, ``buckets`` (columns) and ``picks``:
    the rows of a batch, its head (id, instance) the sender's (:meth:`SlowLogRows.batch`).

    Statements (a class's sample, examples) are sent as logged under the ``full`` policy
    (secrets of credential-bearing statements redacted), cut to ``max_length`` characters;
    under ``masked`` the class's fingerprint stands for them, and under ``off`` no example
    is sent at all.
    """
    position = {query_id: n for n, query_id in enumerate(batch.queries)}
    queries = [_query(seen, policy, max_length) for seen in batch.queries.values()]
    picks = []
    if policy != ExamplePolicy.OFF:
        for (query_id, start), pick in batch.examples.items():
            fingerprint = batch.queries[query_id].fingerprint
            if policy == ExamplePolicy.MASKED and not fingerprint:
                continue  # a comment-only entry: its masked example would be empty text
            slowest = _example(pick.slowest, fingerprint, policy, max_length)
            # A minute's only statement (or its slowest, drawn) is both: built once.
            sampled = (
                slowest
                if pick.sampled == pick.slowest
                else _example(pick.sampled, fingerprint, policy, max_length)
            )
            fields = {
                "query": position[query_id],
                "start": start,
                "seen": pick.seen,
                "slowest": slowest,
                "sampled": sampled,
            }
            picks.append(construct_row(SlowLogPickIn, fields))
    return SlowLogRows(queries, _bucket_columns(batch), picks)


def _bucket_columns(batch: FoldedBatch) -> SlowLogBucketsIn:
    """The buckets' columns; a column that is all null (no bucket has the metric) is left
    out, and so is ``tags`` when no statement had any (the server reads none; a server older
    than tags takes the batch). The histograms stay the folder's bytes: the column's
    serializer writes them as base64."""
    columns = {
        name: values
        for name, values in batch.buckets.items()
        if any(v is not None for v in values) and (name != "tags" or any(values))
    }
    return SlowLogBucketsIn.model_construct(**cast(dict[str, Any], columns))


def _query(seen: QuerySeen, policy: ExamplePolicy, max_length: int) -> SlowLogQueryIn:
    sample = redact(seen.sample) if policy == ExamplePolicy.FULL else seen.fingerprint
    return SlowLogQueryIn.model_construct(
        fingerprint=seen.fingerprint,  # never cut: the server fingerprints it again
        first_seen=seen.first_seen,
        last_seen=seen.last_seen,
        sample=sample[:max_length],
    )


def _example(
    example: Example, fingerprint: str, policy: ExamplePolicy, max_length: int
) -> SlowLogExampleIn:
    text = redact(example.query) if policy == ExamplePolicy.FULL else fingerprint
    fields = {
        "query": text[:max_length],
        "query_time": example.query_time,
        "ts": example.ts,
        "db": example.schema,
        "truncated": example.truncated or len(text) > max_length,
    }
    return construct_row(SlowLogExampleIn, fields)
