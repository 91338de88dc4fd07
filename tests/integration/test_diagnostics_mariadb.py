"""EXPLAIN and profiles end to end against a real MariaDB: instances registered through the
API with real DSNs, examples stored by the ingest service, runs executed by the diagnostics
service (what the worker's task calls) and read back through the API.

The server runs with the general log on, so the DML test proves what was (and was not) sent.
"""

import contextlib
import gzip
import json
import re
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from hashlib import md5
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from quanta.analysis.fingerprint import fingerprint
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.diagnostics import service
from quanta.diagnostics.models import ExplainRun
from quanta.ingest import service as ingest
from quanta.ingest.models import IngestBatch
from tests.fixtures.servers import MariaDBServer, OwnMariaDB, PostgresServer, started_mariadb
from tests.helpers import without_limits

pytestmark = [pytest.mark.services, pytest.mark.timeout(300)]

DB = "shop"
READER, READER_PASSWORD = "quanta_ro", "ro-secret"
# The execution target's account: on the same server, made read-only while a test needs it.
EXEC, EXEC_PASSWORD = "quanta_exec", "exec-secret"
SETUP = (
    f"CREATE DATABASE {DB}",
    f"USE {DB}",
    """CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NOT NULL,
       status VARCHAR(16) NOT NULL, amount INT NOT NULL, created_at DATETIME NOT NULL,
       KEY idx_customer (customer_id))""",
    """INSERT INTO orders SELECT seq, seq % 2000 + 1,
       ELT(seq % 5 + 1, 'new', 'paid', 'shipped', 'done', 'void'), seq % 1000,
       '2024-01-01' + INTERVAL seq MINUTE FROM seq_1_to_20000""",
    "ANALYZE TABLE orders",
    f"CREATE USER {READER}@'%' IDENTIFIED BY '{READER_PASSWORD}'",
    f"GRANT SELECT, PROCESS ON *.* TO {READER}@'%'",
    f"CREATE USER {EXEC}@'%' IDENTIFIED BY '{EXEC_PASSWORD}'",
    f"GRANT SELECT, PROCESS ON *.* TO {EXEC}@'%'",
)
FULL_SCAN = "SELECT * FROM orders WHERE amount = {} ORDER BY created_at"
DML = "UPDATE orders SET amount = 999 WHERE id = {}"
NOW = datetime.now(UTC).replace(second=0, microsecond=0)


def query_id(sql: str) -> str:
    return md5(fingerprint(sql).encode()).hexdigest()[:16].upper()


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnMariaDB]:
    general_log = tmp_path_factory.mktemp("general") / "general.log"
    args = ["--general-log=ON", f"--general-log-file={general_log}"]
    with started_mariadb(args) as own, contextlib.closing(own.server.connect()) as conn:
        with conn.cursor() as cursor:
            for statement in SETUP:
                cursor.execute(statement)
                cursor.fetchall()
        own.general_log = general_log  # type: ignore[attr-defined]
        yield own


