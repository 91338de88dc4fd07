"""Bounded query classes per instance (issue 39), on a SQLite store through the ingest API
and the batch service: past QUANTA_MAX_NEW_CLASSES_PER_HOUR and
QUANTA_MAX_CLASSES_PER_INSTANCE, new statement shapes are counted under one "other
queries" class per schema; totals stay exact; no example and no advice for them; the
status (GET /api/v1/class-caps) and the metric say so. On SQLite and PostgreSQL."""

import gzip
import json
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from quanta.analysis.aggregate import digest_events
from quanta.analysis.class_cap import other_queries_fingerprint
from quanta.analysis.fingerprint import fingerprint, query_id
from quanta.analysis.slowlog import SlowLogEvent
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.ingest import service as ingest
from quanta.ingest.models import IngestBatch
from quanta.queries import classes
from quanta.queries import service as queries
from quanta.queries.models import (
    ClassAdmission,
    QueryBucketMinute,
    QueryClass,
    QueryExampleMinute,
    QueryInstance,
)
from quanta.queries.window import TimeWindow

HOT = ("SELECT * FROM orders WHERE id = 1", "UPDATE orders SET paid = 1 WHERE id = 2")
OTHER_SHOP = query_id(other_queries_fingerprint("shop"))
# Set by this_minute() as each test starts.
NOW = datetime.now(UTC)
WINDOW: dict[str, str] = {}


@pytest.fixture(autouse=True)
def this_minute() -> None:
    """NOW is the minute the test runs in, not the one the module was imported in: classes are
    admitted per wall-clock hour, and a suite may cross an hour between the two. A test is
    not started in the last seconds of an hour, so that it runs within one."""
    global NOW, WINDOW
    to_next_hour = 3600 - time.time() % 3600
    if to_next_hour < 15:
        time.sleep(to_next_hour + 0.1)
    NOW = datetime.now(UTC).replace(second=0, microsecond=0)
    WINDOW = {
        "from": (NOW - timedelta(hours=1)).isoformat(),
        "to": (NOW + timedelta(minutes=5)).isoformat(),
    }


