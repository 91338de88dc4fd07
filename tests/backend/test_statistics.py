"""Stats batches through the ingest path are summed per table, index and account, and the
existing-index review flags duplicates at once and unused indexes only after enough days."""

import gzip
import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.ingest import service as ingest
from quanta.ingest.models import IngestBatch
from quanta.instances.models import Instance
from quanta.statistics.models import ObjectStatistics
from quanta.tables.models import TableSnapshot

NOW = datetime.now(UTC).replace(microsecond=0)
ORDERS: dict[str, Any] = {
    "engine": "InnoDB",
    "rows": 1000,
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
    """Both stores: PostgreSQL merges the JSON counters through json_populate_recordset."""
    url = None
    if request.param == "postgresql":
        server = request.getfixturevalue("postgres_server")
        url = server.create_database(f"stats_{uuid.uuid4().hex[:12]}")
    return Settings(env="test", data_dir=tmp_path / "data", database_url=url, redis_url=None)


def interval(days_ago: float, **counters: int) -> dict[str, Any]:
    start = NOW - timedelta(days=days_ago)
    return {
        "interval_start": start.isoformat(),
        "interval_end": (start + timedelta(minutes=1)).isoformat(),
        **counters,
    }


def index_row(index: str | None, days_ago: float, reads: int) -> dict[str, Any]:
    return {
        "origin": "userstat",
        "schema_name": "shop",
        "table_name": "orders",
        "index_name": index,
        **interval(days_ago, rows_read=reads),
    }


def ingest_stats(
    client: TestClient, factory: sessionmaker[Session], settings: Settings, batch_id: str,
    **kinds: list[dict[str, Any]],
) -> int:  # fmt: skip
    body = {"batch_id": batch_id, "instance": "db1", "source": "stats", **kinds}
    response = client.post(
        "/api/v1/ingest",
        content=gzip.compress(json.dumps(body).encode()),
        headers={"Content-Encoding": "gzip"},
    )
    assert response.status_code == 202, response.text
    with session_scope(factory) as session:
        pk = session.scalars(select(IngestBatch.id).where(IngestBatch.batch_id == batch_id)).one()
    with session_scope(factory) as session:
        return ingest.process_batch(session=session, settings=settings, batch_pk=pk)


def stored(factory: sessionmaker[Session]) -> dict[tuple[str, str, str], ObjectStatistics]:
    with session_scope(factory) as session:
        rows = session.scalars(select(ObjectStatistics)).all()
        session.expunge_all()
    return {(r.kind, r.object_name, r.index_name): r for r in rows}


def snapshot(factory: sessionmaker[Session]) -> None:
    with session_scope(factory) as session:
        instance_id = session.scalars(select(Instance.id).where(Instance.name == "db1")).one()
        session.add(
            TableSnapshot(
                instance_id=instance_id, table_name="shop.orders", taken_at=NOW,
                changed_at=NOW, server_flavor="mariadb", server_version="10.11.6",
                content_hash="x", document=ORDERS,
            )
        )  # fmt: skip


def test_deltas_are_summed_per_object_across_batches(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    first = ingest_stats(
        client, session_factory, settings, "s1",
        tables=[{"origin": "userstat", "schema_name": "shop", "table_name": "orders",
                 **interval(2, rows_read=100, rows_changed=3)}],
        indexes=[index_row("idx_a", 2, 40), index_row("idx_a", 1.5, 2), index_row(None, 2, 7)],
    )  # fmt: skip
    second = ingest_stats(
        client, session_factory, settings, "s2",
        tables=[{"origin": "userstat", "schema_name": "shop", "table_name": "orders",
                 "reset": True, **interval(1, rows_read=5)}],
        users=[{"user": "app", **interval(1, total_connections=4)}],
    )  # fmt: skip
    assert (first, second) == (4, 2)  # rows carried; stats are not query load
    rows = stored(session_factory)
    table = rows[("table", "orders", "")]
    assert table.counters == {"rows_read": 105, "rows_changed": 3}
    assert table.resets == 1
    assert table.since == NOW - timedelta(days=2)
    assert table.until == NOW - timedelta(days=1) + timedelta(minutes=1)
    assert rows[("index", "orders", "idx_a")].counters == {"rows_read": 42}
    assert rows[("index", "orders", "")].counters == {"rows_read": 7}  # reads using no index
    assert rows[("user", "app", "")].counters == {"total_connections": 4}


def test_index_review_waits_for_enough_days_before_calling_indexes_unused(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    ingest_stats(client, session_factory, settings, "s1", indexes=[index_row("idx_a_b", 3, 9)])
    snapshot(session_factory)
    review = client.get("/api/v1/instances/1/index-review").json()
    # idx_a is a prefix of idx_a_b: redundant whatever the statistics say.
    assert [(f["index"], f["kind"], f["covered_by"]) for f in review["findings"]] == [
        ("idx_a", "redundant", "idx_a_b")
    ]
    assert review["tables"][0]["unused_checked"] is False  # 3 days < 7 (the default)

    ingest_stats(client, session_factory, settings, "s2", indexes=[index_row("idx_a_b", 8, 1)])
    review = client.get("/api/v1/instances/1/index-review").json()
    kinds = {(f["index"], f["kind"]) for f in review["findings"]}
    # idx_c had no reads in 8 days; uniq_b enforces a constraint, so it is never "unused".
    assert kinds == {("idx_a", "redundant"), ("idx_c", "unused")}
    unused = next(f for f in review["findings"] if f["index"] == "idx_c")
    assert unused["ddl"].startswith("ALTER TABLE shop.orders DROP INDEX")
    table = review["tables"][0]
    assert (table["table"], table["unused_checked"]) == ("shop.orders", True)
    assert table["statistics_since"].startswith((NOW - timedelta(days=8)).date().isoformat())


def test_index_review_of_an_unknown_instance_is_404(client: TestClient) -> None:
    response = client.get("/api/v1/instances/99/index-review")
    assert response.status_code == 404
    assert response.json()["detail"] == "No instance with id 99."
