"""The hostile corpus against a real MariaDB: EXPLAIN, ANALYZE and profiles change nothing.

tests/analysis/data/hostile_statements.yaml holds what an attacker can put in a slow log.
Here every one of them is handed to quanta.monitored.explain (EXPLAIN on the monitored
server; with ``execute_on`` also ANALYZE, which executes) and quanta.monitored.profile
(which executes), as a broad account (ALL PRIVILEGES: SUPER, FILE; so that the guard and
not the grants is what is tested) and as the recommended least-privilege account, with
the server's own sql_mode as it comes and with ANSI_QUOTES,NO_BACKSLASH_ESCAPES (Quanta's
session sets its own). The stored functions the corpus calls would change a global
variable, write MyISAM/Aria/InnoDB tables or take a user lock; the server has
secure_file_priv pointing at a directory the test watches. Afterwards: global variables,
audit tables, that directory, user locks, sessions and the sequence are as before, and no
answer or error holds the secret marker. The benign corpus is still explained, DML as its
equivalent SELECT, and changes nothing either.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pymysql
import pytest

from quanta.monitored import (
    ConnectionOptions,
    GuardedConnection,
    MonitoredError,
    ServerError,
    StatementRefused,
    explain,
    profile,
)
from tests.analysis.test_sqlkind import BENIGN, load
from tests.fixtures.servers import MariaDBServer, started_mariadb

pytestmark = [pytest.mark.services, pytest.mark.timeout(600)]

DB = "shop"
SECRET = "QSECRET_7f3a9c"
BROAD, LEAST, PASSWORD = "quanta_broad", "quanta_least", "pw-secret"
LOCK = "quanta_hostile"
# Functions a hostile example calls; each changes the server if it runs.
SET_GLOBAL = "BEGIN SET GLOBAL max_connections = {n}; RETURN 1; END"
FUNCTIONS = {
    "fglobal()": f"NOT DETERMINISTIC {SET_GLOBAL.format(n=77)}",
    "fgd()": f"DETERMINISTIC {SET_GLOBAL.format(n=44)}",
    "faudit()": """DETERMINISTIC BEGIN INSERT INTO shop.audit_myisam VALUES (1);
        INSERT INTO shop.audit_aria VALUES (1); INSERT INTO shop.audit_innodb VALUES (1);
        RETURN 1; END""",
    "flock()": f"DETERMINISTIC RETURN GET_LOCK('{LOCK}', 0)",
    # Names the server resolves to a stored function in some spellings (see sqlfunctions).
    **{
        f"`{name}`(x INT)": f"DETERMINISTIC {SET_GLOBAL.format(n=99)}"
        for name in ("count", "concat", "escape", "columns", "of", "against", "point")
    },
}
SETUP = (
    f"CREATE DATABASE {DB}",
    f"USE {DB}",
    """CREATE TABLE customers (id INT PRIMARY KEY, email VARCHAR(64) NOT NULL,
       country CHAR(3) NOT NULL, name VARCHAR(64), KEY idx_country (country))""",
    """INSERT INTO customers SELECT seq, CONCAT('u', seq, '@x'), CONCAT('c', seq % 50),
       CONCAT('n', seq) FROM seq_1_to_200""",
    """CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NOT NULL,
       status VARCHAR(16) NOT NULL, amount INT NOT NULL, created_at DATETIME NOT NULL,
       note TEXT, KEY idx_customer (customer_id), KEY idx_status_created (status, created_at))""",
    """INSERT INTO orders SELECT seq, seq % 200 + 1,
       ELT(seq % 5 + 1, 'new', 'paid', 'shipped', 'done', 'void'), seq % 1000,
       '2024-01-01' + INTERVAL seq MINUTE, 'x' FROM seq_1_to_2000""",
    "CREATE TABLE secrets (secret VARCHAR(64)) ENGINE=InnoDB",
    f"INSERT INTO secrets VALUES ('{SECRET}')",
    "CREATE TABLE audit_myisam (n INT) ENGINE=MyISAM",
    "CREATE TABLE audit_aria (n INT) ENGINE=Aria",
    "CREATE TABLE audit_innodb (n INT) ENGINE=InnoDB",
    "CREATE SEQUENCE seq",
    *(
        f"CREATE FUNCTION {DB}.{signature} RETURNS INT SQL SECURITY INVOKER {body}"
        for signature, body in FUNCTIONS.items()
    ),
    f"CREATE USER {BROAD}@'%' IDENTIFIED BY '{PASSWORD}'",
    f"GRANT ALL PRIVILEGES ON *.* TO {BROAD}@'%' WITH GRANT OPTION",
    f"CREATE USER {LEAST}@'%' IDENTIFIED BY '{PASSWORD}'",
    # MariaDB 10.5+: REPLICATION CLIENT is BINLOG MONITOR; SHOW SLAVE STATUS needs SLAVE MONITOR.
    f"GRANT SELECT, PROCESS, SHOW VIEW, REPLICATION CLIENT, SLAVE MONITOR ON *.* TO {LEAST}@'%'",
    "ANALYZE TABLE customers, orders",
)
SERVER_SQL_MODES = ("", "ANSI_QUOTES,NO_BACKSLASH_ESCAPES")


@dataclass(frozen=True)
class Hostile:
    server: MariaDBServer
    outdir: Path


@pytest.fixture(scope="module")
def hostile_server() -> Iterator[Hostile]:
    outdir = Path(tempfile.mkdtemp(prefix="quanta-sfp-"))
    outdir.chmod(0o777)  # the server may run as another user
    try:
        with started_mariadb([f"--secure-file-priv={outdir}"]) as own:
            with contextlib.closing(own.server.connect()) as conn, conn.cursor() as cursor:
                for statement in SETUP:
                    cursor.execute(statement)
            yield Hostile(own.server, outdir)
    finally:
        shutil.rmtree(outdir, ignore_errors=True)


def hostile_cases(outdir: Path) -> list[dict[str, Any]]:
    return [
        {**case, "sql": case["sql"].replace("%OUTDIR%", str(outdir))}
        for case in load("hostile_statements.yaml")
    ]


def options(server: MariaDBServer, user: str) -> ConnectionOptions:
    return ConnectionOptions(
        host=server.host, port=server.port, user=user, password=PASSWORD, database=DB
    )


def root_query(server: MariaDBServer, sql: str) -> list[tuple[Any, ...]]:
    with contextlib.closing(server.connect(DB)) as conn, conn.cursor() as cursor:
        cursor.execute(sql)
        return list(cursor.fetchall())


def server_state(hostile: Hostile) -> dict[str, Any]:
    """Everything a hostile statement could have changed, as root sees it."""
    server = hostile.server
    return {
        "globals": dict(root_query(server, "SHOW GLOBAL VARIABLES")),
        "audit": [
            root_query(server, f"SELECT COUNT(*) FROM audit_{engine}")[0][0]
            for engine in ("myisam", "aria", "innodb")
        ],
        "files": sorted(os.listdir(hostile.outdir)),
        "lock": root_query(server, f"SELECT IS_USED_LOCK('{LOCK}')")[0][0],
        "sequence": root_query(server, "SELECT next_not_cached_value FROM seq")[0][0],
        "checksums": root_query(server, "CHECKSUM TABLE orders, customers, secrets"),
    }


def sessions_of(server: MariaDBServer, *users: str) -> int:
    listed = ", ".join(f"'{user}'" for user in users)
    # A closed session leaves the process list a moment later.
    deadline = time.monotonic() + 5
    while True:
        count = root_query(
            server, f"SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER IN ({listed})"
        )[0][0]
        if count == 0 or time.monotonic() > deadline:
            return int(count)
        time.sleep(0.05)


@contextlib.contextmanager
def server_sql_mode(server: MariaDBServer, mode: str) -> Iterator[None]:
    (original,) = root_query(server, "SELECT @@GLOBAL.sql_mode")[0]
    root_query(server, f"SET GLOBAL sql_mode = '{mode}'")
    try:
        yield
    finally:
        root_query(server, f"SET GLOBAL sql_mode = '{original}'")


def outcome(attempt: Callable[[], Any]) -> tuple[bool, str]:
    """(it ran, what it returned or why not), as a viewer would read it."""
    try:
        return True, repr(attempt())
    except (StatementRefused, ServerError) as exc:
        return False, str(exc)


# --------------------------------------------------------------------------- the vectors are live


def test_the_corpus_vectors_work_when_sent_without_quanta(hostile_server: Hostile) -> None:
    """Without the guard, the broad account changes the server: the corpus has teeth."""
    server = hostile_server.server
    raw = replace(server, user=BROAD, password=PASSWORD)
    (original,) = root_query(server, "SELECT @@GLOBAL.max_connections")[0]
    attacks = {
        "EXPLAIN SELECT * FROM orders WHERE id = fgd()": 44,
        "SELECT count (1)": 99,
        "SELECT escape(1)": 99,
        "SELECT 1 --\u00a0 , fglobal() FROM (SELECT 1 AS `\u00a0`) AS t": 77,
        "SELECT 1 --\u0085 , fglobal() FROM (SELECT 1 AS `\u0085`) AS t": 77,
    }
    try:
        for sql, expected in attacks.items():
            with (
                contextlib.closing(raw.connect(DB)) as conn,
                conn.cursor() as cursor,
                contextlib.suppress(pymysql.err.MySQLError),
            ):
                cursor.execute(sql)
            assert root_query(server, "SELECT @@GLOBAL.max_connections")[0][0] == expected, sql
            root_query(server, f"SET GLOBAL max_connections = {original}")
        with contextlib.closing(raw.connect(DB)) as conn, conn.cursor() as cursor:
            try:
                cursor.execute("SELECT EXTRACTVALUE(1, CONCAT(0x7e, (SELECT secret FROM secrets)))")
                cursor.execute("SHOW WARNINGS")
                said = repr(cursor.fetchall())
            except pymysql.err.MySQLError as exc:
                said = str(exc)
            assert SECRET in said  # the error channel shows the data
    finally:
        root_query(server, f"SET GLOBAL max_connections = {original}")


# --------------------------------------------------------------------------- hostile corpus


@pytest.mark.parametrize("mode", SERVER_SQL_MODES)
@pytest.mark.parametrize("user", [BROAD, LEAST])
def test_hostile_corpus_changes_nothing_and_leaks_nothing(
    hostile_server: Hostile, user: str, mode: str
) -> None:
    server = hostile_server.server
    monitored = options(server, user)
    cases = hostile_cases(hostile_server.outdir)
    with server_sql_mode(server, mode):
        before = server_state(hostile_server)
        said: list[str] = []
        for case in cases:
            sql = case["sql"]
            explained, text = outcome(lambda: explain(monitored, sql))  # noqa: B023
            said.append(text)
            said.append(outcome(lambda: explain(monitored, sql, execute_on=monitored))[1])  # noqa: B023
            said.append(outcome(lambda: profile(monitored, sql, runs=1))[1])  # noqa: B023
            if "refused" in case:
                assert not explained, sql
                assert text.startswith("not explained: "), text
            else:  # harmless: explained, and also when sent exactly as written
                assert explained, (sql, text)
                ran, text = outcome(lambda: _as_written(monitored, sql))  # noqa: B023
                said.append(text)
                assert ran or "execute_refused" in case, (sql, text)
        after = server_state(hostile_server)
    assert after == before
    assert after["files"] == []
    assert after["lock"] is None
    assert after["audit"] == [0, 0, 0]
    assert sessions_of(server, user) == 0
    leaked = [text for text in said if SECRET in text]
    assert leaked == []


def _as_written(monitored: ConnectionOptions, sql: str) -> object:
    """EXPLAIN and ANALYZE of the example exactly as written, not of Quanta's rewrite."""
    statement = sql.strip().rstrip(";")
    with GuardedConnection(monitored) as conn, conn.read_only():
        conn.query(f"EXPLAIN {statement}")
    with GuardedConnection(monitored, execution_target=True) as conn, conn.read_only():
        return conn.query(f"ANALYZE FORMAT=JSON {statement}")


