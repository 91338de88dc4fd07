"""The metric store on SQLite: every resolution, extended metrics, examples, catalog,
primary source, the roll-up and retention, through the ingest API and the batch service."""

import gzip
import json
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from quanta.analysis.histogram import LatencyHistogram
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.ingest.service import queue_state
from quanta.instances.models import Instance
from quanta.queries import partitions
from quanta.queries import service as queries
from quanta.queries.models import (
    BUCKET_MODELS,
    QUERY_TOTALS_MODELS,
    TOTALS_MODELS,
    InstanceTotalsHour,
    InstanceTotalsMinute,
    QueryBucketDay,
    QueryBucketHour,
    QueryBucketMinute,
    QueryClass,
    QueryExample,
    QueryExampleMinute,
    QueryInstance,
    RollupPending,
)
from quanta.queries.window import TimeWindow
from tests.helpers import process_all, roll_up_all

SETTINGS = Settings(env="test", example_max_chars=100)
# Two hours ago, on a whole hour: events spread over two hours and one day.
BASE = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=3)


def post(client: TestClient, batch_id: str, **body: Any) -> None:
    payload = json.dumps({"batch_id": batch_id, "instance": "db1", **body}).encode()
    response = client.post(
        "/api/v1/ingest", content=gzip.compress(payload), headers={"Content-Encoding": "gzip"}
    )
    assert response.status_code == 202, response.text


def event(minutes: int, query_time: float, sql: str, **extra: Any) -> dict[str, Any]:
    return {
        "ts": (BASE + timedelta(minutes=minutes, seconds=7)).isoformat(),
        "query": sql,
        "query_time": query_time,
        "lock_time": 0.001,
        "rows_sent": 1,
        "rows_examined": 10,
        "db": "shop",
        "user": "app",
        "host": "web1",
        **extra,
    }


SELECT = "SELECT o.id FROM shop.orders o JOIN customers c ON c.id = o.cid WHERE o.id = {}"


