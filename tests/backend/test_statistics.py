"""Stats batches through the ingest path: summed per table, index and account, kept per
bucket of time for the Tables and Users pages, and the window they cover without a break;
the existing-index review flags duplicates at once and unused indexes only after an unbroken
window (a restart starts it again)."""

import gzip
import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from kombu import Connection
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from quanta import wire as ingest_schemas
from quanta.core.config import Settings
from quanta.core.crypto import encrypt
from quanta.core.db import session_scope
from quanta.core.tasks import ANALYSIS_QUEUE, REFRESH_TABLES_TASK
from quanta.ingest import service as ingest
from quanta.ingest.models import IngestBatch
from quanta.instances.models import Instance
from quanta.statistics.counters import COUNTS, GAUGE_COLUMNS, SECONDS
from quanta.statistics.models import ObjectStatistics
from quanta.statistics.schemas import UserWorkloadOut
from quanta.statistics.user_figures import user_columns
from quanta.tables.models import TableSnapshot

NOW = datetime.now(UTC).replace(microsecond=0)


def iso(moment: datetime) -> str:
    return moment.isoformat()


ORDERS: dict[str, Any] = {
    "engine": "InnoDB",
    "rows": 1000,
    "data_length": 65536,
    "index_length": 32768,
    "columns": {name: {"type": "int", "nullable": False} for name in ("id", "a", "b", "c")},
    "primary_key": ["id"],
    "indexes": [
        {"name": "idx_a", "columns": ["a"], "unique": False},
        {"name": "idx_a_b", "columns": ["a", "b"], "unique": False},
        {"name": "idx_c", "columns": ["c"], "unique": False},
        {"name": "uniq_b", "columns": ["b"], "unique": True},
    ],
}


