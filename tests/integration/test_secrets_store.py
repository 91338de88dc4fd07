"""No password is shown or kept: examples are redacted whatever an agent sent, and raw
batches are transient (dropped once processed, by purge and by retention), on SQLite and on
PostgreSQL, through the API with the default ``full`` example policy."""

from __future__ import annotations

import gzip
import json
import random
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

from quanta.analysis.fingerprint import fingerprint, query_id
from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.folder import MinuteFolder
from quanta.analysis.slowlog import SlowLogEvent
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.ingest import service as ingest
from quanta.ingest.models import BatchStatus, IngestBatch
from quanta.queries.models import QueryBucketMinute
from quanta_agent.aggregates import aggregates
from quanta_agent.policy import ExamplePolicy
from tests.fixtures.servers import PostgresServer
from tests.helpers import process_all, rows_as_sent

NOW = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)
CREATE_USER = "CREATE USER 'monitor'@'%' IDENTIFIED BY 'sekret'"
SET_PASSWORD = "SET PASSWORD FOR 'monitor'@'%' = PASSWORD('sekret')"
CHANGE_MASTER = "CHANGE MASTER TO MASTER_HOST='db1', MASTER_PASSWORD='sekret'"
ALTER_USER = "ALTER USER 'app'@'%' IDENTIFIED BY 'sekret' REPLACE 'old-sekret'"