def test_every_resolution_gets_the_same_totals_and_histograms(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    times = [0.001 * (i + 1) for i in range(150)]
    events = [
        event(i, t, SELECT.format(i), tmp_tables=1, full_scan=i % 2 == 0)
        for i, t in enumerate(times)
    ]
    # Three batches, the last two on the same minutes as the first: merges, not inserts.
    post(client, "a", events=events[:100])
    post(client, "b", events=events[100:])
    post(client, "c", events=[event(0, 5.0, SELECT.format("'" + "x" * 200 + "'"))])
    assert process_all(session_factory, SETTINGS) == 151
    assert process_all(session_factory, SETTINGS) == 0  # already claimed: nothing counted twice
    with session_scope(session_factory) as session:
        assert session.scalars(select(QueryBucketHour)).all() == []  # ingest writes minutes
    assert roll_up_all(session_factory) == 5  # a, b: two hours each; c: one
    assert roll_up_all(session_factory) == 0  # nothing rolled up twice

    with session_scope(session_factory) as session:
        # Batch c's minute is a part of its own beside batch a's: appended, not merged.
        expected: list[tuple[Any, int]] = [(QueryBucketMinute, 151), (QueryBucketHour, 3)]
        for model, expected_rows in expected:
            rows = session.scalars(select(model)).all()
            assert len(rows) == expected_rows
        day_rows = session.scalars(select(QueryBucketDay)).all()
        models: tuple[Any, ...] = (QueryBucketMinute, QueryBucketHour, QueryBucketDay)
        for model in models:
            rows = session.scalars(select(model)).all()
            assert sum(r.count for r in rows) == 151
            assert abs(sum(r.query_time_sum for r in rows) - (sum(times) + 5.0)) < 1e-9
            assert sum(r.tmp_tables_sum or 0 for r in rows) == 150
            assert sum(r.full_scan_sum or 0 for r in rows) == 75
            assert {r.rows_affected_sum for r in rows} == {None}  # never given: NULL, not 0
            merged = LatencyHistogram()
            for r in rows:
                assert r.histogram is not None
                merged.merge(LatencyHistogram.from_bytes(r.histogram))
            assert merged.count == 151
            assert merged.quantile(1.0) == 5.0
        assert len({r.bucket_start.date() for r in day_rows}) == len(day_rows)

        first_minute = session.scalars(
            select(QueryBucketMinute).where(QueryBucketMinute.bucket_start == BASE)
        ).all()
        assert sorted((part.count, part.query_time_max) for part in first_minute) == [
            (1, 0.001),
            (1, 5.0),
        ]

        (query,) = session.scalars(select(QueryClass)).all()
        assert query.statement_type == "select"
        assert query.tables == ["customers", "shop.orders"]
        assert session.scalars(select(QueryInstance.query_id)).all() == [query.query_id]

        parts = session.scalars(
            select(QueryExampleMinute).where(QueryExampleMinute.bucket_start == BASE)
        ).all()
        assert sum(part.seen for part in parts) == 2
        example = max(parts, key=lambda part: part.slowest_query_time)
        assert example.slowest_query_time == 5.0
        assert example.slowest_truncated
        assert len(example.slowest_text) == 100
        assert example.slowest_literals == "full"
        hour_example = session.scalars(
            select(QueryExample).where(
                QueryExample.resolution == "hour", QueryExample.bucket_start == BASE
            )
        ).one()
        assert (hour_example.seen, hour_example.slowest_query_time) == (61, 5.0)
        day_example = session.scalars(
            select(QueryExample).where(QueryExample.resolution == "day")
        ).all()
        assert sum(e.seen for e in day_example) == 151


def test_masked_examples_and_the_primary_source_counts_once(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    post(client, "slow", events=[event(1, 0.5, "SELECT * FROM t WHERE id = 42")])
    digest = {
        "schema_name": "shop",
        "digest": "d1",
        "digest_text": "SELECT * FROM `t` WHERE `id` = ?",
        "interval_start": (BASE + timedelta(minutes=1)).isoformat(),
        "interval_end": (BASE + timedelta(minutes=2)).isoformat(),
        "count_star": 10,
        "sum_timer_wait": 3.0,
    }
    post(client, "ps", source="perfschema", digests=[digest])
    with session_scope(session_factory) as session:
        instance = session.scalars(select(Instance)).one()
        instance.example_policy = "masked"
    assert process_all(session_factory, SETTINGS) == 11

    window = TimeWindow(start=BASE, end=BASE + timedelta(hours=1))
    with session_scope(session_factory) as session:
        assert session.scalars(select(Instance.primary_source)).one() == "slowlog"
        sources = session.scalars(select(QueryBucketMinute.source)).all()
        assert sorted(sources) == ["perfschema", "slowlog"]  # one query_id, both stored
        top = queries.top_queries(
            session=session, settings=SETTINGS, window=window, limit=10, offset=0,
            sparkline_points=60,
        )  # fmt: skip
        assert top.totals.count == 1  # only the primary source counts
        assert len(top.rows) == 1
        example = session.scalars(select(QueryExampleMinute)).first()
        assert example is not None
        assert example.slowest_text == "select * from t where id=?"
        assert example.slowest_literals == "masked"


@pytest.mark.parametrize(
    ("pinned", "expected"),
    [(False, ("slowlog", 1)), (True, ("perfschema", 10))],
)
def test_the_slow_log_takes_over_from_performance_schema_unless_pinned(
    client: TestClient,
    session_factory: sessionmaker[Session],
    pinned: bool,
    expected: tuple[str, int],
) -> None:
    digest = {
        "schema_name": "shop",
        "digest": "d1",
        "digest_text": "SELECT * FROM `t` WHERE `id` = ?",
        "interval_start": (BASE + timedelta(minutes=1)).isoformat(),
        "interval_end": (BASE + timedelta(minutes=2)).isoformat(),
        "count_star": 10,
        "sum_timer_wait": 3.0,
    }
    post(client, "ps", source="perfschema", digests=[digest])  # the agent's start-up poll
    process_all(session_factory, SETTINGS)
    with session_scope(session_factory) as session:
        instance = session.scalars(select(Instance)).one()
        assert (instance.primary_source, instance.primary_source_pinned) == ("perfschema", False)
        instance.primary_source_pinned = pinned  # what an admin's PATCH stores
    post(client, "slow", events=[event(1, 0.5, "SELECT * FROM t WHERE id = 42")])
    process_all(session_factory, SETTINGS)
    window = TimeWindow(start=BASE, end=BASE + timedelta(hours=1))
    with session_scope(session_factory) as session:
        primary = session.scalars(select(Instance.primary_source)).one()
        top = queries.top_queries(
            session=session, settings=SETTINGS, window=window, limit=10, offset=0,
            sparkline_points=60,
        )  # fmt: skip
        assert (primary, top.totals.count) == expected


def test_back_to_automatic_the_slow_log_counts_at_once(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    # An imported slow log, then an admin pins performance_schema and unpins it: no more
    # batches come, and the slow log's queries must not stay hidden.
    post(client, "slow", events=[event(1, 0.5, "SELECT * FROM t WHERE id = 42")])
    process_all(session_factory, SETTINGS)
    with session_scope(session_factory) as session:
        instance_id = session.scalars(select(Instance.id)).one()
    url = f"/api/v1/instances/{instance_id}"
    pinned = client.patch(url, json={"primary_source": "perfschema"}).json()
    assert (pinned["primary_source"], pinned["primary_source_pinned"]) == ("perfschema", True)
    automatic = client.patch(url, json={"primary_source": None}).json()
    assert (automatic["primary_source"], automatic["primary_source_pinned"]) == ("slowlog", False)


def test_the_query_and_instance_totals_are_the_buckets_summed(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    events = [
        event(i % 90, 0.001 * (i + 1), sql, user=f"u{i % 3}", tmp_tables=i % 2)
        for i in range(120)
        for sql in (SELECT.format(i), "UPDATE t SET a = 1 WHERE id = 2")
    ]
    # Two batches on the same minutes: the second merges into stored totals.
    post(client, "a", events=events[:130])
    post(client, "b", events=events[130:])
    assert process_all(session_factory, SETTINGS) == 240
    roll_up_all(session_factory)

    with session_scope(session_factory) as session:
        for resolution, totals_model in TOTALS_MODELS.items():
            buckets = BUCKET_MODELS[resolution]
            key = [buckets.instance_id, buckets.bucket_start, buckets.source]
            summed = session.execute(
                select(
                    *key,
                    func.sum(buckets.count),
                    func.sum(buckets.query_time_sum),
                    func.max(buckets.query_time_max),
                    func.sum(buckets.tmp_tables_sum),
                    func.sum(buckets.rows_affected_sum),
                ).group_by(*key)
            ).all()
            totals = session.execute(
                select(
                    totals_model.instance_id,
                    totals_model.bucket_start,
                    totals_model.source,
                    totals_model.count,
                    totals_model.query_time_sum,
                    totals_model.query_time_max,
                    totals_model.tmp_tables_sum,
                    totals_model.rows_affected_sum,
                )
            ).all()
            assert len(totals) == len(summed)  # one row per instance, period and source
            by_key = {tuple(r[:3]): r[3:] for r in totals}
            for row in summed:
                count, query_time, slowest, tmp_tables, affected = by_key[tuple(row[:3])]
                assert (count, tmp_tables, affected) == (row[3], row[6], None)
                assert abs(query_time - row[4]) < 1e-9
                assert slowest == row[5]
            assert sum(r[3] for r in totals) == 240
        assert session.scalar(select(func.count()).select_from(InstanceTotalsMinute)) == 90

        for resolution, query_model in QUERY_TOTALS_MODELS.items():
            expected = defaultdict(LatencyHistogram)
            for bucket in session.scalars(select(BUCKET_MODELS[resolution])):
                key = (bucket.instance_id, bucket.bucket_start, bucket.query_id, bucket.source)
                assert bucket.histogram is not None
                expected[key].merge_bytes(bucket.histogram)
            rows = session.scalars(select(query_model)).all()
            assert (
                len(rows)
                == len(expected)
                < len(session.scalars(select(BUCKET_MODELS[resolution])).all())
            )
            for row in rows:
                want = expected[(row.instance_id, row.bucket_start, row.query_id, row.source)]
                assert row.histogram is not None
                got = LatencyHistogram.from_bytes(row.histogram)
                assert (got.count, row.count) == (want.count, want.count)
                assert got.quantiles([0.5, 0.99]) == want.quantiles([0.5, 0.99])


def test_retention_deletes_each_resolution_after_its_own_time(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    post(client, "old", events=[event(0, 0.5, "SELECT 1")])
    process_all(session_factory, SETTINGS)
    later = BASE + timedelta(days=SETTINGS.retention_minute_days + 1)
    with session_scope(session_factory) as session:
        # Minutes not rolled up yet outlive their retention: the hour needs them.
        assert partitions.apply_retention(session=session, settings=SETTINGS, now=later) == {
            "day": 0,
            "hour": 0,
            "minute": 0,
        }
    roll_up_all(session_factory)
    with session_scope(session_factory) as session:
        deleted = partitions.apply_retention(session=session, settings=SETTINGS, now=later)
    assert deleted == {"day": 0, "hour": 0, "minute": 3}  # a bucket, its total, an example
    with session_scope(session_factory) as session:
        assert session.scalars(select(QueryBucketMinute)).all() == []
        assert session.scalars(select(InstanceTotalsMinute)).all() == []
        assert len(session.scalars(select(InstanceTotalsHour)).all()) == 1
        assert len(session.scalars(select(QueryBucketHour)).all()) == 1
        assert len(session.scalars(select(QueryBucketDay)).all()) == 1


def test_the_agents_example_policy_and_truncation_are_honoured(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    cut = "SELECT * FROM t WHERE id = 1 AND note = 'abc"  # the agent cut it here
    post(client, "full", events=[event(1, 0.5, cut, truncated=True)])
    post(client, "masked", examples="masked", events=[event(70, 0.5, "select ? from u")])
    post(client, "off", examples="off", events=[event(130, 0.5, "select ? from v")])
    assert process_all(session_factory, SETTINGS) == 3
    with session_scope(session_factory) as session:
        examples = {
            e.slowest_text: (e.slowest_truncated, e.slowest_literals)
            for e in session.scalars(select(QueryExampleMinute))
        }
        texts = set(session.scalars(select(QueryClass.fingerprint)))
    assert examples == {cut: (True, "full"), "select ? from u": (False, "masked")}
    assert "select ? from v" in texts  # counted, but no example kept: the agent said off


def test_reads_are_exact_across_the_roll_up_boundary_and_for_late_minutes(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    """Ranges crossing the boundary between rolled-up hours and pending minutes answer what
    the raw events give: all pending, the first batch rolled up and a late one into its
    hours pending, everything rolled up."""
    update = "UPDATE t SET a = 1 WHERE id = 2"
    first = [event(m, 0.001 * (m % 13 + 1), SELECT.format(m)) for m in range(0, 180, 3)]
    late = [event(m, 0.002 * (m % 5 + 1), update) for m in range(1, 150, 4)]
    windows = [
        (BASE + timedelta(minutes=20), BASE + timedelta(minutes=160)),  # minutes, hour, minutes
        (BASE, BASE + timedelta(hours=3)),  # whole hours
        (BASE - timedelta(days=2), BASE + timedelta(hours=2, minutes=30)),  # days too
    ]

    def expect_raw(events: list[dict[str, Any]]) -> None:
        for start, end in windows:
            times = [
                e["query_time"]
                for e in events
                if start <= datetime.fromisoformat(e["ts"]).replace(second=0) < end
            ]
            params = {"from": start.isoformat(), "to": end.isoformat()}
            totals = client.get("/api/v1/queries", params=params).json()["totals"]
            assert totals["count"] == len(times), (start, end)
            assert totals["query_time"] == pytest.approx(sum(times), rel=1e-12)

    post(client, "first", events=first)
    process_all(session_factory, SETTINGS)
    expect_raw(first)  # nothing rolled up: every hour from its pending minutes
    assert roll_up_all(session_factory) == 3
    expect_raw(first)
    post(client, "late", events=late)  # minutes of hours rolled up already
    process_all(session_factory, SETTINGS)
    expect_raw(first + late)  # rolled-up hours plus the late minutes still pending
    assert roll_up_all(session_factory) == 3
    expect_raw(first + late)
    with session_scope(session_factory) as session:
        assert session.scalars(select(RollupPending)).all() == []
        hours = session.execute(
            select(QueryBucketHour.bucket_start, func.sum(QueryBucketHour.count)).group_by(
                QueryBucketHour.bucket_start
            )
        ).all()
        seen = session.execute(
            select(QueryExample.bucket_start, func.sum(QueryExample.seen))
            .where(QueryExample.resolution == "hour")
            .group_by(QueryExample.bucket_start)
        ).all()
    per_hour = defaultdict(int)
    for e in first + late:
        per_hour[datetime.fromisoformat(e["ts"]).replace(minute=0, second=0)] += 1
    assert dict(hours) == dict(per_hour) == dict(seen)  # late minutes in the right hour


def test_the_roll_up_backlog_and_lag_are_metrics(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    post(client, "a", events=[event(m, 0.01, "SELECT 1") for m in (0, 70)])  # two hours
    process_all(session_factory, SETTINGS)
    with session_scope(session_factory) as session:
        due = session.scalars(select(RollupPending.due_at)).all()
        state = queue_state(session=session, settings=SETTINGS)
        no_grace = Settings(env="test", rollup_grace_seconds=0)
        lag = queue_state(session=session, settings=no_grace).rollup_lag_seconds
    # Both hours had ended: due when written; the roll-up takes them its grace later.
    assert (state.rollup_pending, state.rollup_lag_seconds) == (len(due), 0.0) == (2, 0.0)
    assert 0 < lag < 60
    scrape = client.get("/metrics").text
    assert "quanta_store_rollup_pending 2.0" in scrape
    assert "quanta_store_rollup_lag_seconds" in scrape
    roll_up_all(session_factory)
    with session_scope(session_factory) as session:
        state = queue_state(session=session, settings=SETTINGS)
    assert (state.rollup_pending, state.rollup_lag_seconds) == (0, 0.0)
