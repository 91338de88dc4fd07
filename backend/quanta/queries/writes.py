"""The metric store's write path: a batch's digest into the catalog, the buckets of every
resolution, the totals and the examples (called by ingest)."""

import random
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from quanta.analysis.buckets import (
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
from quanta.analysis.histogram import merge_stored
from quanta.analysis.metrics import SUM_METRICS
from quanta.analysis.redact import redact
from quanta.analysis.resolution import Resolution
from quanta.analysis.statement import describe_statement
from quanta.core.upsert import merge_rows
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
from quanta.queries.window import DIMENSION_COLUMNS

# A batch's example picks and its buckets, by key.
Picks = dict[tuple[str, datetime], ExamplePick]
Buckets = dict[BucketKey, BucketMetrics]

SUM_COLUMNS = tuple(f"{name}_sum" for name in SUM_METRICS)
EXAMPLE_KEY = ("query_id", "resolution", "bucket_start", "instance_id")
# Writes go minute -> hour -> day: one fixed order across workers (no lock cycles).
WRITE_ORDER = (Resolution.MINUTE, Resolution.HOUR, Resolution.DAY)


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
    # An hour's and a day's picks are minute picks: each text is masked and redacted once.
    texts = _ExampleTexts(masked=masked, max_chars=example_max_chars)
    for resolution in WRITE_ORDER:
        _record_buckets(
            session, instance_id, source, resolution, buckets[resolution], per_query.get(resolution)
        )
        if example_policy == ExamplePolicy.OFF:
            continue
        example_rows = [
            _example_row(qid, start, pick, resolution, instance_id, texts)
            for (qid, start), pick in picks[resolution].items()
        ]
        merge_rows(
            session,
            QueryExample,
            EXAMPLE_KEY,
            example_rows,
            lambda stored, new: _combine_examples(stored, new, draw),
        )
    _widen_catalog(session=session, instance_id=instance_id, digest=digest)


def _example_rollups(minutes: Picks, draw: random.Random) -> dict[Resolution, Picks]:
    """The example picks of every resolution, each from the finest one that holds it."""
    hours = rollup_examples(minutes, Resolution.HOUR, draw)
    return {
        Resolution.MINUTE: minutes,
        Resolution.HOUR: hours,
        Resolution.DAY: rollup_examples(hours, Resolution.DAY, draw),
    }


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
    merge_rows(session, BUCKET_MODELS[resolution], BUCKET_KEY, rows, _combine_buckets, metrics=True)
    if per_query is not None:
        query_rows = [_query_totals_row(k, m, instance_id, source) for k, m in per_query.items()]
        model = QUERY_TOTALS_MODELS[resolution]
        merge_rows(session, model, QUERY_TOTALS_KEY, query_rows, _combine_buckets, metrics=True)
    # The instance totals: from the fewest buckets at hand.
    totals = _totals_rows(per_query if per_query is not None else buckets, instance_id, source)
    merge_rows(
        session, TOTALS_MODELS[resolution], TOTALS_KEY, totals, _combine_totals, metrics=True
    )


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
    for column in DIMENSION_COLUMNS.values():
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
    texts: "_ExampleTexts",
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "query_id": qid,
        "resolution": resolution.value,
        "bucket_start": start,
        "instance_id": instance_id,
        "seen": pick.seen,
    }
    for prefix, example in (("slowest", pick.slowest), ("sampled", pick.sampled)):
        row.update(texts.columns(prefix, example))
    return row


class _ExampleTexts:
    """Example columns under the example policy, each statement masked and redacted once
    (an hour's and a day's picks are minute picks)."""

    def __init__(self, *, masked: bool, max_chars: int) -> None:
        self._masked = masked
        self._max_chars = max_chars
        self._stored: dict[tuple[str, bool], str] = {}

    def columns(self, prefix: str, example: Example) -> dict[str, Any]:
        """The ``prefix``_* columns of a stored example."""
        masked = self._masked or example.masked
        text = self._text(example)
        return {
            f"{prefix}_text": text[: self._max_chars],
            f"{prefix}_truncated": example.truncated or len(text) > self._max_chars,
            f"{prefix}_literals": "masked" if masked else "full",
            f"{prefix}_query_time": example.query_time,
            f"{prefix}_ts": example.ts,
            f"{prefix}_schema": example.schema[:64],
        }

    def _text(self, example: Example) -> str:
        key = (example.query, example.masked)
        text = self._stored.get(key)
        if text is None:
            text = example.query
            if self._masked and not example.masked:
                text = fingerprint(text)
            # Whatever the policy and whether or not the agent did it: no password is stored.
            text = self._stored[key] = redact(text)
        return text


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


def mark_runners(*, session: Session, own: Sequence[str], app: Sequence[str]) -> None:
    """Record which query classes a monitoring account (``own``) or anyone else (``app``)
    ran; a flag once set stays."""
    repository.mark_runners(session, own=own, app=app)