@pytest.fixture(params=["sqlite", "postgresql"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """At most 6 classes an instance, 4 new ones an hour; on both stores (the hour's counts
    are an upsert each dialect writes its own way)."""
    url = None
    if request.param == "postgresql":
        server = request.getfixturevalue("postgres_server")
        url = server.create_database(f"caps_{uuid.uuid4().hex[:12]}")
    return Settings(
        env="test", data_dir=tmp_path / "data", database_url=url, redis_url=None,
        max_classes_per_instance=6, max_new_classes_per_hour=4,
    )  # fmt: skip


def junk(n: int) -> str:
    return f"SELECT c, d FROM tenant_{n}_orders WHERE id = {n}"


def send(
    client: TestClient, factory: sessionmaker[Session], settings: Settings, batch_id: str,
    statements: list[str],
) -> None:  # fmt: skip
    events = [
        {"ts": (NOW - timedelta(minutes=i % 3)).isoformat(), "query": sql, "query_time": 0.25,
         "rows_examined": 7, "db": "shop", "user": "app"}
        for i, sql in enumerate(statements)
    ]  # fmt: skip
    body = gzip.compress(
        json.dumps({"batch_id": batch_id, "instance": "db1", "events": events}).encode()
    )
    response = client.post("/api/v1/ingest", content=body, headers={"Content-Encoding": "gzip"})
    assert response.status_code == 202, response.text
    with session_scope(factory) as session:
        batch_pk = session.scalar(select(IngestBatch.id).where(IngestBatch.batch_id == batch_id))
        assert batch_pk is not None
        ingest.process_batch(session=session, settings=settings, batch_pk=batch_pk)


def stored(factory: sessionmaker[Session]) -> dict[str, Any]:
    with session_scope(factory) as session:
        return {
            "classes": set(session.scalars(select(QueryInstance.query_id))),
            "events": session.scalar(select(func.sum(QueryBucketMinute.count))),
            "query_time": session.scalar(select(func.sum(QueryBucketMinute.query_time_sum))),
            "examples": set(session.scalars(select(QueryExampleMinute.query_id))),
            "fingerprints": dict(
                session.execute(select(QueryClass.query_id, QueryClass.fingerprint)).all()
            ),
        }


def metric(client: TestClient, name: str) -> float:
    for line in client.get("/metrics").text.splitlines():
        if line.startswith(f'{name}{{instance="db1"}} '):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_past_the_hourly_cap_new_shapes_are_counted_under_other_queries(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    folded_before = metric(client, "quanta_query_classes_folded_total")
    events_before = metric(client, "quanta_query_events_folded_total")
    # The hot statements run 3 times each, the 5 junk shapes once: the hot ones fit first.
    send(client, session_factory, settings, "b1", [*HOT * 3, *map(junk, range(5))])
    ids = {sql: query_id(fingerprint(sql)) for sql in [*HOT, *map(junk, range(8))]}
    store = stored(session_factory)
    admitted_junk = sorted(ids[junk(n)] for n in range(5))[:2]  # ties by query_id
    assert store["classes"] == {ids[HOT[0]], ids[HOT[1]], *admitted_junk, OTHER_SHOP}
    assert (
        store["fingerprints"][OTHER_SHOP] == "Other queries (over the class cap) in schema `shop`"
    )
    assert store["events"] == 11  # every execution counted, exactly
    assert store["query_time"] == pytest.approx(11 * 0.25)
    assert OTHER_SHOP not in store["examples"]  # examples only for classes within the cap
    assert store["examples"] == {ids[HOT[0]], ids[HOT[1]], *admitted_junk}

    # The API: the other-queries row carries the 3 folded executions; totals unchanged.
    top = client.get("/api/v1/queries", params=WINDOW).json()
    assert top["totals"]["count"] == 11
    rows = {row["query_id"]: row for row in top["rows"]}
    assert rows[OTHER_SHOP]["count"] == 3
    assert rows[OTHER_SHOP]["statement_type"] == "other"
    assert rows[OTHER_SHOP]["tables"] == []
    examples = client.get(f"/api/v1/queries/{OTHER_SHOP}/examples", params=WINDOW).json()
    assert examples["examples"] == []

    # Same hour, 4 classes added already: every new shape folds, a known one stays its own.
    send(client, session_factory, settings, "b2", [junk(5), junk(6), junk(0), HOT[0]])
    store = stored(session_factory)
    assert len(store["classes"]) == 5
    assert store["events"] == 15
    # junk(0) folds again unless the first batch admitted it.
    folded = 3 + len({ids[junk(5)], ids[junk(6)], ids[junk(0)]} - set(admitted_junk))
    caps = client.get("/api/v1/class-caps").json()
    assert caps == [
        {"instance": "db1", "classes": 5, "max_classes": 6, "added_this_hour": 4,
         "max_new_per_hour": 4, "folded_classes": folded, "folded_events": folded,
         "last_folded": NOW.replace(minute=0).isoformat().replace("+00:00", "Z")},
    ]  # fmt: skip
    assert metric(client, "quanta_query_classes_folded_total") == folded_before + folded
    assert metric(client, "quanta_query_events_folded_total") == events_before + folded

    # Advice and automatic EXPLAIN never pick the other-queries class.
    with session_scope(session_factory) as session:
        top_ids = [
            row.query_id
            for row in queries.instance_top_queries(
                session=session,
                settings=settings,
                instance="db1",
                window=TimeWindow(NOW - timedelta(hours=1), NOW + timedelta(minutes=5)),
                limit=50,
            )
        ]
    assert OTHER_SHOP not in top_ids
    assert set(top_ids) == store["classes"] - {OTHER_SHOP}


def test_the_next_hour_admits_up_to_the_instance_cap(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    send(client, session_factory, settings, "b1", [*HOT * 3, *map(junk, range(5))])  # 4 + other
    digest = digest_events(
        [SlowLogEvent(ts=NOW, query=junk(n), query_time=0.5, lock_time=None, rows_sent=None,
                      rows_examined=None, rows_affected=None, db="shop", user="app", host="",
                      line=None, attributes={}) for n in range(10, 13)]
    )  # fmt: skip
    with session_scope(session_factory) as session:
        out = classes.admit_classes(
            session=session, settings=settings, instance_id=1, instance="db1", digest=digest,
            now=NOW + timedelta(hours=1),
        )  # fmt: skip
    # 5 stored of 6: one more fits although the new hour would allow 4.
    kept = sorted(query_id(fingerprint(junk(n))) for n in range(10, 13))[:1]
    assert set(out.queries) == {*kept, OTHER_SHOP}
    assert sum(m.count for m in out.buckets.values()) == 3


def test_hourly_counts_older_than_a_week_are_dropped(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    send(client, session_factory, settings, "b1", [*HOT * 3, *map(junk, range(5))])
    later = NOW + classes.ADMISSIONS_KEPT + timedelta(hours=2)
    digest = digest_events(
        [SlowLogEvent(ts=later, query=junk(99), query_time=0.5, lock_time=None, rows_sent=None,
                      rows_examined=None, rows_affected=None, db="shop", user="app", host="",
                      line=None, attributes={})]
    )  # fmt: skip
    with session_scope(session_factory) as session:
        classes.admit_classes(
            session=session, settings=settings, instance_id=1, instance="db1", digest=digest,
            now=later,
        )  # fmt: skip
    with session_scope(session_factory) as session:
        hours = list(session.scalars(select(ClassAdmission.hour_start)))
    assert hours == [later.replace(minute=0)]
