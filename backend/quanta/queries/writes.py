"""The metric store's write path: a batch's digest into the catalog, and its minutes (buckets
and examples) appended once (called by ingest). Hours, days and totals are rolled up from the
minutes by beat (quanta.queries.rollup)."""

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from quanta.analysis.buckets import (
    BatchDigest,
    BucketKey,
    BucketMetrics,
    Example,
    ExamplePick,
)
from quanta.analysis.fingerprint import fingerprint
from quanta.analysis.metrics import SUM_METRICS
from quanta.analysis.own import is_own
from quanta.analysis.redact import redact
from quanta.analysis.resolution import Resolution, floor_to
from quanta.analysis.statement import describe_statement
from quanta.core.db import utcnow
from quanta.core.upsert import append_rows
from quanta.instances.models import ExamplePolicy
from quanta.queries import repository, rollup
from quanta.queries.models import QueryBucketMinute, QueryExampleMinute

SUM_COLUMNS = tuple(f"{name}_sum" for name in SUM_METRICS)


def record_digest(
    *,
    session: Session,
    instance_id: int,
    source: str,
    digest: BatchDigest,
    example_policy: str,
    example_max_chars: int,
) -> None:
    """Add a batch's aggregates to the catalog and append its minute buckets and examples.

    Each bucket is written once, as a minute row appended (COPY on PostgreSQL): no row is
    read, locked or rewritten, and two parts of one minute are two rows that reads sum. The
    write records, per hour it touched, a pending roll-up entry its rows carry the id of;
    beat rolls the hours, days and totals up from them (quanta.queries.rollup) and reads add
    the rows still pending, so every answer counts a batch exactly once.

    New query classes are inserted first; the classes' first/last seen, which every batch
    of an instance updates, are widened last, so the rows batches share stay locked as
    briefly as they can (until the commit), always in key order.
    """
    _insert_catalog(session=session, instance_id=instance_id, digest=digest)
    # A batch has few distinct minutes: each one's hour, and each hour's pending entry.
    minutes = {key.start for key in digest.buckets} | {start for _, start in digest.examples}
    hour_of = {minute: floor_to(minute, Resolution.HOUR) for minute in minutes}
    pending = rollup.add_pending(session, instance_id, sorted(set(hour_of.values())), now=utcnow())
    entry = {minute: pending[hour] for minute, hour in hour_of.items()}
    append_rows(
        session,
        QueryBucketMinute,
        [
            _bucket_row(key, m, instance_id, source, entry[key.start])
            for key, m in digest.buckets.items()
        ],
    )
    if example_policy != ExamplePolicy.OFF:
        texts = _ExampleTexts(
            masked=example_policy == ExamplePolicy.MASKED, max_chars=example_max_chars
        )
        append_rows(
            session,
            QueryExampleMinute,
            [
                _example_row(qid, start, pick, instance_id, texts, entry[start])
                for (qid, start), pick in digest.examples.items()
            ],
        )
    _widen_catalog(session=session, instance_id=instance_id, digest=digest)


def _insert_catalog(*, session: Session, instance_id: int, digest: BatchDigest) -> None:
    """Add the batch's new query classes; known ones are left as they are, unlocked (see
    :func:`_widen_catalog`, which also records where each class ran)."""
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
                "own_statement": is_own(seen.fingerprint),
            }
        )
    repository.insert_query_classes(session, classes)


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
            "own_statement": is_own(seen.fingerprint),
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


def _bucket_row(
    key: BucketKey, m: BucketMetrics, instance_id: int, source: str, rollup_id: int
) -> dict[str, Any]:
    return {
        "instance_id": instance_id,
        "bucket_start": key.start,
        "query_id": key.query_id,
        "schema_name": key.schema,
        "user_name": key.user,
        "client_host": key.host,
        "source": source,
        "tags": key.tags,
        "histogram": None if m.histogram is None else m.histogram.to_bytes(),
        "rollup_id": rollup_id,
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


def _example_row(
    qid: str,
    start: datetime,
    pick: ExamplePick,
    instance_id: int,
    texts: "_ExampleTexts",
    rollup_id: int,
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "query_id": qid,
        "bucket_start": start,
        "instance_id": instance_id,
        "rollup_id": rollup_id,
        "seen": pick.seen,
    }
    for prefix, example in (("slowest", pick.slowest), ("sampled", pick.sampled)):
        row.update(texts.columns(prefix, example))
    return row


class _ExampleTexts:
    """Example columns under the example policy, each statement masked and redacted once
    (a minute's slowest statement is often its sampled one too)."""

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


def mark_runners(*, session: Session, own: Sequence[str], app: Sequence[str]) -> None:
    """Record which query classes a monitoring account (``own``) or anyone else (``app``)
    ran; a flag once set stays."""
    repository.mark_runners(session, own=own, app=app)
