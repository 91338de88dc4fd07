"""Monitoring connections: only SELECT/SHOW, read-only sessions, time limits, reconnects."""

from __future__ import annotations

import contextlib
import subprocess
import sys

import pytest

from quanta_agent.mysql import (
    RESTART_SLACK,
    Flavor,
    MonitorConnection,
    MonitorError,
    StatementRefused,
    check_read_only_statement,
)
from tests.fixtures.servers import MariaDBServer, free_port, started_mariadb
from tests.helpers import wait_until

services = pytest.mark.services


def monitor(server: MariaDBServer, **kwargs: float) -> MonitorConnection:
    return MonitorConnection.from_dsn(
        f"mysql://{server.user}@{server.host}:{server.port}/", name="db1", **kwargs
    )


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1",
        "  select * from performance_schema.events_statements_summary_by_digest",
        "/* quanta */ SELECT 1",
        "-- note\nSHOW GLOBAL STATUS",
        "SHOW VARIABLES LIKE 'x';",
    ],
)
def test_reads_pass_the_guard(sql: str) -> None:
    check_read_only_statement(sql)


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("DELETE FROM t", "refused to send a DELETE statement"),
        ("/* SELECT */ UPDATE t SET a = 1", "refused to send a UPDATE statement"),
        ("SET GLOBAL slow_query_log = OFF", "refused to send a SET statement"),
        ("FLUSH SLOW LOGS", "refused to send a FLUSH statement"),
        ("TRUNCATE performance_schema.events_statements_summary_by_digest", "TRUNCATE"),
        ("", "refused to send a empty statement"),
        ("SELECT 1; DROP TABLE t", "several statements"),
        ("SELECT * FROM t INTO OUTFILE '/tmp/x'", "INTO OUTFILE"),
        ("select * from t into dumpfile '/tmp/x'", "INTO OUTFILE/DUMPFILE"),
    ],
)
def test_everything_else_is_refused(sql: str, message: str) -> None:
    with pytest.raises(StatementRefused, match=message):
        check_read_only_statement(sql)


@services
def test_session_is_utc_read_only_and_guarded(mariadb_server: MariaDBServer) -> None:
    with monitor(mariadb_server) as conn:
        assert conn.flavor == Flavor.MARIADB
        row = conn.query("SELECT @@session.time_zone AS tz, @@session.tx_read_only AS ro")[0]
        assert (row["tz"], row["ro"]) == ("+00:00", 1)
        with pytest.raises(StatementRefused):
            conn.query("CREATE DATABASE quanta_should_not_exist")
        # Behind the guard, the server itself refuses writes in this session.
        with pytest.raises(Exception, match="READ ONLY transaction"):
            conn._run("CREATE TABLE test.quanta_ro (a INT)", None)
        assert conn.variables("performance_schema", "no_such_variable") == {
            "performance_schema": "ON"
        }


@services
def test_statement_time_limit(mariadb_server: MariaDBServer) -> None:
    with monitor(mariadb_server, statement_timeout=0.3) as conn:
        with pytest.raises(MonitorError, match="max_statement_time exceeded"):
            conn.query("SELECT SLEEP(3)")
        assert conn.query("SELECT 1 AS one") == [{"one": 1}]  # the session survives


def uptime(server: MariaDBServer) -> int:
    """The server's Uptime status, in whole seconds."""
    with contextlib.closing(server.connect()) as conn, conn.cursor() as cursor:
        cursor.execute("SHOW GLOBAL STATUS LIKE 'Uptime'")
        row = cursor.fetchone()
    assert row is not None
    return int(row[1])


@services
def test_reconnects_after_a_restart() -> None:
    with started_mariadb() as own, monitor(own.server) as conn:
        first, _ = conn.server_clock()
        # A boot time is known to a second (Uptime), and Uptime also counts the second or so
        # a server takes to start: restarts closer together than RESTART_SLACK plus that look
        # like one boot, so let this server live a while first.
        lifetime = 2 * RESTART_SLACK.total_seconds() + 1.0
        wait_until(lambda: uptime(own.server) >= lifetime, 30, f"{lifetime:g} s of Uptime")
        own.restart()
        second, _ = conn.server_clock()
        assert conn.connections_opened == 2
        assert second.restarted_since(first)
        assert not second.restarted_since(second)
        row = conn.query("SELECT @@session.tx_read_only AS ro")[0]
        assert row["ro"] == 1  # the new session is prepared like the first


def test_unreachable_server_says_where() -> None:
    port = free_port()
    conn = MonitorConnection.from_dsn(f"mysql://mon@127.0.0.1:{port}/", name="db9")
    with pytest.raises(MonitorError, match=rf"db9: cannot connect to 127.0.0.1:{port} as 'mon'"):
        conn.query("SELECT 1")


def test_collectors_import_none_of_the_server_dependencies() -> None:
    server_only = ("sqlalchemy", "fastapi", "celery", "alembic", "psycopg", "uvicorn")
    probe = (
        "import sys, quanta_agent.perfschema, quanta_agent.stats, quanta_agent.checks; "
        f"print(sorted(m for m in {server_only!r} if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