@pytest.fixture(params=["sqlite", "postgresql"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """Quanta's own store on SQLite and on PostgreSQL (JSON columns, reserved names)."""
    database_url = None
    if request.param == "postgresql":
        server: PostgresServer = request.getfixturevalue("postgres_server")
        database_url = server.create_database(f"diag_{uuid.uuid4().hex[:12]}")
    return Settings(
        env="test",
        data_dir=tmp_path / "data",
        database_url=database_url,
        redis_url=None,
        monitored_profile_runs=2,
    )


def dsn(server: MariaDBServer, user: str, password: str) -> str:
    return f"mysql://{user}:{password}@{server.host}:{server.port}/{DB}"


def register(client: TestClient, name: str, dsn: str, **fields: Any) -> dict[str, Any]:
    response = client.post("/api/v1/instances", json={"name": name, "dsn": dsn, **fields})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def store_examples(
    client: TestClient,
    session_factory: sessionmaker[Session],
    settings: Settings,
    instance: str,
    statements: list[str],
) -> None:
    """The statements as slow-log events of the last minutes, through the ingest path."""
    events = [
        {
            "ts": (NOW - timedelta(minutes=len(statements) - i)).isoformat(),
            "query": sql,
            "query_time": 0.5,
            "rows_sent": 20,
            "rows_examined": 20000,
            "db": DB,
            "user": "app",
            "host": "web1",
        }
        for i, sql in enumerate(statements)
    ]
    ingest_events(client, session_factory, settings, instance, events)


def ingest_events(
    client: TestClient,
    session_factory: sessionmaker[Session],
    settings: Settings,
    instance: str,
    events: list[dict[str, Any]],
) -> None:
    """Wire events through the ingest API and the batch service, as an agent's would go."""
    batch_id = md5(f"{instance}{events}".encode()).hexdigest()
    payload = json.dumps({"batch_id": batch_id, "instance": instance, "events": events})
    response = client.post(
        "/api/v1/ingest",
        content=gzip.compress(payload.encode()),
        headers={"Content-Encoding": "gzip"},
    )
    assert response.status_code == 202, response.text
    with session_scope(session_factory) as session:
        batch_pk = session.scalars(
            select(IngestBatch.id).where(IngestBatch.batch_id == batch_id)
        ).one()
    with session_scope(session_factory) as session:
        ingest.process_batch(session=session, settings=settings, batch_pk=batch_pk)


def api_get(client: TestClient, what: str, sql: str, instance: str) -> dict[str, Any]:
    response = client.get(f"/api/v1/queries/{query_id(sql)}/{what}", params={"instance": instance})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def general_log_after(own: OwnMariaDB, marker: str) -> list[str]:
    """Statements the server logged after the one holding ``marker``."""
    path: Path = own.general_log  # type: ignore[attr-defined]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        text = path.read_text(errors="replace")
        if marker in text:
            lines = text.split(marker, 1)[1].splitlines()
            # Less the limits Quanta writes before each (test_guard_vectors_mariadb.py).
            return [
                without_limits(line.split(" Query\t", 1)[1]) for line in lines if " Query\t" in line
            ]
        time.sleep(0.05)
    pytest.fail(f"{marker!r} never reached the general log")


def test_test_connection_detects_the_server_and_what_the_account_may_do(
    own: OwnMariaDB, client: TestClient
) -> None:
    instance = register(client, "db1", dsn(own.server, READER, READER_PASSWORD))
    response = client.post(f"/api/v1/instances/{instance['id']}/test-connection")
    assert response.status_code == 200, response.text
    report = response.json()
    assert report["connected"] is True
    assert report["error"] is None
    assert report["flavor"] == "mariadb"
    assert report["account"] == f"{READER}@%"
    assert report["privileges"] == ["SELECT ON *.*", "PROCESS ON *.*"]
    assert report["excess_privileges"] == []
    assert report["execution_target"] is None
    checks = {c["name"]: c["ok"] for c in report["capabilities"]}
    assert checks["least_privilege"] is True
    assert checks["explain"] is True
    # Fine by design, so not listed as missing: DML needs no write privilege (it is
    # explained as its SELECT) and profiling is the execution target's (there is none).
    assert all(checks.values()), checks
    assert {"explain_dml", "profiling"}.isdisjoint(checks)
    shown = client.get(f"/api/v1/instances/{instance['id']}").json()
    assert (shown["flavor"], shown["version"]) == ("mariadb", report["version"])
    assert "MariaDB" in report["version"]


def test_full_scan_example_gives_the_full_table_scan_finding(
    own: OwnMariaDB, client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    register(client, "db1", dsn(own.server, READER, READER_PASSWORD))
    store_examples(client, session_factory, settings, "db1", [FULL_SCAN.format(5)])
    queued = client.post(
        f"/api/v1/queries/{query_id(FULL_SCAN.format(1))}/explain", params={"instance": "db1"}
    )
    assert queued.status_code == 202, queued.text
    with session_scope(session_factory) as session:  # what the worker's task does
        run = service.execute_explain(
            session=session, settings=settings, run_id=queued.json()["id"]
        )
        assert run is not None
    body = api_get(client, "explain", FULL_SCAN.format(1), "db1")
    assert (body["status"], body["error"], body["verb"]) == ("ok", None, "select")
    assert body["taken_at"] is not None
    assert body["examples"][0]["text"] == FULL_SCAN.format(5)
    assert body["examples"][0]["schema_name"] == DB
    found = {(f["kind"], f["table"]) for f in body["findings"]}
    assert ("full_table_scan", "orders") in found
    assert ("filesort", "orders") in found
    scan = next(f for f in body["findings"] if f["kind"] == "full_table_scan")
    assert "orders" in scan["message"]
    assert body["tabular"][0]["table"] == "orders"
    assert body["tabular"][0]["type"] == "ALL"
    assert body["document"]["query_block"]["select_id"] == 1
    # Rows per execution come from the query's metrics (the stored slow-log events).
    examined = [f["message"] for f in body["findings"] if f["kind"] == "rows_examined"]
    assert examined == [
        "rows examined far above rows sent: about 20,000 rows read to return 20 "
        "(1,000 per row sent, measured)"
    ]
    # No execution target: no ANALYZE (EXPLAIN never executes the statement).
    assert body["analyze"] is None
    assert body["notes"] == ["ANALYZE skipped: no execution target (EXPLAIN never executes)"]
    assert "MariaDB" in body["server_version"]


INDEXED = "SELECT * FROM orders WHERE customer_id = {}"
ADD_INDEX = "ALTER TABLE orders ADD INDEX idx_customer (customer_id)"


def slow_event(at: datetime, sql: str, rows_sent: int, rows_examined: int) -> dict[str, Any]:
    return {"ts": at.isoformat(), "query": sql, "query_time": 0.05, "rows_sent": rows_sent,
            "rows_examined": rows_examined, "db": DB, "user": "app", "host": "web1"}  # fmt: skip


@pytest.mark.parametrize(
    "change",
    ["alter in the slow log", "annotation", "earlier explain with another plan",
     "earlier explain with this plan", "none"],
)  # fmt: skip
def test_rows_examined_are_judged_on_executions_since_the_plan_changed(
    own: OwnMariaDB,
    client: TestClient,
    session_factory: sessionmaker[Session],
    settings: Settings,
    change: str,
) -> None:
    # Issue 28: full scans for an hour, then the index (the server has it now: ref, a few
    # rows), then 50 minutes of index lookups. The 24 h average (about 10,914 rows examined
    # per 10 sent) is the old plan's; only the executions after the change judge this one.
    instance = register(client, "db1", dsn(own.server, READER, READER_PASSWORD))
    changed_at = NOW - timedelta(minutes=60)
    events = [slow_event(NOW - timedelta(minutes=120 - i), INDEXED.format(i), 10, 20_000)
              for i in range(60)]  # fmt: skip
    events += [slow_event(NOW - timedelta(minutes=50 - i), INDEXED.format(i), 10, 10)
               for i in range(50)]  # fmt: skip
    if change == "alter in the slow log":
        events.append(slow_event(changed_at, ADD_INDEX, 0, 0))
    ingest_events(client, session_factory, settings, "db1", events)
    if change == "annotation":
        created = client.post(
            "/api/v1/annotations",
            json={"text": "add idx_customer", "instances": ["db1"], "time": changed_at.isoformat()},
        )
        assert created.status_code == 201, created.text
    if change.startswith("earlier explain"):
        # What an EXPLAIN taken when the index was added saw: a scan, or already the index.
        key = None if change.endswith("another plan") else "idx_customer"
        with session_scope(session_factory) as session:
            session.add(
                ExplainRun(
                    query_id=query_id(INDEXED.format(1)),
                    instance_id=instance["id"],
                    requested_at=changed_at,
                    taken_at=changed_at,
                    status="ok",
                    tabular=[{"table": "orders", "type": "ref" if key else "ALL", "key": key}],
                )
            )
    queued = client.post(
        f"/api/v1/queries/{query_id(INDEXED.format(1))}/explain", params={"instance": "db1"}
    )
    assert queued.status_code == 202, queued.text
    with session_scope(session_factory) as session:
        service.execute_explain(session=session, settings=settings, run_id=queued.json()["id"])
    body = api_get(client, "explain", INDEXED.format(1), "db1")
    assert (body["status"], body["tabular"][0]["type"]) == ("ok", "ref"), body
    examined = [f["message"] for f in body["findings"] if f["kind"] == "rows_examined"]
    if change in ("none", "earlier explain with this plan"):
        # Nothing says the plan changed: the whole window counts.
        assert examined == [
            "rows examined far above rows sent: about 10,914 rows read to return 10 "
            "(1,091 per row sent, measured)"
        ]
    else:
        assert examined == []


def test_analyze_on_a_read_only_execution_target(
    own: OwnMariaDB, client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    instance = register(
        client,
        "db1",
        dsn(own.server, READER, READER_PASSWORD),
        execution_target_dsn=dsn(own.server, EXEC, EXEC_PASSWORD),
    )
    store_examples(client, session_factory, settings, "db1", [FULL_SCAN.format(5)])
    with own.server.read_only(), session_scope(session_factory) as session:
        run = service.explain_query(
            session=session,
            settings=settings,
            query_id=query_id(FULL_SCAN.format(5)),
            instance_id=instance["id"],
        )
        assert (run.status, run.notes) == ("ok", [])
        assert run.analyze is not None  # executed on the target, verified read-only
        examined = [f for f in run.findings if f["kind"] == "rows_examined"]
    assert [f["message"] for f in examined] == [
        "rows examined far above rows sent: about 20,000 rows read to return 20 "
        "(1,000 per row sent, measured)"
    ]


def test_profile_states_and_lost_time_sum_to_the_response_time(
    own: OwnMariaDB, client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    register(
        client,
        "db1",
        dsn(own.server, READER, READER_PASSWORD),
        execution_target_dsn=dsn(own.server, EXEC, EXEC_PASSWORD),
    )
    sql = "SELECT status, COUNT(*) FROM orders WHERE amount > {} GROUP BY status"
    # Two distinct examples of one query: the profile combines both.
    store_examples(client, session_factory, settings, "db1", [sql.format(3), sql.format(7)])
    queued = client.post(
        f"/api/v1/queries/{query_id(sql.format(1))}/profile", params={"instance": "db1"}
    )
    assert queued.status_code == 202, queued.text
    with own.server.read_only(), session_scope(session_factory) as session:
        service.execute_profile(session=session, settings=settings, run_id=queued.json()["id"])
    body = api_get(client, "profile", sql.format(1), "db1")
    assert (body["status"], body["error"]) == ("ok", None)
    assert sorted(e["text"] for e in body["examples"]) == [sql.format(3), sql.format(7)]
    assert body["runs"] == 2 * settings.monitored_profile_runs
    assert len(body["run_response_us"]) == 4
    rows = body["rows"]
    assert sum(row["total_us"] for row in rows) == body["response_us"]
    assert body["response_us"] >= sum(body["run_response_us"])
    assert round(sum(row["percent"] for row in rows), 2) == 100.0
    lost = rows[-1]
    assert (lost["state"], lost["lost_time"]) == ("lost time", True)
    assert lost["total_us"] == body["lost_us"]
    states = [row["state"] for row in rows[:-1]]
    assert {"Sending data", "Opening tables"} <= set(states)
    totals = [row["total_us"] for row in rows[:-1]]
    assert totals == sorted(totals, reverse=True)
    for row in rows:
        assert row["percent"] == pytest.approx(
            100 * row["total_us"] / body["response_us"], abs=0.01
        )


def test_dml_example_is_explained_and_never_executed(
    own: OwnMariaDB, client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    # A read-only account: DML is explained as its equivalent SELECT.
    instance = register(
        client,
        "db1-dml",
        dsn(own.server, READER, READER_PASSWORD),
        execution_target_dsn=dsn(own.server, EXEC, EXEC_PASSWORD),
    )
    store_examples(client, session_factory, settings, "db1-dml", [DML.format(42)])
    marker = f"quanta-marker-{uuid.uuid4().hex}"  # unique: the server outlives this test
    with contextlib.closing(own.server.connect()) as conn, conn.cursor() as cursor:
        cursor.execute(f"SELECT '{marker}'")
    with session_scope(session_factory) as session:
        run = service.explain_query(
            session=session,
            settings=settings,
            query_id=query_id(DML.format(1)),
            instance_id=instance["id"],
        )
    assert (run.status, run.verb, run.analyze) == ("ok", "update", None)
    assert run.tabular is not None
    assert run.tabular[0]["table"] == "orders"
    with contextlib.closing(own.server.connect(DB)) as conn, conn.cursor() as cursor:
        cursor.execute("SELECT amount FROM orders WHERE id = 42")
        assert cursor.fetchone() == (42,)
    statements = general_log_after(own, marker)
    assert [s for s in statements if s.startswith("EXPLAIN")] == [
        "EXPLAIN SELECT * FROM orders WHERE id = 42",
        "EXPLAIN FORMAT=JSON SELECT * FROM orders WHERE id = 42",
    ]
    assert not [s for s in statements if re.match(r"(?i)\s*(UPDATE|DELETE|INSERT|REPLACE)\b", s)]
    # And a profile of it is refused before anything is sent.
    response = client.post(
        f"/api/v1/queries/{query_id(DML.format(1))}/profile", params={"instance": "db1-dml"}
    )
    assert response.status_code == 400
    assert response.json()["detail"].startswith("not profiled: an UPDATE is never executed")


def test_wrong_credentials_are_a_clear_stored_error(
    own: OwnMariaDB, client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    instance = register(client, "db1", dsn(own.server, READER, "wrong-password"))
    report = client.post(f"/api/v1/instances/{instance['id']}/test-connection").json()
    expected = (
        f"cannot connect to {own.server.host}:{own.server.port} as '{READER}': access denied "
        "- wrong user name or password, or the account may not connect from this host "
        "(error 1045)"
    )
    assert (report["connected"], report["error"]) == (False, expected)
    store_examples(client, session_factory, settings, "db1", [FULL_SCAN.format(5)])
    queued = client.post(
        f"/api/v1/queries/{query_id(FULL_SCAN.format(1))}/explain", params={"instance": "db1"}
    ).json()
    with session_scope(session_factory) as session:
        service.execute_explain(session=session, settings=settings, run_id=queued["id"])
    body = api_get(client, "explain", FULL_SCAN.format(1), "db1")
    assert (body["status"], body["error"]) == ("failed", expected)
    assert "wrong-password" not in json.dumps(body)
    assert "Traceback" not in json.dumps(body)
