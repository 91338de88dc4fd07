"""Batches that share buckets are rolled up into the same hour, day and totals rows on
PostgreSQL, where the UPDATE adds the metrics up in SQL, as on SQLite, where they are merged
in Python; and reads of hours not rolled up yet are exact on both."""

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert, inspect, select, text

from quanta.analysis.buckets import (
    BatchDigest,
    BucketKey,
    BucketMetrics,
    Example,
    ExamplePick,
    QuerySeen,
)
from quanta.analysis.histogram import LatencyHistogram
from quanta.core import upsert
from quanta.core.config import Settings
from quanta.core.db import create_db_engine, create_session_factory, session_scope
from quanta.instances.models import Instance
from quanta.queries import rollup
from quanta.queries.models import (
    BUCKET_MODELS,
    QUERY_TOTALS_MODELS,
    TOTALS_MODELS,
    QueryBucketHour,
    QueryExample,
)
from quanta.queries.service import query_detail
from quanta.queries.window import TimeWindow
from quanta.queries.writes import record_digest
from tests.fixtures.servers import PostgresServer
from tests.fixtures.store import migrate_store
from tests.helpers import roll_up_all, wait_until

QID = "0123456789abcdef"
# Within every resolution's retention, so that each window is read at its own resolutions.
MINUTE = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(hours=3)
MODELS = (*BUCKET_MODELS.values(), *QUERY_TOTALS_MODELS.values(), *TOTALS_MODELS.values())


def histogram(*values: float) -> LatencyHistogram:
    out = LatencyHistogram()
    out.add_many(values)
    return out


def batch(slowest: float, **buckets: BucketMetrics) -> BatchDigest:
    """One query, one minute; a bucket per client host; its examples."""
    seen = QuerySeen("select ?", MINUTE, MINUTE, "SELECT 1")
    keys = {host: BucketKey(QID, "shop", "app", host, MINUTE) for host in buckets}
    example = Example(f"SELECT {slowest}", slowest, MINUTE, "shop")
    count = sum(metrics.count for metrics in buckets.values())
    return BatchDigest(
        buckets={keys[host]: metrics for host, metrics in buckets.items()},
        queries={QID: seen},
        examples={(QID, MINUTE): ExamplePick(example, example, count)},
    )


# Every way two values of a metric meet: both known, one of them NULL (the source does not
# give it), both NULL; a bucket without a histogram (performance_schema's) meets one with.
FIRST = batch(
    0.5,
    web1=BucketMetrics(2, 0.3, 0.1, 0.2, None, histogram(0.1, 0.2), {"rows_sent": 4}),
    web2=BucketMetrics(1, 0.5, 0.5, 0.5, 0.01, None, {"rows_examined": 7, "lock_time": 0.01}),
)
SECOND = batch(
    0.75,
    web1=BucketMetrics(1, 0.05, 0.05, 0.05, 0.002, histogram(0.05), {"rows_sent": 1}),
    web2=BucketMetrics(3, 1.5, 0.25, 0.75, None, histogram(0.25, 0.5, 0.75), {"errors": 1}),
    web3=BucketMetrics(1, 0.4, 0.4, 0.4, None, histogram(0.4), {}),
)


# Windows whose read plans cross the hour of MINUTE: minutes, the hour, the day.
WINDOWS = (
    TimeWindow(MINUTE - timedelta(minutes=30), MINUTE + timedelta(minutes=30)),
    TimeWindow(MINUTE - timedelta(hours=2), MINUTE + timedelta(hours=3)),
    TimeWindow(MINUTE - timedelta(days=2), MINUTE + timedelta(days=2)),
)