@pytest.fixture(params=["sqlite", "postgresql"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    database_url = None
    if request.param == "postgresql":
        server: PostgresServer = request.getfixturevalue("postgres_server")
        database_url = server.create_database(f"secrets_{uuid.uuid4().hex[:12]}")
    return Settings(env="test", data_dir=tmp_path / "data", database_url=database_url)


def event(sql: str, query_time: float = 0.5) -> dict[str, Any]:
    return {
        "ts": NOW.isoformat(), "query": sql, "query_time": query_time, "lock_time": 0.0,
        "rows_sent": 0, "rows_examined": 0, "db": "mysql", "user": "root", "host": "localhost",
    }  # fmt: skip


def post(client: TestClient, body: dict[str, Any], expect: int = 202) -> dict[str, Any]:
    response = client.post(
        "/api/v1/ingest",
        content=gzip.compress(json.dumps(body).encode()),
        headers={"Content-Encoding": "gzip"},
    )
    assert response.status_code == expect, response.text
    answer: dict[str, Any] = response.json()
    return answer


def old_agent_buckets(sql: str) -> dict[str, Any]:
    """A bucket batch as an agent that does not redact sends it: the statement as logged."""
    folder = MinuteFolder(Fingerprinter(), random.Random(0))
    folder.add(SlowLogEvent(sql, NOW, 0.5, 0.0, 0, 0, None, "mysql", "root", "h", 1, {}), {})
    content = rows_as_sent(aggregates(folder.fold(), policy=ExamplePolicy.FULL, max_length=10_000))
    raw = json.dumps(content).replace("'<redacted>'", "'sekret'")
    assert "sekret" in raw
    return {"batch_id": "buckets", "instance": "db1", **json.loads(raw)}


def perfschema_batch(sql: str) -> dict[str, Any]:
    return {
        "batch_id": "ps", "instance": "db1", "source": "perfschema",
        "digests": [{
            "schema_name": "mysql", "digest": "ab" * 16, "digest_text": fingerprint(sql),
            "interval_start": (NOW - timedelta(minutes=1)).isoformat(),
            "interval_end": NOW.isoformat(), "count_star": 1, "sum_timer_wait": 0.5,
            "example": sql, "example_literals": "full",
        }],
    }  # fmt: skip


def test_read_token_sees_no_password_in_examples(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    post(client, {"batch_id": "events", "instance": "db1",
                  "events": [event(CREATE_USER), event(SET_PASSWORD)]})  # fmt: skip
    post(client, old_agent_buckets(CHANGE_MASTER))
    post(client, perfschema_batch(ALTER_USER))
    process_all(session_factory)
    instance = client.get("/api/v1/instances").json()[0]
    assert instance["example_policy"] == "full"
    read = client.post("/api/v1/tokens", json={"name": "viewer", "scopes": ["read"]}).json()
    window = {"from": (NOW - timedelta(hours=1)).isoformat(), "to": datetime.now(UTC).isoformat()}

    shown = {}
    for sql in (CREATE_USER, SET_PASSWORD, CHANGE_MASTER, ALTER_USER):
        response = client.get(
            f"/api/v1/queries/{query_id(fingerprint(sql))}/examples",
            params=window,
            headers={"Authorization": f"Bearer {read['token']}"},
        )
        assert response.status_code == 200, response.text
        assert "sekret" not in response.text
        shown[sql] = {e["text"] for e in response.json()["examples"]}

    assert shown == {
        CREATE_USER: {"CREATE USER 'monitor'@'%' IDENTIFIED BY '<redacted>'"},
        SET_PASSWORD: {"SET PASSWORD FOR 'monitor'@'%' = PASSWORD('<redacted>')"},
        CHANGE_MASTER: {"CHANGE MASTER TO MASTER_HOST='db1', MASTER_PASSWORD='<redacted>'"},
        ALTER_USER: {"ALTER USER 'app'@'%' IDENTIFIED BY '<redacted>' REPLACE '<redacted>'"},
    }


def payloads(factory: sessionmaker[Session]) -> dict[str, bytes | None]:
    with session_scope(factory) as session:
        rows = session.execute(select(IngestBatch.batch_id, IngestBatch.payload_gzip)).all()
    return {batch_id: None if p is None else bytes(p) for batch_id, p in rows}


def minute_calls(factory: sessionmaker[Session]) -> int:
    with session_scope(factory) as session:
        return session.scalar(select(func.sum(QueryBucketMinute.count))) or 0


def test_the_payload_is_dropped_once_processed_and_a_resend_changes_nothing(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    body = {"batch_id": "b1", "instance": "db1", "events": [event(CREATE_USER), event("SELECT 1")]}
    assert post(client, body)["status"] == "queued"
    assert gzip.decompress(payloads(session_factory)["b1"] or b"") == json.dumps(body).encode()
    process_all(session_factory)
    assert payloads(session_factory) == {"b1": None}
    assert minute_calls(session_factory) == 2

    again = post(client, body, expect=200)
    assert (again["status"], again["events"]) == ("done", 2)
    process_all(session_factory)
    assert minute_calls(session_factory) == 2
    assert payloads(session_factory) == {"b1": None}
    status = client.get("/api/v1/ingest/b1").json()
    assert (status["status"], status["events"]) == ("done", 2)


def test_purge_and_retention_leave_no_payload_behind(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    body = {"batch_id": "b1", "instance": "db1", "events": [event(CREATE_USER)]}
    post(client, body)
    process_all(session_factory)
    post(client, {"batch_id": "waiting", "instance": "db1", "events": [event("SELECT 2")]})
    # A batch processed before payloads were transient still holds the statement as sent.
    legacy = gzip.compress(json.dumps(body).encode())
    with session_scope(session_factory) as session:
        session.execute(
            update(IngestBatch).where(IngestBatch.batch_id == "b1").values(payload_gzip=legacy)
        )

    purged = client.delete(f"/api/v1/queries/{query_id(fingerprint(CREATE_USER))}")

    assert purged.status_code == 200, purged.text
    assert purged.json()["deleted"]["ingest_batches"] == 1
    left = payloads(session_factory)
    assert left["b1"] is None
    assert left["waiting"] is not None  # not processed yet: kept until it is
    with session_scope(session_factory) as session:
        rows = session.execute(select(IngestBatch.__table__)).all()
    assert "sekret" not in repr(rows)

    # Retention (store maintenance) drops what processing did not: a batch given up on.
    with session_scope(session_factory) as session:
        session.execute(
            update(IngestBatch)
            .where(IngestBatch.batch_id == "b1")
            .values(payload_gzip=legacy, status=BatchStatus.DONE)
        )
    with session_scope(session_factory) as session:
        assert ingest.drop_processed_payloads(session=session) == 1
    assert payloads(session_factory)["b1"] is None
    assert payloads(session_factory)["waiting"] is not None


def test_store_maintenance_drops_payloads_no_longer_queued(
    client: TestClient,
    session_factory: sessionmaker[Session],
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from quanta.core.config import get_settings
    from quanta_worker.tasks import session_factory as worker_sessions
    from quanta_worker.tasks.store import maintain_store

    post(client, {"batch_id": "given-up", "instance": "db1", "events": [event(CREATE_USER)]})
    post(client, {"batch_id": "waiting", "instance": "db1", "events": [event("SELECT 2")]})
    with session_scope(session_factory) as session:
        session.execute(
            update(IngestBatch)
            .where(IngestBatch.batch_id == "given-up")
            .values(status=BatchStatus.DONE)
        )
    monkeypatch.setenv("QUANTA_ENV", "test")
    monkeypatch.setenv("QUANTA_DATA_DIR", str(settings.data_dir))
    if settings.database_url:
        monkeypatch.setenv("QUANTA_DATABASE_URL", settings.database_url)
    get_settings.cache_clear()
    worker_sessions.cache_clear()
    try:
        deleted = maintain_store()
    finally:
        worker_sessions().kw["bind"].dispose()
        get_settings.cache_clear()
        worker_sessions.cache_clear()

    assert deleted["batch_payloads"] == 1
    left = payloads(session_factory)
    assert left["given-up"] is None
    assert left["waiting"] is not None
