"""Index suggestions against a real MariaDB: snapshots read through a read-only account,
suggestions that become applied when their index appears, dismissals that survive a re-run,
and sandbox validation that compares EXPLAIN before and after on a scratch copy.

One throw-away server. The monitored account may only SELECT; the sandbox account may only
touch databases named quanta_sandbox*, so the test proves the monitored data is never
written to (and the server would refuse if it were).
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from quanta.advice import service
from quanta.advice.models import Suggestion
from quanta.audit.models import AuditEntry
from quanta.core.config import Settings
from quanta.core.crypto import encrypt
from quanta.core.db import session_scope, utcnow
from quanta.instances.models import Instance
from quanta.queries.models import QueryClass, QueryExample
from quanta.tables.models import TableSnapshot
from tests.fixtures.servers import MariaDBServer, started_mariadb

pytestmark = [pytest.mark.services, pytest.mark.timeout(240)]

DB = "shop"
RO_USER, RO_PASSWORD = "quanta_ro", "ro-secret"
SANDBOX_USER, SANDBOX_PASSWORD = "quanta_sbx", "sbx-secret"
SAMPLE_ROWS = 2000
SETUP = (
    f"CREATE DATABASE {DB}",
    f"CREATE USER {RO_USER}@'%' IDENTIFIED BY '{RO_PASSWORD}'",
    f"GRANT SELECT ON *.* TO {RO_USER}@'%'",
    f"CREATE USER {SANDBOX_USER}@'%' IDENTIFIED BY '{SANDBOX_PASSWORD}'",
    f"GRANT ALL ON `quanta\\_sandbox%`.* TO {SANDBOX_USER}@'%'",
)


def orders_table(name: str) -> tuple[str, ...]:
    """6,000 orders; each phone number is on two of them; only a customer index."""
    return (
        f"USE {DB}",  # the seq_ engine's tables live in the current database
        f"""CREATE TABLE {DB}.{name} (id INT PRIMARY KEY, customer_id INT NOT NULL,
           phone VARCHAR(20) NOT NULL, amount INT NOT NULL, created_at DATETIME NOT NULL,
           INDEX idx_customer (customer_id))""",
        f"""INSERT INTO {DB}.{name} SELECT seq, seq % 1000 + 1,
           CONCAT('555-', LPAD(seq % 3000, 4, '0')), (seq * 37) % 1000,
           '2024-01-01' + INTERVAL seq MINUTE FROM seq_1_to_6000""",
        f"ANALYZE TABLE {DB}.{name}",
    )


@pytest.fixture(scope="module")
def mariadb() -> Iterator[MariaDBServer]:
    with started_mariadb() as own:
        execute(own.server, *SETUP)
        yield own.server


def execute(server: MariaDBServer, *statements: str) -> list[Any]:
    with contextlib.closing(server.connect()) as conn, conn.cursor() as cursor:
        rows: list[Any] = []
        for statement in statements:
            cursor.execute(statement)
            rows = list(cursor.fetchall())
        return rows


def dsn(server: MariaDBServer, user: str, password: str) -> str:
    return f"mysql://{user}:{password}@{server.host}:{server.port}/"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        env="test",
        data_dir=tmp_path / "data",
        database_url=None,
        redis_url=None,
        advice_sandbox_sample_rows=SAMPLE_ROWS,
    )


@pytest.fixture
def table(mariadb: MariaDBServer) -> str:
    """A fresh orders table of this test's own."""
    name = f"orders_{secrets.token_hex(3)}"
    execute(mariadb, *orders_table(name))
    return name