def stored_rows(settings: Settings) -> tuple[dict[str, list[dict[str, Any]]], list[Any]]:
    """The first batch recorded and rolled up, the second recorded (pending), then rolled up;
    every rolled-up table's rows in key order, and the query's figures read over WINDOWS at
    each of the three steps."""
    migrate_store(settings)
    engine = create_db_engine(settings)
    factory = create_session_factory(engine)
    read: list[Any] = []

    def figures() -> None:
        with session_scope(factory) as session:
            for window in WINDOWS:
                detail = query_detail(
                    session=session, settings=settings, window=window, query_id=QID
                )
                stats = {m.name: m for m in detail.metrics}
                latency = stats["query_time"]
                read.append(
                    (detail.count, latency.sum, latency.min, latency.max, latency.p95,
                     stats["rows_sent"].sum, stats["count"].share)
                )  # fmt: skip

    try:
        with session_scope(factory) as session:
            session.execute(insert(Instance).values(id=1, name="db1"))
        for digest in (FIRST, SECOND):
            with session_scope(factory) as session:
                record_digest(
                    session=session, instance_id=1, source="slowlog", digest=digest,
                    example_policy="full", example_max_chars=100,
                )  # fmt: skip
            figures()
            roll_up_all(factory)
        figures()
        with session_scope(factory) as session:
            assert rollup.roll_up_due(session=session, now=datetime.now(UTC), grace_seconds=0) == 0
            stored = {
                model.__tablename__: [
                    dict(row)
                    for row in session.execute(
                        select(model.__table__).order_by(*inspect(model).primary_key)
                    ).mappings()
                ]
                for model in MODELS
            }
            # The sampled statement is drawn at random: the rest of the examples.
            stored["query_examples"] = [
                tuple(row)
                for row in session.execute(
                    select(
                        QueryExample.resolution, QueryExample.seen,
                        QueryExample.slowest_query_time, QueryExample.slowest_text,
                    ).order_by(QueryExample.resolution)
                )
            ]  # fmt: skip
            return stored, read
    finally:
        engine.dispose()


