"""Index suggestions against a real MariaDB: snapshots read through a read-only account,
suggestions that become applied when their index appears, dismissals that survive a re-run,
and sandbox validation that compares EXPLAIN before and after on a scratch copy.

Two throw-away servers: the monitored one (its account may only SELECT) and a sandbox (its
account may only touch databases named quanta_sandbox*). The monitored server also has the
sandbox account, so a sandbox DSN that reaches it would work there if Quanta did not refuse
it: the refusal tests prove Quanta, not the grants, keeps it from writing.
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
from quanta.analysis.sqlkind import classify_statement
from quanta.analysis.sqltext import SESSION_SQL_MODE
from quanta.audit.models import AuditEntry
from quanta.core.config import Settings
from quanta.core.crypto import encrypt
from quanta.core.db import session_scope, utcnow
from quanta.core.mysql import parse_dsn
from quanta.indexplan import service as plan_service
from quanta.instances.models import Instance
from quanta.monitored.options import MonitoredSettings
from quanta.monitored.sandbox import SandboxSession
from quanta.notify.models import Delivery
from quanta.notify.schemas import ChannelCreate
from quanta.notify.service import create_channel
from quanta.queries.models import (
    QueryBucketHour,
    QueryBucketMinute,
    QueryClass,
    QueryExample,
    QueryTotalsHour,
)
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
# Statement counters of the whole server: a refused sandbox leaves them all as they were.
WRITE_COUNTERS = (
    "Com_create_db",
    "Com_create_table",
    "Com_insert",
    "Com_alter_table",
    "Com_drop_db",
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


@pytest.fixture(scope="module")
def sandbox_server() -> Iterator[MariaDBServer]:
    """A second throw-away server: the scratch server an admin registers as sandbox."""
    with started_mariadb() as own:
        execute(own.server, *SETUP)
        yield own.server


def write_counts(server: MariaDBServer) -> dict[str, int]:
    names = ", ".join(f"'{name}'" for name in WRITE_COUNTERS)
    rows = execute(server, f"SHOW GLOBAL STATUS WHERE Variable_name IN ({names})")
    return {str(name): int(value) for name, value in rows}


def databases(server: MariaDBServer) -> set[str]:
    return {row[0] for row in execute(server, "SHOW DATABASES")}


def execute(server: MariaDBServer, *statements: str) -> list[Any]:
    with contextlib.closing(server.connect()) as conn, conn.cursor() as cursor:
        rows: list[Any] = []
        for statement in statements:
            cursor.execute(statement)
            rows = list(cursor.fetchall())
        return rows


def dsn(server: MariaDBServer, user: str, password: str) -> str:
    return f"mysql://{user}:{password}@{server.host}:{server.port}/"


def socket_dsn(server: MariaDBServer, user: str, password: str) -> str:
    """The same server through its socket: another address, so only its identity tells."""
    return f"mysql://{user}:{password}@localhost/?unix_socket={server.unix_socket}"


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
    others: dict[str, str] | None = None,
) -> tuple[str, int]:
    """Instance db1 (read-only DSN, optional sandbox), ``others`` (name: DSN) and a full-scan
    query on ``table``."""
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
        for name, other in (others or {}).items():
            session.add(Instance(name=name, dsn_encrypted=encrypt(settings, other)))
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
    # Not covering (issue 26): two rows per phone, two primary-key lookups are cheap.
    return f"ALTER TABLE {DB}.{table} ADD INDEX idx_{table}_phone (phone)"


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
    assert names == ["idx_customer", f"idx_{table}_phone"]


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
    mariadb: MariaDBServer,
    sandbox_server: MariaDBServer,
    settings: Settings,
    session_factory: sessionmaker[Session],
    table: str,
) -> None:
    sandbox = dsn(sandbox_server, SANDBOX_USER, SANDBOX_PASSWORD)
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
    assert after["key"] == f"idx_{table}_phone"
    assert after["rows"] <= 2
    assert validation["summary"] == (
        f"{table}: ALL, {before['rows']:,} rows -> ref idx_{table}_phone, {after['rows']:,} rows"
    )
    assert validation["sandbox"] == f"{sandbox_server.host}:{sandbox_server.port}"
    # The run is audited: beat's (no one asked), on the monitored server and the sandbox.
    [entry] = run_entries(session_factory)
    assert (entry.actor, entry.action, entry.target["query_id"]) == (
        "beat",
        "run suggestion",
        query_id,
    )
    assert entry.detail["where"] == [
        {"role": "monitored server", "address": f"{mariadb.host}:{mariadb.port}"},
        {"role": "sandbox", "address": validation["sandbox"]},
    ]
    assert entry.detail["outcome"] == "ok"
    # The scratch copies are gone, and the monitored table never got the index.
    assert execute(sandbox_server, "SHOW DATABASES LIKE 'quanta\\_sandbox%'") == []
    assert execute(mariadb, "SHOW DATABASES LIKE 'quanta\\_sandbox%'") == []
    indexes = {row[2] for row in execute(mariadb, f"SHOW INDEX FROM {DB}.{table}")}
    assert indexes == {"PRIMARY", "idx_customer"}


def run_entries(session_factory: sessionmaker[Session]) -> list[AuditEntry]:
    with session_scope(session_factory) as session:
        entries = list(session.scalars(select(AuditEntry).where(AuditEntry.action.like("run %"))))
        session.expunge_all()
        return entries


def test_a_broad_monitoring_account_gets_no_sandbox_run(
    mariadb: MariaDBServer,
    sandbox_server: MariaDBServer,
    settings: Settings,
    session_factory: sessionmaker[Session],
    table: str,
) -> None:
    sandbox = dsn(sandbox_server, SANDBOX_USER, SANDBOX_PASSWORD)
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
    mariadb: MariaDBServer,
    sandbox_server: MariaDBServer,
    settings: Settings,
    session_factory: sessionmaker[Session],
    table: str,
) -> None:
    wrong = dsn(sandbox_server, SANDBOX_USER, "wrong-password")
    query_id, instance_id = seed(session_factory, settings, mariadb, table, sandbox_dsn=wrong)
    [suggestion] = advise(session_factory, settings, query_id, instance_id)
    assert suggestion.status == "new"
    assert suggestion.validation is not None
    assert suggestion.validation["improved"] is None
    assert suggestion.validation["error"].startswith(
        f"cannot connect to the sandbox {sandbox_server.host}:{sandbox_server.port}"
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
    mariadb: MariaDBServer,
    sandbox_server: MariaDBServer,
    settings: Settings,
    session_factory: sessionmaker[Session],
    table: str,
) -> None:
    example = (
        f"SELECT o.id, p.amount FROM {DB}.{table} AS o JOIN {DB}.{table} AS p ON p.id = o.id"
        " WHERE o.phone = '555-0042'"
    )
    sandbox = dsn(sandbox_server, SANDBOX_USER, SANDBOX_PASSWORD)
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


REFUSAL_END = "a sandbox must be a separate scratch server, since Quanta writes to it"


@pytest.mark.parametrize(
    "case",
    ["monitored server, same address", "monitored server, its socket", "another instance"],
)
def test_a_sandbox_that_is_a_monitored_server_is_refused_and_nothing_is_created(
    case: str,
    mariadb: MariaDBServer,
    sandbox_server: MariaDBServer,
    settings: Settings,
    session_factory: sessionmaker[Session],
    table: str,
) -> None:
    others: dict[str, str] = {}
    if case == "monitored server, same address":
        target, name = mariadb, "db1"
        sandbox = dsn(mariadb, SANDBOX_USER, SANDBOX_PASSWORD)
        why = "its DSN names the same host and port"
    elif case == "monitored server, its socket":
        target, name = mariadb, "db1"
        sandbox = socket_dsn(mariadb, SANDBOX_USER, SANDBOX_PASSWORD)
        why = f"same hostname {hostname(mariadb)}, port {mariadb.port} and server_id 1"
    else:  # the sandbox server is monitored too, as db2
        target, name = sandbox_server, "db2"
        others = {"db2": dsn(sandbox_server, RO_USER, RO_PASSWORD)}
        sandbox = socket_dsn(sandbox_server, SANDBOX_USER, SANDBOX_PASSWORD)
        why = f"same hostname {hostname(sandbox_server)}, port {sandbox_server.port}"
    query_id, instance_id = seed(
        session_factory, settings, mariadb, table, sandbox_dsn=sandbox, others=others
    )
    counts, names = write_counts(target), databases(target)

    [suggestion] = advise(session_factory, settings, query_id, instance_id)

    assert suggestion.validation is not None
    assert suggestion.validation["improved"] is None
    assert suggestion.validation["refused"] is True
    error = suggestion.validation["error"]
    assert f"is the server of instance '{name}' ({why}" in error
    assert error.endswith(REFUSAL_END)
    # Nothing was written there: no database, no table, no row, no index.
    assert write_counts(target) == counts
    assert databases(target) == names
    indexes = {row[2] for row in execute(mariadb, f"SHOW INDEX FROM {DB}.{table}")}
    assert indexes == {"PRIMARY", "idx_customer"}
    assert execute(mariadb, f"SELECT COUNT(*) FROM {DB}.{table}") == [(6000,)]


def hostname(server: MariaDBServer) -> str:
    return str(execute(server, "SELECT @@hostname")[0][0]).lower()


WRITING_FUNCTION = (
    f"CREATE DATABASE IF NOT EXISTS {DB}",
    f"CREATE TABLE IF NOT EXISTS {DB}.audit_innodb (id INT AUTO_INCREMENT PRIMARY KEY) "
    "ENGINE=InnoDB",
    f"CREATE TABLE IF NOT EXISTS {DB}.audit_myisam (id INT AUTO_INCREMENT PRIMARY KEY) "
    "ENGINE=MyISAM",
    f"""CREATE OR REPLACE FUNCTION {DB}.fwrite() RETURNS INT DETERMINISTIC MODIFIES SQL DATA
    BEGIN
      INSERT INTO {DB}.audit_innodb () VALUES ();
      INSERT INTO {DB}.audit_myisam () VALUES ();
      RETURN 1;
    END""",
    f"GRANT EXECUTE ON FUNCTION {DB}.fwrite TO {SANDBOX_USER}@'%'",
)


def audit_rows(server: MariaDBServer) -> list[Any]:
    return [
        execute(server, f"SELECT COUNT(*) FROM {DB}.audit_{engine}")[0][0]
        for engine in ("innodb", "myisam")
    ]


def test_an_example_calling_a_writing_function_is_not_run_in_the_sandbox(
    mariadb: MariaDBServer,
    sandbox_server: MariaDBServer,
    settings: Settings,
    session_factory: sessionmaker[Session],
    table: str,
) -> None:
    """The function exists on both servers (a sandbox restored from a backup has them)."""
    for server in (mariadb, sandbox_server):
        execute(server, *WRITING_FUNCTION)
    example = f"SELECT id, amount FROM {table} WHERE phone = '555-0042' AND amount > {DB}.fwrite()"
    sandbox = dsn(sandbox_server, SANDBOX_USER, SANDBOX_PASSWORD)
    query_id, instance_id = seed(session_factory, settings, mariadb, table, sandbox, example)
    refusal = classify_statement(example).explain_refusal

    suggestions = advise(session_factory, settings, query_id, instance_id)

    [added] = [s for s in suggestions if s.action == "add"]
    assert added.validation is not None
    assert added.validation["improved"] is None
    if refusal is not None:  # the classifier refuses calls of stored functions
        assert added.validation == {
            "error": f"not explained in the sandbox: {refusal}",
            "improved": None,
            "refused": True,
        }
    else:  # it does not (yet): the EXPLAIN's READ ONLY transaction stops the write
        assert added.validation["error"] == "the sandbox refused EXPLAIN SELECT (error 1792)"
    assert audit_rows(sandbox_server) == [0, 0]
    assert audit_rows(mariadb) == [0, 0]


def test_system_tables_the_example_names_are_not_copied(
    mariadb: MariaDBServer,
    sandbox_server: MariaDBServer,
    settings: Settings,
    session_factory: sessionmaker[Session],
    table: str,
) -> None:
    example = (
        f"SELECT o.id, o.amount FROM {table} AS o WHERE o.phone = '555-0042' "
        "AND EXISTS (SELECT 1 FROM mysql.user) AND EXISTS (SELECT 1 FROM mysql.db) "
        "AND EXISTS (SELECT 1 FROM information_schema.TABLES)"
    )
    # The plans join the sandbox's own system tables: its account may read them.
    execute(sandbox_server, f"GRANT SELECT, SHOW VIEW ON mysql.* TO {SANDBOX_USER}@'%'")
    sandbox = dsn(sandbox_server, SANDBOX_USER, SANDBOX_PASSWORD)
    query_id, instance_id = seed(session_factory, settings, mariadb, table, sandbox, example)
    execute(
        mariadb,
        "TRUNCATE mysql.general_log",
        "SET GLOBAL log_output = 'FILE,TABLE'",
        "SET GLOBAL general_log = ON",
    )
    try:
        suggestions = advise(session_factory, settings, query_id, instance_id)
    finally:
        execute(mariadb, "SET GLOBAL general_log = OFF", "SET GLOBAL log_output = 'FILE'")

    [added] = [s for s in suggestions if s.action == "add" and s.table_name == f"{DB}.{table}"]
    assert added.validation is not None
    assert added.validation["sample_rows"] == {f"{DB}.{table}": SAMPLE_ROWS}
    assert added.validation["not_copied"] == [
        "information_schema.tables",
        "mysql.db",
        "mysql.user",
    ]
    assert added.validation["before"]  # explained there
    assert added.validation["after"]
    # No row of a system table was read from the monitored server to be copied.
    sampled = [
        str(row[0])
        for row in execute(
            mariadb,
            "SELECT CONVERT(argument USING utf8mb4) FROM mysql.general_log "
            f"WHERE user_host LIKE '{RO_USER}%' AND command_type = 'Query' "
            "AND argument LIKE '%LIMIT%'",
        )
    ]
    assert any(f"FROM {DB}.{table} LIMIT {SAMPLE_ROWS}" in text for text in sampled), sampled
    assert not [t for t in sampled if "mysql" in t.lower() or "information_schema.tables" in t]


def test_the_sample_size_setting_limits_the_copied_rows(
    mariadb: MariaDBServer,
    sandbox_server: MariaDBServer,
    settings: Settings,
    session_factory: sessionmaker[Session],
    table: str,
) -> None:
    small = settings.model_copy(update={"advice_sandbox_sample_rows": 150})
    sandbox = dsn(sandbox_server, SANDBOX_USER, SANDBOX_PASSWORD)
    query_id, instance_id = seed(session_factory, small, mariadb, table, sandbox_dsn=sandbox)
    [suggestion] = advise(session_factory, small, query_id, instance_id)
    assert suggestion.validation is not None
    assert suggestion.validation["sample_rows"] == {f"{DB}.{table}": 150}
    [before] = suggestion.validation["before"]
    assert before["type"] == "ALL"
    assert before["rows"] <= 150


def test_the_sandbox_session_has_the_guards_sql_mode_and_a_server_enforced_time_limit(
    sandbox_server: MariaDBServer,
) -> None:
    """One guard for every session: the sandbox's sql_mode is the monitored session's."""
    options = parse_dsn(dsn(sandbox_server, SANDBOX_USER, SANDBOX_PASSWORD))
    with SandboxSession(options, MonitoredSettings(statement_timeout=7.5)) as session:
        assert session.flavor == "mariadb"
        # Read on the session's own connection, past its statement check (a test's view).
        assert session._conn is not None
        with session._conn.cursor() as cursor:
            cursor.execute(
                "SELECT @@SESSION.max_statement_time AS limit_s, @@SESSION.sql_mode AS mode, "
                "@@SESSION.autocommit AS autocommit"
            )
            variables = cursor.fetchone()
    assert variables == {"limit_s": 7.5, "mode": SESSION_SQL_MODE, "autocommit": 1}


def binlog_text(server: MariaDBServer) -> str:
    files = [row[0] for row in execute(server, "SHOW BINARY LOGS")]
    events = [execute(server, f"SHOW BINLOG EVENTS IN '{name}'") for name in files]
    return "\n".join(str(row[-1]) for rows in events for row in rows)


def test_a_sandbox_writing_a_binary_log_keeps_the_copies_out_of_it(
    mariadb: MariaDBServer,
    settings: Settings,
    session_factory: sessionmaker[Session],
    table: str,
) -> None:
    """A replication source as sandbox: its replicas must not receive the copies."""
    with started_mariadb(["--log-bin=sandbox-bin", "--server-id=2"]) as own:
        source = own.server
        execute(source, *SETUP)
        sandbox = dsn(source, SANDBOX_USER, SANDBOX_PASSWORD)
        query_id, instance_id = seed(session_factory, settings, mariadb, table, sandbox)
        counts = write_counts(source)

        [refused] = advise(session_factory, settings, query_id, instance_id)
        assert refused.validation is not None
        assert refused.validation["refused"] is True
        assert "writes a binary log" in refused.validation["error"]
        assert write_counts(source) == counts

        execute(source, f"GRANT BINLOG ADMIN ON *.* TO {SANDBOX_USER}@'%'")
        with session_scope(session_factory) as session:  # check it again
            session.get_one(Suggestion, refused.id).validation = None
        [checked] = advise(session_factory, settings, query_id, instance_id)
        assert checked.validation is not None
        assert checked.validation["improved"] is True, checked.validation
        assert write_counts(source)["Com_create_db"] == counts["Com_create_db"] + 1
        assert "quanta_sandbox" not in binlog_text(source)


def test_a_dml_example_is_explained_in_the_sandbox_and_changes_nothing(
    mariadb: MariaDBServer,
    sandbox_server: MariaDBServer,
    settings: Settings,
    session_factory: sessionmaker[Session],
    table: str,
) -> None:
    example = f"UPDATE {table} SET amount = 1 WHERE phone = '555-0042'"
    sandbox = dsn(sandbox_server, SANDBOX_USER, SANDBOX_PASSWORD)
    query_id, instance_id = seed(session_factory, settings, mariadb, table, sandbox, example)
    before = execute(mariadb, f"SELECT SUM(amount) FROM {DB}.{table}")
    counts = write_counts(mariadb)

    [added] = [s for s in advise(session_factory, settings, query_id, instance_id) if s.ddl]

    assert added.validation is not None
    assert added.validation["improved"] is True, added.validation
    [after] = added.validation["after"]
    assert after["type"] in ("ref", "range")
    assert execute(mariadb, f"SELECT SUM(amount) FROM {DB}.{table}") == before
    assert write_counts(mariadb) == counts


def add_load(session_factory: sessionmaker[Session], instance_id: int, query_id: str) -> None:
    """What record_digest writes for one bucket of the last hour: the buckets and totals."""
    start = utcnow().replace(minute=0, second=0, microsecond=0) - timedelta(hours=1)
    dimensions = {"schema_name": DB, "user_name": "app", "client_host": "h"}
    with session_scope(session_factory) as session:
        session.get_one(Instance, instance_id).primary_source = "slowlog"
        for model, extra in (
            (QueryBucketMinute, dimensions),
            (QueryBucketHour, dimensions),
            (QueryTotalsHour, {}),
        ):
            session.add(
                model(
                    instance_id=instance_id,
                    bucket_start=start,
                    query_id=query_id,
                    source="slowlog",
                    count=50,
                    query_time_sum=20.0,
                    rows_examined_sum=300_000,
                    **extra,
                )
            )


def test_index_plan_is_checked_whole_on_a_sandbox_copy(
    mariadb: MariaDBServer,
    sandbox_server: MariaDBServer,
    settings: Settings,
    session_factory: sessionmaker[Session],
    client: TestClient,
    table: str,
) -> None:
    sandbox = dsn(sandbox_server, SANDBOX_USER, SANDBOX_PASSWORD)
    query_id, instance_id = seed(session_factory, settings, mariadb, table, sandbox_dsn=sandbox)
    add_load(session_factory, instance_id, query_id)
    chat = settings.model_copy(update={"allow_private_webhooks": True})
    with session_scope(session_factory) as session:
        create_channel(
            session=session,
            settings=chat,
            data=ChannelCreate(
                name="dba", type="webhook", url="https://hooks.test/q", events=["index_plan"]
            ),
        )
    with session_scope(session_factory) as session:
        run = plan_service.plan_instance(session=session, settings=chat, instance_id=instance_id)
        assert len(run.plans) == 1
        assert run.changed == (run.plans[0].id,)
    body = client.get(f"/api/v1/instances/{instance_id}/index-plan").json()
    (plan,) = body["plans"]
    assert plan["table"] == f"{DB}.{table}"
    # The snapshot was read from the server, the plan checked on the sandbox's copy.
    assert plan["ddl"] == ddl(table)
    assert plan["validation"]["sandbox"] == f"{sandbox_server.host}:{sandbox_server.port}"
    assert plan["validation"]["sample_rows"] == {f"{DB}.{table}": SAMPLE_ROWS}
    assert plan["rejected"] == []
    (add,) = plan["adds"]
    assert add["name"] == f"idx_{table}_phone"
    assert add["validation"] == "confirmed"
    (served,) = add["served"]
    assert served["query_id"] == query_id
    assert served["load_share"] == 1.0
    assert served["calls"] == 50
    assert served["rows_examined_per_call"] == 6000
    check = served["sandbox"]
    assert check["improved"] is True
    assert check["worse"] is False
    assert check["rows_before"] >= SAMPLE_ROWS * 0.9  # a scan of the sample
    assert check["rows_after"] <= 2
    assert check["summary"] == (
        f"{table}: ALL, {check['rows_before']:,} rows -> ref idx_{table}_phone, "
        f"{check['rows_after']:,} rows"
    )
    # Chat gets the plan once, with the sandbox's plans before and after.
    with session_scope(session_factory) as session:
        (delivery,) = session.query(Delivery).all()
        assert delivery.event == "index_plan"
        assert delivery.payload["ddl"] == ddl(table)
        assert delivery.payload["plan_before"] == f"{table}: ALL, {check['rows_before']:,} rows"
        assert delivery.payload["plan_after"] == (
            f"{table}: ref idx_{table}_phone, {check['rows_after']:,} rows"
        )
    # Audited as a plan run, and nothing left behind on either server.
    [entry] = run_entries(session_factory)
    assert (entry.actor, entry.action, entry.target["table"]) == (
        "beat",
        "run index_plan",
        f"{DB}.{table}",
    )
    assert entry.detail["outcome"] == "ok"
    assert execute(sandbox_server, "SHOW DATABASES LIKE 'quanta\\_sandbox%'") == []
    indexes = {row[2] for row in execute(mariadb, f"SHOW INDEX FROM {DB}.{table}")}
    assert indexes == {"PRIMARY", "idx_customer"}