def seed(
    session_factory: sessionmaker[Session],
    settings: Settings,
    mariadb: MariaDBServer,
    table: str,
    sandbox_dsn: str | None = None,
    example: str | None = None,
) -> tuple[str, int]:
    """Instance db1 (read-only DSN, optional sandbox) and a full-scan query on ``table``."""
    query_id = "00000000000000" + table[-2:].upper()
    example = example or f"SELECT id, amount FROM {table} WHERE phone = '555-0042'"
    now = utcnow()
    with session_scope(session_factory) as session:
        instance = Instance(
            name="db1",
            dsn_encrypted=encrypt(settings, dsn(mariadb, RO_USER, RO_PASSWORD)),
            sandbox_dsn_encrypted=encrypt(settings, sandbox_dsn) if sandbox_dsn else None,
        )
        session.add(instance)
        session.add(
            QueryClass(
                query_id=query_id,
                fingerprint=f"select id, amount from {table} where phone = ?",
                first_seen=now,
                last_seen=now,
                statement_type="select",
                tables=[table],
            )
        )
        session.flush()
        stored = {"text": example, "query_time": 0.5, "ts": now, "schema": DB, "literals": "full"}
        session.add(
            QueryExample(
                query_id=query_id,
                resolution="minute",
                bucket_start=now.replace(second=0, microsecond=0),
                instance_id=instance.id,
                seen=1,
                **{f"{kind}_{k}": v for kind in ("slowest", "sampled") for k, v in stored.items()},
                slowest_truncated=False,
                sampled_truncated=False,
            )
        )
        return query_id, instance.id


def advise(
    session_factory: sessionmaker[Session],
    settings: Settings,
    query_id: str,
    instance_id: int,
    later: timedelta = timedelta(0),
) -> list[Suggestion]:
    with session_scope(session_factory) as session:
        run = service.advise_query(
            session=session,
            settings=settings,
            query_id=query_id,
            instance_id=instance_id,
            now=utcnow() + later,
        )
        session.expunge_all()
        return list(run.suggestions)


def ddl(table: str) -> str:
    return f"ALTER TABLE {DB}.{table} ADD INDEX idx_{table}_phone_amount (phone, amount)"


# Past the snapshot's maximum age, so the next run reads the table again.
A_DAY_LATER = timedelta(hours=25)


def test_full_scan_suggestion_becomes_applied_once_the_index_exists(
    mariadb: MariaDBServer,
    settings: Settings,
    session_factory: sessionmaker[Session],
    client: TestClient,
    table: str,
) -> None:
    query_id, instance_id = seed(session_factory, settings, mariadb, table)
    [suggestion] = advise(session_factory, settings, query_id, instance_id)
    assert (suggestion.action, suggestion.ddl, suggestion.status) == ("add", ddl(table), "new")
    assert suggestion.validation is None  # no sandbox configured

    response = client.get(f"/api/v1/instances/{instance_id}/tables/{DB}.{table}")
    assert response.status_code == 200, response.text
    snapshot = response.json()
    assert snapshot["server"]["flavor"] == "mariadb"
    assert snapshot["document"]["rows"] > 0
    assert snapshot["document"]["primary_key"] == ["id"]
    assert [i["name"] for i in snapshot["document"]["indexes"]] == ["idx_customer"]
    missing = client.get(f"/api/v1/instances/{instance_id}/tables/{DB}.customers")
    assert missing.status_code == 404
    assert "No snapshot of shop.customers was taken" in missing.json()["detail"]

    execute(mariadb, suggestion.ddl)  # the DBA applies it
    # Within a day the stored snapshot is used as it is: nothing changes yet.
    assert [s.status for s in advise(session_factory, settings, query_id, instance_id)] == ["new"]
    [after] = advise(session_factory, settings, query_id, instance_id, A_DAY_LATER)
    assert (after.id, after.ddl, after.status) == (suggestion.id, ddl(table), "applied")
    with session_scope(session_factory) as session:
        row = session.query(TableSnapshot).filter_by(table_name=f"{DB}.{table}").one()
        assert row.changed_at > row.taken_at - timedelta(seconds=1)
        names = [i["name"] for i in row.document["indexes"]]
    assert names == ["idx_customer", f"idx_{table}_phone_amount"]