@pytest.fixture(params=["sqlite", "postgresql"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """Both stores: PostgreSQL merges the JSON counters through json_populate_recordset and
    the buckets' columns in SQL."""
    url = None
    if request.param == "postgresql":
        server = request.getfixturevalue("postgres_server")
        url = server.create_database(f"stats_{uuid.uuid4().hex[:12]}")
    return Settings(env="test", data_dir=tmp_path / "data", database_url=url, redis_url=None)


def interval(ago: timedelta, length: timedelta = timedelta(minutes=1), **counters: Any) -> dict:
    start = NOW - ago
    return {
        "interval_start": start.isoformat(),
        "interval_end": (start + length).isoformat(),
        **counters,
    }


def observed(ago: timedelta, length: timedelta, reset: str | None = None) -> dict[str, Any]:
    return {"origin": "userstat", **interval(ago, length), "reset": reset}


def table_row(
    table: str,
    ago: timedelta,
    *,
    length: timedelta = timedelta(minutes=1),
    origin: str = "userstat",
    **counters: Any,
) -> dict[str, Any]:
    return {
        "origin": origin,
        "schema_name": "shop",
        "table_name": table,
        **interval(ago, length, **counters),
    }


def index_row(index: str | None, ago: timedelta, reads: int, **extra: Any) -> dict[str, Any]:
    return {
        "origin": "userstat",
        "schema_name": "shop",
        "table_name": "orders",
        "index_name": index,
        **interval(ago, rows_read=reads),
        **extra,
    }


def post(
    client: TestClient, factory: sessionmaker[Session], settings: Settings, body: dict[str, Any]
) -> int:
    response = client.post(
        "/api/v1/ingest",
        content=gzip.compress(json.dumps({"instance": "db1", **body}).encode()),
        headers={"Content-Encoding": "gzip"},
    )
    assert response.status_code == 202, response.text
    with session_scope(factory) as session:
        pk = session.scalars(
            select(IngestBatch.id).where(IngestBatch.batch_id == body["batch_id"])
        ).one()
    with session_scope(factory) as session:
        return ingest.process_batch(session=session, settings=settings, batch_pk=pk)


def ingest_stats(
    client: TestClient, factory: sessionmaker[Session], settings: Settings, batch_id: str,
    **kinds: Any,
) -> int:  # fmt: skip
    return post(client, factory, settings, {"batch_id": batch_id, "source": "stats", **kinds})


def stored(factory: sessionmaker[Session]) -> dict[tuple[str, str, str], ObjectStatistics]:
    with session_scope(factory) as session:
        rows = session.scalars(select(ObjectStatistics)).all()
        session.expunge_all()
    return {(r.kind, r.object_name, r.index_name): r for r in rows}


def snapshot(factory: sessionmaker[Session], table: str = "shop.orders") -> None:
    with session_scope(factory) as session:
        instance_id = session.scalars(select(Instance.id).where(Instance.name == "db1")).one()
        session.add(
            TableSnapshot(
                instance_id=instance_id, table_name=table, taken_at=NOW,
                changed_at=NOW, server_flavor="mariadb", server_version="10.11.6",
                content_hash="x", document=ORDERS,
            )
        )  # fmt: skip


def test_deltas_are_summed_per_object_across_batches(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    two_days, one_day = timedelta(days=2), timedelta(days=1)
    first = ingest_stats(
        client, session_factory, settings, "s1",
        tables=[table_row("orders", two_days, rows_read=100, rows_changed=3)],
        indexes=[index_row("idx_a", two_days, 40), index_row("idx_a", timedelta(days=1.5), 2),
                 index_row(None, two_days, 7)],
    )  # fmt: skip
    second = ingest_stats(
        client, session_factory, settings, "s2",
        tables=[{**table_row("orders", one_day, rows_read=5), "reset": True}],
        users=[{"user": "app", **interval(one_day, total_connections=4)}],
    )  # fmt: skip
    assert (first, second) == (4, 2)  # rows carried; stats are not query load
    rows = stored(session_factory)
    table = rows[("table", "orders", "")]
    assert table.counters == {"rows_read": 105, "rows_changed": 3}
    assert table.resets == 1
    assert table.since == NOW - two_days
    assert table.until == NOW - one_day + timedelta(minutes=1)
    assert table.reset_at == table.until  # the interval its counters restarted in
    assert rows[("index", "orders", "idx_a")].counters == {"rows_read": 42}
    assert rows[("index", "orders", "idx_a")].last_read_at == (
        NOW - timedelta(days=1.5) + timedelta(minutes=1)
    )
    assert rows[("index", "orders", "")].counters == {"rows_read": 7}  # reads using no index
    assert rows[("user", "app", "")].counters == {"total_connections": 4}


def test_tables_sum_the_range_with_rates_shares_queries_and_sizes(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    ten_minutes = timedelta(minutes=10)
    ingest_stats(
        client, session_factory, settings, "s1",
        observed=observed(ten_minutes, ten_minutes),
        tables=[table_row("orders", ten_minutes, length=ten_minutes, rows_read=300, rows_changed=6,
                          rows_changed_x_indexes=24),
                table_row("items", ten_minutes, length=ten_minutes, rows_read=100)],
    )  # fmt: skip
    # Two days ago: outside the range asked for below.
    ingest_stats(
        client, session_factory, settings, "s0",
        tables=[table_row("orders", timedelta(days=2), rows_read=5000)],
    )  # fmt: skip
    events = [
        {"ts": (NOW - timedelta(minutes=5)).isoformat(), "query": q, "query_time": t, "db": db}
        for q, t, db in [
            ("SELECT * FROM orders WHERE a = 1", 2.0, "shop"),
            ("SELECT * FROM orders WHERE a = 2", 2.0, "shop"),
            ("SELECT * FROM shop.items JOIN orders USING (id)", 1.0, "shop"),
            ("SELECT * FROM orders", 0.5, "other"),  # another schema's orders
        ]
    ]
    post(client, session_factory, settings, {"batch_id": "q1", "events": events})
    snapshot(session_factory)

    response = client.get("/api/v1/instances/1/tables", params={"from": "now-1h", "to": "now"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["source"], body["coverage"]["since"][:16]) == (
        "userstat",
        (NOW - ten_minutes).isoformat()[:16],
    )
    assert body["seconds"] == pytest.approx(600, abs=1)  # covered, not the hour asked for
    orders, items = body["tables"]
    assert (orders["table"], orders["rows_read"], orders["rows_changed"]) == ("shop.orders", 300, 6)
    assert orders["rows_changed_x_indexes"] == 24
    assert orders["rows_inserted"] is None  # userstat does not split writes
    assert orders["rows_read_per_s"] == pytest.approx(0.5, rel=0.01)
    assert (orders["read_share"], orders["changed_share"]) == (0.75, 1.0)
    assert (orders["row_estimate"], orders["data_bytes"], orders["index_bytes"]) == (
        1000,
        65536,
        32768,
    )
    assert [(q["fingerprint"], q["schema"], q["calls"]) for q in orders["queries"]] == [
        ("select * from orders where a=?", "shop", 2),
        ("select * from shop.items join orders using (id)", "shop", 1),
    ]
    assert [q["schema"] for q in items["queries"]] == [None]  # named as shop.items
    assert orders["queries"][0]["share"] == pytest.approx(4.0 / 5.5)
    assert (items["table"], items["rows_read"], items["read_share"]) == ("shop.items", 100, 0.25)
    assert [q["calls"] for q in items["queries"]] == [1]
    assert items["row_estimate"] is None  # never snapshotted


def test_performance_schema_tables_split_writes(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    ingest_stats(
        client, session_factory, settings, "s1",
        tables=[table_row("orders", timedelta(minutes=5), origin="perfschema", count_read=40,
                          count_fetch=40, count_write=7, count_insert=4, count_update=2,
                          count_delete=1, sum_timer_wait=0.25)],
    )  # fmt: skip
    (orders,) = client.get("/api/v1/instances/1/tables").json()["tables"]
    assert (orders["rows_read"], orders["rows_changed"]) == (40, 7)
    assert (orders["rows_inserted"], orders["rows_updated"], orders["rows_deleted"]) == (4, 2, 1)
    assert orders["io_wait_s"] == 0.25


def test_users_map_mariadb_and_percona_columns_and_fall_back_to_queries(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    five = timedelta(minutes=5)
    mariadb = {"user": "app", **interval(five, cpu_time=1.5, busy_time=2.25, total_connections=3,
               concurrent_connections=2, denied_connections=1, access_denied=4, rows_read=70,
               rows_sent=9, rows_inserted=1, rows_updated=2, rows_deleted=3, select_commands=8,
               statement_errors=5)}  # fmt: skip
    percona = {"user": "report", **interval(five, cpu_time=0.5, table_rows_read=60,
               rows_fetched=6, rows_updated=5, select_commands=2)}  # fmt: skip
    ingest_stats(client, session_factory, settings, "s1", users=[mariadb, percona])
    ingest_stats(
        client, session_factory, settings, "s2",
        users=[{"user": "app", **interval(timedelta(minutes=4), concurrent_connections=1,
                                          total_connections=1)}],
    )  # fmt: skip
    event = {"ts": (NOW - five).isoformat(), "query": "SELECT 1", "query_time": 0.75,
             "user": "app", "rows_examined": 11, "rows_sent": 1}  # fmt: skip
    post(client, session_factory, settings, {"batch_id": "q1", "events": [event]})

    body = client.get("/api/v1/instances/1/users").json()
    assert body["source"] == "userstat"
    app, report = body["users"]
    assert (app["user"], app["cpu_time_s"], app["busy_time_s"]) == ("app", 1.5, 2.25)
    assert (app["connections_total"], app["connections_concurrent"]) == (4, 2)  # summed; greatest
    assert (app["connections_denied"], app["access_denied"], app["errors"]) == (1, 4, 5)
    assert (app["rows_read"], app["rows_sent"], app["rows_changed"]) == (70, 9, 6)
    assert (app["rows_inserted"], app["rows_updated"], app["rows_deleted"]) == (1, 2, 3)
    assert (app["calls"], app["query_time_s"], app["load_share"]) == (1, 0.75, 1.0)
    # Percona Server's layout: rows read from tables, rows fetched, every change in one.
    assert (report["user"], report["rows_read"], report["rows_sent"]) == ("report", 60, 6)
    assert (report["rows_changed"], report["rows_updated"], report["calls"]) == (5, None, None)

    # Only the range asked for: nothing before the first interval.
    # Absolute times: NOW is taken when the module is imported, minutes before in a long run.
    before = {"from": iso(NOW - timedelta(hours=1)), "to": iso(NOW - timedelta(minutes=8))}
    response = client.get("/api/v1/instances/1/users", params=before)
    assert response.json()["users"] == []
    other = client.get(
        "/api/v1/instances/1/users", params={"from": iso(NOW - timedelta(minutes=6))}
    ).json()
    assert other["source"] == "userstat"


def test_users_without_userstat_come_from_the_query_store(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    event = {"ts": (NOW - timedelta(minutes=5)).isoformat(), "query": "SELECT * FROM t",
             "query_time": 0.5, "user": "app", "rows_examined": 40, "rows_sent": 4}  # fmt: skip
    post(client, session_factory, settings, {"batch_id": "q1", "events": [event, event]})
    body = client.get("/api/v1/instances/1/users").json()
    assert body["source"] == "queries"
    (app,) = body["users"]
    assert (app["user"], app["calls"], app["query_time_s"]) == ("app", 2, 1.0)
    assert (app["rows_read"], app["rows_sent"], app["cpu_time_s"]) == (80, 8, None)


def test_index_review_calls_an_index_unused_only_after_an_unbroken_window(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    settings.index_unused_min_minutes = 60
    start = timedelta(minutes=100)
    ingest_stats(
        client, session_factory, settings, "s1",
        observed=observed(start, timedelta(minutes=30)),
        indexes=[index_row("idx_a_b", start, 9)],
    )  # fmt: skip
    snapshot(session_factory)
    review = client.get("/api/v1/instances/1/index-review").json()
    # idx_a is a prefix of idx_a_b: redundant whatever the statistics say.
    assert [(f["index"], f["kind"], f["covered_by"]) for f in review["findings"]] == [
        ("idx_a", "redundant", "idx_a_b")
    ]
    assert review["tables"][0]["unused_checked"] is False  # 30 minutes < 60
    assert review["unused_after_minutes"] == 60

    # The next poll, contiguous: 90 minutes of statistics without a break.
    ingest_stats(
        client, session_factory, settings, "s2",
        observed=observed(timedelta(minutes=70), timedelta(minutes=60)),
    )  # fmt: skip
    review = client.get("/api/v1/instances/1/index-review", params={"from": "now-2h"}).json()
    kinds = {(f["index"], f["kind"]) for f in review["findings"]}
    # idx_c had no reads; uniq_b enforces a constraint, so it is never "unused".
    assert kinds == {("idx_a", "redundant"), ("idx_c", "unused")}
    unused = next(f for f in review["findings"] if f["index"] == "idx_c")
    assert unused["ddl"] == "ALTER TABLE shop.orders DROP INDEX idx_c"
    assert "not read in 90 minutes of unbroken statistics" in unused["reason"]
    table = review["tables"][0]
    assert (table["table"], table["unused_checked"]) == ("shop.orders", True)
    assert table["statistics_since"].startswith((NOW - start).isoformat()[:16])
    reads = {(i["index"], i["reads"]) for i in review["indexes"]}
    assert reads == {("primary", 0), ("idx_a", 0), ("idx_a_b", 9), ("idx_c", 0), ("uniq_b", 0)}

    # The server restarts: its counters start again, and so does the window.
    ingest_stats(
        client, session_factory, settings, "s3",
        observed=observed(timedelta(minutes=10), timedelta(minutes=1), reset="restart"),
    )  # fmt: skip
    review = client.get("/api/v1/instances/1/index-review").json()
    assert [f["kind"] for f in review["findings"]] == ["redundant"]
    assert review["tables"][0]["unused_checked"] is False
    coverage = review["coverage"]
    assert coverage["broken_at"] == coverage["since"]
    assert coverage["break_reason"] == "the server restarted, which reset its counters"


def test_a_table_whose_own_counters_reset_starts_its_window_again(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    settings.index_unused_min_minutes = 60
    ingest_stats(
        client, session_factory, settings, "s1",
        observed=observed(timedelta(minutes=100), timedelta(minutes=95)),
        indexes=[index_row("idx_a_b", timedelta(minutes=20), 3, reset=True)],
    )  # fmt: skip
    snapshot(session_factory)
    review = client.get("/api/v1/instances/1/index-review").json()
    assert review["tables"][0]["unused_checked"] is False  # 14 minutes since its reset
    assert review["coverage"]["broken_at"] is None  # the instance's window is whole


def test_statistics_endpoints_answer_4xx(client: TestClient) -> None:
    for path in ("tables", "users", "index-review"):
        missing = client.get(f"/api/v1/instances/99/{path}")
        assert (missing.status_code, missing.json()["detail"]) == (404, "No instance with id 99.")
    bad = client.get("/api/v1/instances/99/tables", params={"from": "yesterday"})
    assert bad.status_code == 400
    assert "Cannot read time 'yesterday'" in bad.json()["detail"]


def test_tables_with_statistics_get_a_snapshot_once_per_maximum_age(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    with session_scope(session_factory) as session:
        session.add(
            Instance(name="db1", dsn_encrypted=encrypt(settings, "mysql://u:p@127.0.0.1:1/"))
        )
    snapshot(session_factory, "shop.items")  # fresh: not asked for again
    rows = [table_row("orders", timedelta(minutes=3), rows_read=1),
            table_row("items", timedelta(minutes=3), rows_read=1)]  # fmt: skip
    ingest_stats(client, session_factory, settings, "s1", tables=rows)
    ingest_stats(client, session_factory, settings, "s2", tables=rows)  # asked for already
    with Connection(settings.broker_url) as conn, conn.SimpleQueue(ANALYSIS_QUEUE) as queue:
        message = queue.get(timeout=10)
        message.ack()
        assert queue.qsize() == 0
    assert message.headers["task"] == REFRESH_TABLES_TASK
    assert message.payload[0] == [1, ["shop.orders"]]
    assert stored(session_factory)[("table", "orders", "")].snapshot_requested_at is not None


def test_the_bucket_columns_are_the_wire_format_s_counters() -> None:
    """One registry (statistics.counters) and the ingest wire format agree; every figure
    of the Users mapping reads known columns and is a field of the API's row."""
    wire = {
        name
        for model in (ingest_schemas.TableStatIn, ingest_schemas.UserStatIn)
        for name in model.model_fields
    } - {"origin", "schema_name", "table_name", "user", "interval_start", "interval_end", "reset"}
    assert wire == {*COUNTS, *SECONDS, *GAUGE_COLUMNS}
    mapping = user_columns()
    columns = {c for by_layout in mapping.figures.values() for cs in by_layout.values() for c in cs}
    assert columns <= {*COUNTS, *SECONDS, *GAUGE_COLUMNS.values()}
    assert set(mapping.figures) <= set(UserWorkloadOut.model_fields)
    assert set(mapping.layouts.values()) <= set(COUNTS)


def test_old_unused_days_setting_is_still_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QUANTA_INDEX_UNUSED_MIN_DAYS", "2")
    assert Settings(env="test").index_unused_min_minutes == 2 * 24 * 60
    monkeypatch.setenv("QUANTA_INDEX_UNUSED_MIN_MINUTES", "5")
    assert Settings(env="test").index_unused_min_minutes == 5  # the new name wins
    monkeypatch.delenv("QUANTA_INDEX_UNUSED_MIN_DAYS")
    monkeypatch.delenv("QUANTA_INDEX_UNUSED_MIN_MINUTES")
    assert Settings(env="test").index_unused_min_minutes == 7 * 24 * 60
