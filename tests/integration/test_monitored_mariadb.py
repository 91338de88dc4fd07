"""quanta.monitored against a real MariaDB: EXPLAIN, profiles, schema snapshots, checks.

One throw-away server with the general log on, so tests can prove what was (and was not)
sent. Monitoring runs as a read-only account (SELECT, PROCESS) like the one an admin
registers; DML is explained as its equivalent SELECT, so it needs no write privilege.
ANALYZE and profiles execute the example: they are given this same server as their
execution target here, made read-only while they run (their session verifies it, and
refuses a server that is not).
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pymysql
import pytest

from quanta.analysis.advisor import parse_schema
from quanta.analysis.explain import FindingKind
from quanta.analysis.profile import LOST_TIME, combine_profiles
from quanta.monitored import (
    ConnectionFailed,
    ConnectionOptions,
    FeatureUnavailable,
    GuardedConnection,
    MonitoredSettings,
    ProfilingMethod,
    ServerError,
    StatementRefused,
    explain,
    profile,
    schema_snapshot,
    test_connection,
)
from quanta.monitored.target import TargetNotReadOnly
from tests.fixtures.servers import MariaDBServer, OwnMariaDB, free_port, started_mariadb
from tests.helpers import without_limits

pytestmark = [pytest.mark.services, pytest.mark.timeout(240)]

DB = "shop"
MONITOR_USER, MONITOR_PASSWORD = "quanta_ro", "ro-secret"
WRITER_USER, WRITER_PASSWORD = "quanta_rw", "rw-secret"
SETUP = (
    f"CREATE DATABASE {DB}",
    f"USE {DB}",
    """CREATE TABLE customers (id INT PRIMARY KEY, email VARCHAR(64) NOT NULL,
       country CHAR(3) NOT NULL, name VARCHAR(64), UNIQUE KEY uq_email (email),
       KEY idx_country (country))""",
    """INSERT INTO customers SELECT seq, CONCAT('u', seq, '@x'), CONCAT('c', seq % 50),
       CONCAT('n', seq) FROM seq_1_to_2000""",
    """CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NOT NULL,
       status VARCHAR(16) NOT NULL, amount INT NOT NULL, created_at DATETIME NOT NULL,
       note TEXT, KEY idx_customer (customer_id),
       KEY idx_status_created (status, created_at DESC), KEY idx_note (note(10)))""",
    """INSERT INTO orders SELECT seq, seq % 2000 + 1,
       ELT(seq % 5 + 1, 'new', 'paid', 'shipped', 'done', 'void'), seq % 1000,
       '2024-01-01' + INTERVAL seq MINUTE, 'x' FROM seq_1_to_20000""",
    "ANALYZE TABLE customers, orders",
    f"CREATE USER {MONITOR_USER}@'%' IDENTIFIED BY '{MONITOR_PASSWORD}'",
    f"GRANT SELECT, PROCESS ON *.* TO {MONITOR_USER}@'%'",
    f"CREATE USER {WRITER_USER}@'%' IDENTIFIED BY '{WRITER_PASSWORD}'",
    f"GRANT SELECT, UPDATE, DELETE, INSERT ON {DB}.* TO {WRITER_USER}@'%'",
)
FULL_SCAN = "SELECT * FROM orders WHERE amount = 5 ORDER BY created_at"


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


def options(
    server: MariaDBServer, user: str = MONITOR_USER, password: str = MONITOR_PASSWORD
) -> ConnectionOptions:
    return ConnectionOptions(
        host=server.host, port=server.port, user=user, password=password, database=DB
    )


def general_log_lines(own: OwnMariaDB, marker: str) -> list[str]:
    """The general log's statements after the line holding ``marker``, less Quanta's limits."""
    path: Path = own.general_log  # type: ignore[attr-defined]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        text = path.read_text(errors="replace")
        if marker in text:
            # The limits before each statement are checked in test_guard_vectors_mariadb.py.
            return [without_limits(line) for line in text.split(marker, 1)[1].splitlines()]
        time.sleep(0.05)
    pytest.fail(f"{marker!r} never reached the general log")


def mark_general_log(server: MariaDBServer, marker: str) -> None:
    with contextlib.closing(server.connect()) as conn, conn.cursor() as cursor:
        cursor.execute(f"SELECT '{marker}'")


# --------------------------------------------------------------------------- EXPLAIN


def test_full_scan_query_gives_the_full_table_scan_finding(own: OwnMariaDB) -> None:
    result = explain(options(own.server), FULL_SCAN)
    kinds = {(f.kind, f.table) for f in result.findings}
    assert (FindingKind.FULL_TABLE_SCAN, "orders") in kinds
    assert (FindingKind.FILESORT, "orders") in kinds
    assert result.tabular[0]["type"] == "ALL"
    assert result.document is not None
    assert result.document["query_block"]["select_id"] == 1
    assert result.analyze is None
    assert result.notes == ("ANALYZE skipped: no execution target is configured for this instance",)


def test_analyze_when_executing_is_allowed_measures_rows(own: OwnMariaDB) -> None:
    with own.server.read_only():
        result = explain(options(own.server), FULL_SCAN + ";", execute_on=options(own.server))
    assert result.analyze is not None
    table = result.analyze["query_block"]["nested_loop"][0]["read_sorted_file"]["filesort"]["table"]
    assert table["r_rows"] == 20000
    examined = [f for f in result.findings if f.kind == FindingKind.ROWS_EXAMINED]
    assert [f.message for f in examined] == [
        "rows examined far above rows sent: about 20,000 rows read to return 20 "
        "(1,000 per row sent, measured)"
    ]


def test_nothing_is_executed_on_a_target_that_is_not_read_only(own: OwnMariaDB) -> None:
    address = f"{own.server.host}:{own.server.port}"
    refusal = f"the execution target {address} is not read-only: SET GLOBAL read_only=ON there"
    marker = "quanta-marker-writable-target"
    mark_general_log(own.server, marker)
    with pytest.raises(TargetNotReadOnly, match=f"^{re.escape(refusal)}"):
        explain(options(own.server), FULL_SCAN, execute_on=options(own.server))
    with pytest.raises(TargetNotReadOnly, match=f"^{re.escape(refusal)}"):
        profile(options(own.server), FULL_SCAN, runs=1)
    sent = [line.split(" Query\t", 1)[1] for line in general_log_lines(own, marker)
            if " Query\t" in line]  # fmt: skip
    assert [s for s in sent if "FROM orders" in s] == [
        f"EXPLAIN {FULL_SCAN}",
        f"EXPLAIN FORMAT=JSON {FULL_SCAN}",
    ]  # EXPLAIN ran on the monitored server; nothing was executed on the target


def test_dml_is_explained_as_its_select_by_a_read_only_account(own: OwnMariaDB) -> None:
    dml = "UPDATE orders SET amount = 999 WHERE id = 42"
    marker = "quanta-marker-dml"
    mark_general_log(own.server, marker)
    result = explain(options(own.server), dml, execute_on=options(own.server))
    assert (result.kind.value, result.verb) == ("dml", "update")
    assert result.explained == "SELECT * FROM orders WHERE id = 42"
    assert result.tabular[0]["table"] == "orders"
    assert result.tabular[0]["type"] == "const"  # by primary key
    assert result.analyze is None
    assert result.notes[0] == "an UPDATE is explained as its equivalent SELECT"
    with contextlib.closing(own.server.connect(DB)) as conn, conn.cursor() as cursor:
        cursor.execute("SELECT amount FROM orders WHERE id = 42")
        assert cursor.fetchone() == (42,)
    sent = [line for line in general_log_lines(own, marker) if " Query\t" in line]
    statements = [line.split(" Query\t", 1)[1] for line in sent]
    explained = [s for s in statements if s.startswith("EXPLAIN")]
    assert explained == [
        "EXPLAIN SELECT * FROM orders WHERE id = 42",
        "EXPLAIN FORMAT=JSON SELECT * FROM orders WHERE id = 42",
    ]
    assert "ROLLBACK" in statements
    assert "START TRANSACTION READ WRITE" not in statements
    assert not [s for s in statements if re.match(r"(?i)\s*(UPDATE|DELETE|INSERT)\b", s)]


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("SELECT * FROM orders WHERE id = 1; DELETE FROM orders",
         "not explained: the example holds several statements: only one statement can be "
         "explained"),
        ("SELECT * FROM orders WHERE status IN ('new', 'pa",
         "not explained: the example is truncated: a string, name or comment is not closed"),
        ("SELECT * FROM orders WHERE id IN (1, 2, 3", "not explained: the example is "
         "truncated: its parentheses do not balance"),
        ("DROP TABLE orders", "not explained: only SELECT, UPDATE, DELETE, INSERT ... SELECT "
         "and REPLACE ... SELECT are explained; this is a DROP statement"),
        ("SELECT * FROM orders WHERE id = fgd()", "not explained: the example calls FGD(), "
         "which is not a built-in function known to be free of side effects (a stored "
         "function or UDF runs even under EXPLAIN): it is not sent"),
    ],
)  # fmt: skip
def test_refused_examples_are_never_sent(own: OwnMariaDB, sql: str, reason: str) -> None:
    with pytest.raises(StatementRefused) as refused:
        explain(options(own.server), sql, execute_on=options(own.server))
    assert str(refused.value) == reason


def test_the_guard_refuses_writes_on_an_open_session(own: OwnMariaDB) -> None:
    with GuardedConnection(options(own.server, "root", "")) as conn:
        with pytest.raises(StatementRefused, match="statements run only inside"):
            conn.query("SELECT 1")
        with conn.read_only():
            for sql in (
                "DELETE FROM orders",
                "ANALYZE FORMAT=JSON UPDATE orders SET amount = 1",
                "SELECT * FROM orders FOR UPDATE",
                "SET GLOBAL max_connections = 1",
                "SELECT 1; DROP TABLE orders",
            ):
                with pytest.raises(StatementRefused):
                    conn.query(sql)
            with pytest.raises(StatementRefused):
                conn.set_session("SET SESSION sql_log_bin = 0")
            with pytest.raises(StatementRefused, match="only on an execution target"):
                conn.query("ANALYZE FORMAT=JSON SELECT * FROM orders")
        with conn.read_only():  # the server's own guard: a read-only transaction
            rows = conn.query(
                "SHOW VARIABLES WHERE Variable_name IN ('tx_read_only', 'max_statement_time')"
            )
            assert {r["Variable_name"]: r["Value"] for r in rows} == {
                "tx_read_only": "ON",
                "max_statement_time": "10.000000",
            }


def test_the_statement_time_limit_stops_a_long_select(own: OwnMariaDB) -> None:
    settings = MonitoredSettings(statement_timeout=0.2)
    slow = "SELECT COUNT(*) FROM orders a JOIN orders b ON a.amount + b.amount = 7"
    started = time.monotonic()
    with (
        own.server.read_only(),
        pytest.raises(ServerError, match=r"stopped by the 0.2 s statement time limit"),
    ):
        profile(options(own.server), slow, runs=1, settings=settings)
    assert time.monotonic() - started < 5


# --------------------------------------------------------------------------- profiles


def test_profile_states_and_lost_time_sum_to_response_time(own: OwnMariaDB) -> None:
    sql = "SELECT status, COUNT(*) FROM orders WHERE amount > 3 GROUP BY status"
    with own.server.read_only():
        result = profile(options(own.server), sql, runs=3)
    assert len(result.runs) == 3
    assert all(run.rows_sent == 5 for run in result.runs)
    # A run's response time is the client's measurement, or the stage total where the
    # server's stages after the last row (slow log, status) make that longer.
    measured = sum(max(run.response_us, run.stage_us) for run in result.runs)
    assert measured >= sum(run.response_us for run in result.runs)
    assert result.response_us == measured
    assert sum(row.total_us for row in result.rows) == measured
    lost = sum(max(run.response_us - run.stage_us, 0) for run in result.runs)
    assert (result.rows[-1].state, result.rows[-1].total_us) == (LOST_TIME, lost)
    assert sum(row.percent for row in result.rows) == Decimal("100.00")
    states = [row.state for row in result.rows]
    assert states[-1] == LOST_TIME
    assert {"Sending data", "Opening tables"} <= set(states)
    totals = [row.total_us for row in result.rows[:-1]]
    assert totals == sorted(totals, reverse=True)
    sending = next(row for row in result.rows if row.state == "Sending data")
    assert sending.calls >= 3


def test_profiles_of_two_examples_combine(own: OwnMariaDB) -> None:
    with own.server.read_only():
        one = profile(options(own.server), "SELECT * FROM orders WHERE customer_id = 5", runs=2)
        two = profile(options(own.server), "SELECT * FROM orders WHERE customer_id = 9", runs=1)
    combined = combine_profiles([one, two])
    assert len(combined.runs) == 3
    assert combined.response_us == one.response_us + two.response_us
    assert sum(row.percent for row in combined.rows) == Decimal("100.00")


def test_dml_is_never_profiled(own: OwnMariaDB) -> None:
    with pytest.raises(StatementRefused, match=r"^not profiled: a DELETE is never executed"):
        profile(options(own.server), "DELETE FROM orders WHERE id = 1")


def test_profile_without_profiling_needs_stage_events(own: OwnMariaDB) -> None:
    """The MySQL 8 path, forced on a MariaDB whose stage instruments are off."""
    with (
        own.server.read_only(),
        pytest.raises(FeatureUnavailable, match="recorded no stages for the run"),
    ):
        profile(options(own.server), "SELECT 1", runs=1, method=ProfilingMethod.PERFORMANCE_SCHEMA)


def test_profile_from_performance_schema_stages() -> None:
    """The MySQL 8 path (events_stages_history_long) on a MariaDB that records stages."""
    args = [
        "--performance-schema-instrument=stage/%=ON",
        "--performance-schema-consumer-events-stages-current=ON",
        "--performance-schema-consumer-events-stages-history-long=ON",
    ]
    with started_mariadb(args) as stages_server:
        with contextlib.closing(stages_server.server.connect()) as conn, conn.cursor() as cur:
            cur.execute(f"CREATE USER {MONITOR_USER}@'%' IDENTIFIED BY '{MONITOR_PASSWORD}'")
            cur.execute(f"GRANT SELECT, PROCESS ON *.* TO {MONITOR_USER}@'%'")
        # mysql.db, a base table (mysql.user is a view since MariaDB 10.4: checked like any)
        monitored = replace(options(stages_server.server), database="mysql")
        with stages_server.server.read_only():
            result = profile(
                monitored, "SELECT COUNT(*) FROM db", runs=2,
                method=ProfilingMethod.PERFORMANCE_SCHEMA,
            )  # fmt: skip
    assert len(result.runs) == 2
    assert all(run.stages and run.rows_sent == 1 for run in result.runs)
    states = {row.state for row in result.rows}
    assert {"Opening tables", LOST_TIME} <= states
    assert sum(row.percent for row in result.rows) == Decimal("100.00")
    assert sum(row.total_us for row in result.rows) == result.response_us


# --------------------------------------------------------------------------- schema


def show_index(server: MariaDBServer, table: str) -> list[dict[str, Any]]:
    with (
        contextlib.closing(server.connect(DB)) as conn,
        conn.cursor(pymysql.cursors.DictCursor) as cursor,
    ):
        cursor.execute(f"SHOW INDEX FROM {table}")
        return list(cursor.fetchall())


def test_schema_snapshot_is_what_the_advisor_reads(own: OwnMariaDB) -> None:
    snapshot = schema_snapshot(options(own.server), ["orders", "shop.customers", "nope"])
    assert snapshot["missing"] == ["shop.nope"]
    assert snapshot["server"]["flavor"] == "mariadb"
    schema = parse_schema(snapshot)
    orders = schema.tables["shop.orders"]
    assert orders.engine == "innodb"
    assert orders.primary_key == ("id",)
    assert [(i.name, i.columns, i.unique) for i in orders.indexes] == [
        ("idx_customer", ("customer_id",), False),
        ("idx_note", ("note",), False),
        ("idx_status_created", ("status", "created_at"), False),
    ]
    status_created = orders.indexes[2]
    assert [(p.desc, p.sub_part) for p in status_created.parts] == [(False, None), (True, None)]
    assert orders.indexes[1].parts[0].sub_part == 10
    assert orders.columns["note"].type == "text"
    assert orders.columns["amount"].nullable is False
    assert orders.columns["note"].nullable is True

    reported = {
        (row["Key_name"], row["Column_name"]): row["Cardinality"]
        for row in show_index(own.server, "orders")
    }
    raw = snapshot["tables"]["shop.orders"]
    parts = {
        (index["name"], part["name"]): part["cardinality"]
        for index in raw["indexes"]
        for part in index["columns"]
    }
    parts.update({("PRIMARY", p["name"]): p["cardinality"] for p in raw["primary_key_parts"]})
    assert parts == reported
    assert orders.columns["id"].distinct == reported[("PRIMARY", "id")]
    assert orders.columns["customer_id"].distinct == reported[("idx_customer", "customer_id")]
    assert orders.columns["status"].distinct == reported[("idx_status_created", "status")]
    assert orders.columns["note"].distinct is None  # only a prefix is indexed
    assert orders.columns["amount"].distinct is None  # no index starts with it
    assert min(raw["rows"], raw["data_length"], raw["index_length"]) > 0
    assert all(index["visible"] for index in raw["indexes"])

    customers = schema.tables["shop.customers"]
    assert [(i.name, i.unique) for i in customers.indexes] == [
        ("idx_country", False),
        ("uq_email", True),
    ]


# --------------------------------------------------------------------------- connection


def test_wrong_credentials_give_a_clear_error(own: OwnMariaDB) -> None:
    bad = options(own.server, MONITOR_USER, "wrong")
    with pytest.raises(ConnectionFailed) as failed:
        explain(bad, "SELECT 1")
    message = str(failed.value)
    assert message == (
        f"cannot connect to {own.server.host}:{own.server.port} as 'quanta_ro': access denied"
        " - wrong user name or password, or the account may not connect from this host"
        " (error 1045)"
    )
    assert "wrong" not in message.replace("wrong user", "")  # the password is not echoed
    report = test_connection(bad)
    assert (report.connected, report.error) == (False, message)


def test_connection_report_of_a_read_only_account(own: OwnMariaDB) -> None:
    report = test_connection(options(own.server))
    assert report.connected
    assert report.error is None
    assert report.account == "quanta_ro@%"
    assert report.flavor == "mariadb"
    assert report.privileges == ("SELECT ON *.*", "PROCESS ON *.*")
    assert report.excess_privileges == ()
    checks = {c.name: c.ok for c in report.capabilities}
    assert checks == {
        "read_only_session": True,
        "least_privilege": True,
        "default_database": True,
        "explain": True,
        "read_schemas": True,
        "performance_schema_digests": True,
    }
    # Nothing fine by design is reported as missing: DML is explained as its SELECT (no
    # write privilege needed), and profiles never run on the monitored server.
    explain = next(c for c in report.capabilities if c.name == "explain")
    assert "no write privilege is needed" in explain.detail


def test_connection_names_the_grant_missing_for_the_schemas_queries_use(
    own: OwnMariaDB,
) -> None:
    # The writer may read shop only; the instance's queries also ran in crm and `we_ird`.
    schemas = ("shop", "crm", "we_ird")
    report = test_connection(options(own.server, WRITER_USER, WRITER_PASSWORD), schemas=schemas)
    read = next(c for c in report.capabilities if c.name == "read_schemas")
    assert read.ok is False
    assert read.detail == (
        "cannot read crm, we_ird: EXPLAIN, table snapshots and index suggestions fail for "
        f"queries on them. Run: GRANT SELECT ON `crm`.* TO '{WRITER_USER}'@'%'; "
        f"GRANT SELECT ON `we_ird`.* TO '{WRITER_USER}'@'%'"
    )
    report = test_connection(options(own.server), schemas=schemas)  # SELECT ON *.*
    read = next(c for c in report.capabilities if c.name == "read_schemas")
    assert (read.ok, read.detail) == (
        True,
        "reads every schema the instance's queries use (crm, shop, we_ird)",
    )


def test_connection_report_flags_write_privileges(own: OwnMariaDB) -> None:
    report = test_connection(options(own.server, WRITER_USER, WRITER_PASSWORD))
    assert report.excess_privileges == (
        "DELETE ON `shop`.*",
        "INSERT ON `shop`.*",
        "UPDATE ON `shop`.*",
    )
    writes = next(c for c in report.capabilities if c.name == "least_privilege")
    assert writes.ok is False
    assert writes.detail.startswith(
        "the account has privileges Quanta does not need (DELETE ON `shop`.*, INSERT ON "
        "`shop`.*, UPDATE ON `shop`.*): diagnostics refuse to run with it"
    )


def test_unreachable_server_is_a_clear_error() -> None:
    report = test_connection(
        ConnectionOptions(host="127.0.0.1", port=free_port(), user="x"),
        settings=MonitoredSettings(connect_timeout=2),
    )
    assert report.connected is False
    assert report.error is not None
    assert report.error.startswith("cannot connect to 127.0.0.1:")
    assert "no server answers there" in report.error
