"""Aggregation of events into per-minute buckets."""

from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from quanta.analysis.aggregate import BucketKey, digest_events
from quanta.analysis.fingerprint import fingerprint, query_id
from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.grouping import parse_rules

T0 = datetime(2026, 11, 1, 12, 0, 5, tzinfo=UTC)


@dataclass
class Ev:
    query: str
    query_time: float
    ts: datetime | None = T0
    lock_time: float | None = None
    rows_sent: int | None = None
    rows_examined: int | None = None
    db: str | None = "shop"
    user: str | None = "app"
    host: str | None = None


def test_events_fold_into_buckets_per_query_dimensions_and_minute() -> None:
    later = T0.replace(minute=1, second=30)
    digest = digest_events(
        [
            Ev("SELECT * FROM t WHERE id = 1", 0.5, rows_examined=10),
            Ev("SELECT * FROM t WHERE id = 2", 1.5, rows_examined=5, lock_time=0.25),
            Ev("SELECT * FROM t WHERE id = 3", 2.0, ts=later),
            Ev("SELECT * FROM t WHERE id = 4", 1.0, db="other"),
        ]
    )
    qid = query_id(fingerprint("SELECT * FROM t WHERE id = 1"))
    assert list(digest.queries) == [qid]
    assert digest.queries[qid].first_seen == T0
    assert digest.queries[qid].last_seen == later

    first = digest.buckets[BucketKey(qid, "shop", "app", "", T0.replace(second=0))]
    assert (first.count, first.query_time_sum) == (2, 2.0)
    assert (first.query_time_min, first.query_time_max) == (0.5, 1.5)
    assert first.rows_examined_sum == 15
    assert first.lock_time_sum == 0.25  # one event had no lock time: not counted as 0
    assert first.rows_sent_sum is None  # no event gave it: stays unknown

    assert digest.buckets[BucketKey(qid, "shop", "app", "", later.replace(second=0))].count == 1
    assert digest.buckets[BucketKey(qid, "other", "app", "", T0.replace(second=0))].count == 1
    assert sum(b.count for b in digest.buckets.values()) == 4


def test_undated_event_is_refused() -> None:
    with pytest.raises(ValueError, match="timestamp"):
        digest_events([Ev("SELECT 1", 0.1, ts=None)])


def test_grouping_rules_merge_sharded_tables_into_one_query() -> None:
    fingerprinter = Fingerprinter(parse_rules(["orders_[0-9]+=orders_N"]))
    digest = digest_events(
        [Ev("SELECT * FROM orders_1 WHERE id = 1", 0.5), Ev("SELECT * FROM orders_2", 1.5)],
        fingerprinter,
    )
    assert [seen.fingerprint for seen in digest.queries.values()] == [
        "select * from orders_N where id=?",
        "select * from orders_N",
    ]