def test_a_dismissal_survives_a_rerun_with_the_same_advice(
    mariadb: MariaDBServer,
    settings: Settings,
    session_factory: sessionmaker[Session],
    client: TestClient,
    table: str,
) -> None:
    query_id, instance_id = seed(session_factory, settings, mariadb, table)
    [suggestion] = advise(session_factory, settings, query_id, instance_id)
    response = client.patch(f"/api/v1/suggestions/{suggestion.id}", json={"status": "dismissed"})
    assert response.status_code == 200, response.text
    with session_scope(session_factory) as session:
        first_taken = session.query(TableSnapshot).one().taken_at
    [again] = advise(session_factory, settings, query_id, instance_id, A_DAY_LATER)
    assert (again.id, again.status, again.content_hash) == (
        suggestion.id,
        "dismissed",
        suggestion.content_hash,
    )
    with session_scope(session_factory) as session:
        assert session.query(TableSnapshot).one().taken_at > first_taken  # read again
    listed = client.get(f"/api/v1/queries/{query_id}/suggestions", params={"instance": "db1"})
    assert [s["status"] for s in listed.json()["suggestions"]] == ["dismissed"]


def test_sandbox_validation_compares_plans_on_a_scratch_copy(
    mariadb: MariaDBServer, settings: Settings, session_factory: sessionmaker[Session], table: str
) -> None:
    sandbox = dsn(mariadb, SANDBOX_USER, SANDBOX_PASSWORD)
    query_id, instance_id = seed(session_factory, settings, mariadb, table, sandbox_dsn=sandbox)
    [suggestion] = advise(session_factory, settings, query_id, instance_id)
    validation = suggestion.validation
    assert validation is not None, "the sandbox was not used"
    assert validation["improved"] is True
    assert validation["sample_rows"] == {f"{DB}.{table}": SAMPLE_ROWS}
    [before] = validation["before"]
    [after] = validation["after"]
    assert (before["type"], before["key"]) == ("ALL", None)
    assert before["rows"] >= SAMPLE_ROWS * 0.9  # the estimate of a scan of the sample
    assert after["type"] == "ref"
    assert after["key"] == f"idx_{table}_phone_amount"
    assert after["rows"] <= 2
    assert validation["summary"] == (
        f"{table}: ALL, {before['rows']:,} rows -> ref idx_{table}_phone_amount, "
        f"{after['rows']:,} rows"
    )
    # The run is audited: beat's (no one asked), on the monitored server and the sandbox.
    [entry] = run_entries(session_factory)
    assert (entry.actor, entry.action, entry.target["query_id"]) == (
        "beat",
        "run suggestion",
        query_id,
    )
    address = f"{mariadb.host}:{mariadb.port}"
    assert entry.detail["where"] == [
        {"role": "monitored server", "address": address},
        {"role": "sandbox", "address": address},
    ]
    assert entry.detail["outcome"] == "ok"
    # The scratch copies are gone, and the monitored table never got the index.
    assert execute(mariadb, "SHOW DATABASES LIKE 'quanta\\_sandbox%'") == []
    indexes = {row[2] for row in execute(mariadb, f"SHOW INDEX FROM {DB}.{table}")}
    assert indexes == {"PRIMARY", "idx_customer"}


def run_entries(session_factory: sessionmaker[Session]) -> list[AuditEntry]:
    with session_scope(session_factory) as session:
        entries = list(session.scalars(select(AuditEntry).where(AuditEntry.action.like("run %"))))
        session.expunge_all()
        return entries


