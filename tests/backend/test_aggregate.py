"""Aggregation of events into per-minute buckets."""

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from quanta.analysis.aggregate import digest_events, digest_perfschema
from quanta.analysis.buckets import BucketKey, rollup
from quanta.analysis.fingerprint import fingerprint, query_id
from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.grouping import parse_rules
from quanta.analysis.resolution import Resolution

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
    assert first.sums["rows_examined"] == 15
    assert first.sums["lock_time"] == 0.25  # one event had no lock time: not counted as 0
    assert "rows_sent" not in first.sums  # no event gave it: stays unknown
    assert first.lock_time_max == 0.25
    assert first.histogram is not None
    assert (first.histogram.count, first.histogram.quantile(1.0)) == (2, 1.5)

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


@dataclass
class ExtendedEv(Ev):
    rows_affected: int | None = None
    tmp_tables: int | None = None
    full_scan: bool | None = None
    innodb_io_r_wait: float | None = None


def test_extended_attributes_are_summed_and_absent_ones_stay_unknown() -> None:
    digest = digest_events(
        [
            ExtendedEv("DELETE FROM t WHERE id = 1", 0.1, rows_affected=1, full_scan=True),
            ExtendedEv("DELETE FROM t WHERE id = 2", 0.2, rows_affected=3, full_scan=False),
            ExtendedEv("DELETE FROM t WHERE id = 3", 0.3, tmp_tables=2, innodb_io_r_wait=0.5),
        ]
    )
    (bucket,) = digest.buckets.values()
    assert bucket.sums == {
        "rows_affected": 4,
        "full_scan": 1,
        "tmp_tables": 2,
        "innodb_io_r_wait": 0.5,
    }


def test_examples_keep_the_slowest_and_a_uniform_sample() -> None:
    events = [Ev(f"SELECT * FROM t WHERE id = {i}", i / 100) for i in range(1, 51)]
    picks = [digest_events(events, rng=random.Random(seed)).examples for seed in range(400)]
    (key,) = picks[0]
    assert {p[key].slowest.query for p in picks} == {"SELECT * FROM t WHERE id = 50"}
    assert {p[key].seen for p in picks} == {50}
    sampled = {p[key].sampled.query for p in picks}
    assert len(sampled) > 30  # drawn from all fifty, not always the first or the last


def test_rollup_merges_minutes_into_hours_and_days_exactly() -> None:
    events = [
        Ev("SELECT 1", 0.001 * (i + 1), ts=T0.replace(hour=h, minute=m))
        for i, (h, m) in enumerate((h, m) for h in (10, 11) for m in (0, 15, 59))
    ]
    digest = digest_events(events)
    hours = rollup(digest.buckets, Resolution.HOUR)
    days = rollup(digest.buckets, Resolution.DAY)
    assert sorted(k.start.hour for k in hours) == [10, 11]
    assert [m.count for m in hours.values()] == [3, 3]
    (day,) = days.values()
    assert (day.count, day.query_time_min, day.query_time_max) == (6, 0.001, 0.006)
    assert day.histogram is not None
    assert day.histogram.count == 6
    assert sum(len(m.histogram.to_bytes()) > 0 for m in hours.values() if m.histogram) == 2
    # The input is not modified by a rollup.
    assert sum(m.count for m in digest.buckets.values()) == 6


def test_perfschema_deltas_share_the_slow_log_query_id_and_leave_unknowns_null() -> None:
    row = SimpleNamespace(
        schema_name="shop",
        digest="abc",
        digest_text="SELECT * FROM `t` WHERE `id` = ?",
        interval_start=T0,
        interval_end=T0.replace(minute=1),
        count_star=4,
        sum_timer_wait=2.0,
        sum_lock_time=0.5,
        sum_rows_sent=4,
        sum_rows_examined=40,
        sum_sort_scan=1,
        sum_sort_range=None,
        sum_errors=0,
        sum_no_index_used=4,
        example=None,
        example_literals=None,
        histogram=[SimpleNamespace(low=0.4, high=0.6, count=4)],
    )
    digest = digest_perfschema([row])
    slow = digest_events([Ev("SELECT * FROM t WHERE id = 7", 0.5)])
    assert list(digest.queries) == list(slow.queries)
    (bucket,) = digest.buckets.values()
    assert (bucket.count, bucket.query_time_sum) == (4, 2.0)
    assert bucket.query_time_min is None  # per-interval extremes are unknown
    assert bucket.sums == {
        "lock_time": 0.5,
        "rows_sent": 4,
        "rows_examined": 40,
        "filesort": 1,
        "errors": 0,
        "no_index_used": 4,
    }
    assert bucket.histogram is not None
    assert bucket.histogram.count == 4
    median = bucket.histogram.quantile(0.5)
    assert median is not None
    assert abs(median - (0.4 * 0.6) ** 0.5) < 0.01
    # The interval's midpoint places it in time.
    (key,) = digest.buckets
    assert key.start == T0.replace(second=0)