def test_analyze_and_streams_are_refused_off_an_execution_target(hostile_server: Hostile) -> None:
    with GuardedConnection(options(hostile_server.server, BROAD)) as conn, conn.read_only():
        with pytest.raises(StatementRefused, match="only on an execution target"):
            conn.query("ANALYZE FORMAT=JSON SELECT * FROM orders")
        with pytest.raises(StatementRefused, match="only on an execution target"):
            conn.stream("SELECT * FROM orders")
        rows = conn.query(
            "SHOW VARIABLES WHERE Variable_name IN ('sql_mode', 'tx_read_only', "
            "'max_statement_time')"
        )
    assert {r["Variable_name"]: r["Value"] for r in rows} == {
        "sql_mode": "NO_ENGINE_SUBSTITUTION",
        "tx_read_only": "ON",
        "max_statement_time": "10.000000",
    }


def test_server_messages_are_not_passed_on(hostile_server: Hostile) -> None:
    """The server's message quotes the statement or the data; Quanta's sentence does not."""
    monitored = options(hostile_server.server, LEAST)
    with pytest.raises(ServerError) as unknown:
        explain(monitored, f"SELECT {SECRET} FROM orders")
    assert SECRET not in str(unknown.value)
    assert str(unknown.value).endswith(
        "a column the statement names does not exist (error 1054, SQLSTATE 42S22)"
    )
    with pytest.raises(ServerError) as denied:
        explain(options(hostile_server.server, LEAST), f"SELECT * FROM {DB}.nope_{SECRET}")
    assert SECRET not in str(denied.value)
    assert "error 1146" in str(denied.value)


# --------------------------------------------------------------------------- benign corpus


@pytest.mark.parametrize("user", [BROAD, LEAST])
def test_benign_corpus_is_explained_and_changes_nothing(hostile_server: Hostile, user: str) -> None:
    monitored = options(hostile_server.server, user)
    before = server_state(hostile_server)
    for case in BENIGN:
        try:
            result = explain(monitored, case["sql"], execute_on=monitored)
        except MonitoredError as exc:
            pytest.fail(f"{case['sql']!r} was not explained: {exc}")
        assert result.explained == case["explain"]
        assert result.tabular, case["sql"]
        if result.kind.value == "select":
            assert result.analyze is not None, case["sql"]
        else:
            assert result.analyze is None
            assert "is explained as its equivalent SELECT" in result.notes[0]
    assert server_state(hostile_server) == before
    assert sessions_of(hostile_server.server, user) == 0
