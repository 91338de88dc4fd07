"""The metric store on SQLite: every resolution, extended metrics, examples, catalog,
primary source and retention, through the ingest API and the batch service."""

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
    QueryInstance,
)
from quanta.queries.window import TimeWindow
from tests.helpers import process_all

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
        expected: list[tuple[Any, int]] = [(QueryBucketMinute, 150), (QueryBucketHour, 3)]
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
        ).one()
        assert (first_minute.count, first_minute.query_time_min) == (2, 0.001)
        assert first_minute.query_time_max == 5.0

        (query,) = session.scalars(select(QueryClass)).all()
        assert query.statement_type == "select"
        assert query.tables == ["customers", "shop.orders"]
        assert session.scalars(select(QueryInstance.query_id)).all() == [query.query_id]

        example = session.scalars(
            select(QueryExample).where(
                QueryExample.resolution == "minute", QueryExample.bucket_start == BASE
            )
        ).one()
        assert example.seen == 2
        assert example.slowest_query_time == 5.0
        assert example.slowest_truncated
        assert len(example.slowest_text) == 100
        assert example.slowest_literals == "full"
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
        example = session.scalars(select(QueryExample)).first()
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
            for e in session.scalars(
                select(QueryExample).where(QueryExample.resolution == "minute")
            )
        }
        texts = set(session.scalars(select(QueryClass.fingerprint)))
    assert examples == {cut: (True, "full"), "select ? from u": (False, "masked")}
    assert "select ? from v" in texts  # counted, but no example kept: the agent said off