def test_a_broad_monitoring_account_gets_no_sandbox_run(
    mariadb: MariaDBServer, settings: Settings, session_factory: sessionmaker[Session], table: str
) -> None:
    sandbox = dsn(mariadb, SANDBOX_USER, SANDBOX_PASSWORD)
    query_id, instance_id = seed(session_factory, settings, mariadb, table, sandbox_dsn=sandbox)
    with session_scope(session_factory) as session:  # root: ALL PRIVILEGES
        session.get_one(Instance, instance_id).dsn_encrypted = encrypt(
            settings, dsn(mariadb, "root", "")
        )
    [suggestion] = advise(session_factory, settings, query_id, instance_id)
    assert suggestion.validation is not None
    assert suggestion.validation["improved"] is None
    assert (
        "has privileges Quanta does not need (ALL PRIVILEGES ON *.*"
        in (suggestion.validation["error"])
    )
    [entry] = run_entries(session_factory)
    assert (entry.action, entry.detail["outcome"]) == ("run suggestion", "refused")
    assert execute(mariadb, "SHOW DATABASES LIKE 'quanta\\_sandbox%'") == []


def test_a_sandbox_that_refuses_is_recorded_not_fatal(
    mariadb: MariaDBServer, settings: Settings, session_factory: sessionmaker[Session], table: str
) -> None:
    wrong = dsn(mariadb, SANDBOX_USER, "wrong-password")
    query_id, instance_id = seed(session_factory, settings, mariadb, table, sandbox_dsn=wrong)
    [suggestion] = advise(session_factory, settings, query_id, instance_id)
    assert suggestion.status == "new"
    assert suggestion.validation is not None
    assert suggestion.validation["improved"] is None
    assert suggestion.validation["error"].startswith(
        f"cannot connect to the sandbox {mariadb.host}:{mariadb.port}"
    )


def test_the_daily_refresh_re_evaluates_a_changed_table_and_drops_a_gone_one(
    mariadb: MariaDBServer, settings: Settings, session_factory: sessionmaker[Session], table: str
) -> None:
    query_id, instance_id = seed(session_factory, settings, mariadb, table)
    [suggestion] = advise(session_factory, settings, query_id, instance_id)
    execute(mariadb, suggestion.ddl)
    with session_scope(session_factory) as session:
        refresh = service.refresh_suggested_tables(
            session=session,
            settings=settings,
            instance_id=instance_id,
            now=utcnow() + A_DAY_LATER,
        )
        assert refresh.changed == (f"{DB}.{table}",)
        assert session.get_one(Suggestion, suggestion.id).status == "applied"

    execute(mariadb, f"DROP TABLE {DB}.{table}")
    with session_scope(session_factory) as session:
        refresh = service.refresh_suggested_tables(
            session=session,
            settings=settings,
            instance_id=instance_id,
            now=utcnow() + 2 * A_DAY_LATER,
        )
        assert (refresh.changed, refresh.missing) == ((f"{DB}.{table}",), (f"{DB}.{table}",))
        assert session.query(TableSnapshot).count() == 0
    with pytest.raises(service.AdviceUnavailable, match="exist on instance 'db1'"):
        advise(session_factory, settings, query_id, instance_id)


def test_sandbox_validation_of_a_qualified_join_runs_on_the_scratch_copies(
    mariadb: MariaDBServer, settings: Settings, session_factory: sessionmaker[Session], table: str
) -> None:
    example = (
        f"SELECT o.id, p.amount FROM {DB}.{table} AS o JOIN {DB}.{table} AS p ON p.id = o.id"
        " WHERE o.phone = '555-0042'"
    )
    sandbox = dsn(mariadb, SANDBOX_USER, SANDBOX_PASSWORD)
    query_id, instance_id = seed(session_factory, settings, mariadb, table, sandbox, example)
    suggestions = advise(session_factory, settings, query_id, instance_id)
    [added] = [s for s in suggestions if s.action == "add"]
    assert added.ddl == f"ALTER TABLE {DB}.{table} ADD INDEX idx_{table}_phone (phone)"
    assert added.validation is not None
    assert added.validation["improved"] is True, added.validation
    by_alias = {row["table"]: row for row in added.validation["after"]}
    assert (by_alias["o"]["type"], by_alias["o"]["key"]) == ("ref", f"idx_{table}_phone")
    assert by_alias["p"]["type"] == "eq_ref"  # the join on the primary key needed nothing
    assert added.validation["summary"].startswith(f"{table}: ALL, ")