@pytest.mark.services
def test_postgresql_merges_metrics_as_sqlite_does(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    (on_sqlite, read_sqlite) = stored_rows(Settings(data_dir=tmp_path, database_url=None))
    database_url = postgres_server.create_database("merge")
    (on_postgresql, read_postgresql) = stored_rows(Settings(database_url=database_url))
    assert on_postgresql == on_sqlite
    assert read_postgresql == read_sqlite
    # What the raw statements give, over every window, before and after each roll-up:
    # first batch (pending), first rolled up with the second pending, both rolled up.
    first = (3, 0.8, 0.1, 0.5, 0.1, 4, 1.0)  # p95: rank 0 of 2 values (analysis.histogram)
    both = (8, 2.75, 0.05, 0.75, 0.5, 5, 1.0)
    for figures, want in zip(read_sqlite, [first] * 3 + [both] * 6, strict=True):
        assert figures[:2] == (want[0], pytest.approx(want[1]))
        assert figures[2:4] == want[2:4]
        assert figures[4] == pytest.approx(want[4], rel=0.01)  # the histogram's accuracy
        assert figures[5:] == want[5:]

    minutes = {row["client_host"]: row for row in on_postgresql["query_buckets_hour"]}
    web1, web2 = minutes["web1"], minutes["web2"]
    assert (web1["count"], web1["query_time_min"], web1["lock_time_max"]) == (3, 0.05, 0.002)
    assert (web1["rows_sent_sum"], web1["rows_examined_sum"]) == (5, None)
    assert LatencyHistogram.from_bytes(web1["histogram"]) == histogram(0.1, 0.2, 0.05)
    assert (web2["count"], web2["query_time_min"], web2["query_time_max"]) == (4, 0.25, 0.75)
    assert (web2["lock_time_max"], web2["rows_examined_sum"], web2["errors_sum"]) == (0.01, 7, 1)
    # The first bucket had no histogram: the second one's stands for both.
    assert LatencyHistogram.from_bytes(web2["histogram"]) == histogram(0.25, 0.5, 0.75)
    (hour,) = on_postgresql["query_totals_hour"]
    assert (hour["count"], hour["rows_sent_sum"], hour["lock_time_sum"]) == (8, 5, 0.01)
    assert hour["query_time_sum"] == pytest.approx(2.75)
    # Examples: both batches' statements seen, the slowest kept (rolled up in SQL on
    # PostgreSQL, in Python on SQLite).
    assert on_postgresql["query_examples"] == [
        ("day", 8, 0.75, "SELECT 0.75"),
        ("hour", 8, 0.75, "SELECT 0.75"),
    ]
    (total,) = on_postgresql["instance_totals_minute"]
    assert (total["count"], total["query_time_max"], total["errors_sum"]) == (8, 0.75, 1)


@pytest.mark.services
def test_a_partition_filled_since_its_statistics_is_analyzed_before_a_merge(
    postgres_server: PostgresServer,
) -> None:
    """The roll-up's first round into an hour inserts its rows; the next one that meets them
    plans its join on the partition's statistics, which autovacuum has not refreshed yet:
    the merge ANALYZEs the partitions more than STALE_ROWS_CHANGED rows changed in."""
    settings = Settings(database_url=postgres_server.create_database("stale_statistics"))
    migrate_store(settings)
    engine = create_db_engine(settings)
    factory = create_session_factory(engine)
    hosts = upsert.STALE_ROWS_CHANGED + 500
    many = {f"web{n}": BucketMetrics(1, 0.1, 0.1, 0.1, None, None, {}) for n in range(hosts)}

    def partition(column: str) -> Any:
        """A statistic of the partition that holds the hour rows."""
        with engine.connect() as conn:
            return conn.execute(
                text(
                    f"SELECT {column} FROM pg_stat_user_tables WHERE relid = "
                    "(SELECT tableoid FROM query_buckets_hour LIMIT 1)"
                )
            ).scalar_one()

    try:
        with session_scope(factory) as session:
            session.execute(insert(Instance).values(id=1, name="db1"))
        for digest in (batch(0.5, **many), SECOND):
            with session_scope(factory) as session:
                record_digest(
                    session=session, instance_id=1, source="slowlog", digest=digest,
                    example_policy="full", example_max_chars=100,
                )  # fmt: skip
            if digest is SECOND:  # the first batch's rows counted in the statistics views
                wait_until(
                    lambda: partition("n_mod_since_analyze") >= hosts, 15, "the inserts counted"
                )
                assert partition("last_analyze") is None
            roll_up_all(factory)
        assert partition("last_analyze") is not None
        assert partition("n_mod_since_analyze") < hosts
        with session_scope(factory) as session:
            counts = dict(
                session.execute(
                    select(QueryBucketHour.client_host, QueryBucketHour.count).where(
                        QueryBucketHour.client_host.in_(["web1", "web2", "web3"])
                    )
                ).all()
            )
        assert counts == {"web1": 2, "web2": 4, "web3": 2}
    finally:
        engine.dispose()


def quiet_hour_steps(settings: Settings) -> list[Any]:
    """Pending entries written as a trickle into ended hours, rolled up and looked at
    (roll_up_due's entries taken, or state's (pending, lag)) at moments after the first."""
    migrate_store(settings)
    engine = create_db_engine(settings)
    factory = create_session_factory(engine)
    start = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    hour = start - timedelta(hours=3)
    # Instance 1: a trickle of three writes; 2: one; 3: one, and one more just before the
    # hour would have gone quiet (a sender that keeps adding to it).
    writes = {1: (0, 60, 100), 2: (0,), 3: (0, 590)}
    try:
        with session_scope(factory) as session:
            session.execute(insert(Instance), [{"id": i, "name": f"db{i}"} for i in writes])
        for instance, seconds in writes.items():
            for second in seconds:
                with session_scope(factory) as session:
                    at = start + timedelta(seconds=second)
                    rollup.add_pending(session, instance, [hour], now=at)
        steps: list[Any] = []
        for action, second in (
            ("roll", 130), ("state", 219), ("state", 230), ("roll", 230), ("roll", 601),
            ("state", 601),
        ):  # fmt: skip
            now = start + timedelta(seconds=second)
            with session_scope(factory) as session:
                if action == "roll":
                    steps.append(rollup.roll_up_due(session=session, now=now, grace_seconds=120))
                else:
                    steps.append(rollup.state(session=session, now=now, grace_seconds=120))
        return steps
    finally:
        engine.dispose()


@pytest.mark.services
def test_an_hours_entries_are_rolled_up_together_once_it_is_quiet(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    """An hour's entries wait until none of them came due within the grace, so a trickle of
    batches into an ended hour adds to its rows once; an hour that never goes quiet is
    rolled up once its oldest entry has waited MAX_WAIT_GRACES graces."""
    assert rollup.MAX_WAIT_GRACES * 120 == 600
    want = [
        1,  # at 130 s: instance 2's entry; 1 and 3 had entries due within the grace
        (5, 0.0),  # at 219 s: instance 1's hour quiet at 220 s (its last write + grace)
        (5, 10.0),
        3,  # instance 1's three entries in one round
        1,  # at 601 s: instance 3's oldest entry has waited 600 s; its newest is not due
        (1, 0.0),
    ]
    on_sqlite = quiet_hour_steps(Settings(data_dir=tmp_path, database_url=None))
    database_url = postgres_server.create_database("quiet_hour")
    assert quiet_hour_steps(Settings(database_url=database_url)) == on_sqlite == want
