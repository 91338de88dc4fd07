"""The hostile corpus against a real MariaDB: EXPLAIN, ANALYZE and profiles change nothing.

tests/analysis/data/hostile_statements.yaml holds what an attacker can put in a slow log.
Here every one of them is handed to quanta.monitored.explain (EXPLAIN on the monitored
server, read-write as a primary is) as a broad account (ALL PRIVILEGES: SUPER, FILE; so
that the guard and not the grants is what is tested) and as the recommended
least-privilege account, with the server's own sql_mode as it comes and with
ANSI_QUOTES,NO_BACKSLASH_ESCAPES (Quanta's session sets its own). Then, with the server
made read-only as an execution target must be, to what executes: explain with
``execute_on`` (ANALYZE), quanta.monitored.profile and ANALYZE of the text as written on a
TargetConnection. The least-privilege account executes there; the broad account's
privileges bypass read_only, so the target verification refuses each of its sessions.
The stored functions the corpus calls would change a global variable, write
MyISAM/Aria/InnoDB tables or take a user lock; the server has
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

from quanta.analysis.sqlkind import classify_statement
from quanta.monitored import (
    ConnectionOptions,
    ExplainResult,
    GuardedConnection,
    MonitoredError,
    ServerError,
    StatementRefused,
    explain,
    profile,
)
from quanta.monitored.target import TargetConnection, TargetNotReadOnly
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
        # EXPLAIN on the monitored server, read-write as a primary is: the guard alone.
        for case in cases:
            sql = case["sql"]
            explained, text = outcome(lambda: explain(monitored, sql))  # noqa: B023
            said.append(text)
            if "refused" in case:
                assert not explained, sql
                assert text.startswith("not explained: "), text
            else:  # harmless: explained, and also when sent exactly as written
                assert explained, (sql, text)
                ran, text = outcome(lambda: _explained_as_written(monitored, sql))  # noqa: B023
                said.append(text)
                assert ran or "execute_refused" in case, (sql, text)
        # ANALYZE and profiles execute: only on a target verified read-only for the account.
        with server.read_only():
            for case in cases:
                found = _executions(monitored, case)
                said.extend(text for _, text in found.values())
                assert {what: how for what, (how, _) in found.items()} == _expected(user, case), (
                    case["sql"],
                    found,
                )
                refusals = {text for how, text in found.values() if how == "target refused"}
                assert refusals <= {_bypass_refusal(server)}, refusals
        after = server_state(hostile_server)
    assert after == before
    assert after["files"] == []
    assert after["lock"] is None
    assert after["audit"] == [0, 0, 0]
    assert sessions_of(server, user) == 0
    leaked = [text for text in said if SECRET in text]
    assert leaked == []


def _bypass_refusal(server: MariaDBServer) -> str:
    return (
        f"the execution target {server.host}:{server.port} is read-only, but not for Quanta's "
        "account there: ALL PRIVILEGES ON *.* lets it write anyway. Use an account without "
        "it, or make the server read-only for everyone (MySQL: SET GLOBAL super_read_only=ON; "
        "MariaDB 11.x: SET GLOBAL read_only=NO_LOCK_NO_ADMIN)"
    )


def _executions(monitored: ConnectionOptions, case: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Each way an example gets executed, and what became of it (see :func:`_executed`)."""
    sql = case["sql"]
    attempts: dict[str, Callable[[], Any]] = {
        "analyze": lambda: explain(monitored, sql, execute_on=monitored),
        "profile": lambda: profile(monitored, sql, runs=1),
    }
    if "refused" not in case:
        attempts["analyze as written"] = lambda: _analyzed_as_written(monitored, sql)
    return {what: _executed(attempt) for what, attempt in attempts.items()}


def _executed(attempt: Callable[[], Any]) -> tuple[str, str]:
    """``executed``, ``not executed`` (EXPLAIN only: ANALYZE skipped), ``refused`` (by the
    classifier or the guard, before anything is sent), ``target refused`` (the execution
    target is not read-only for the account) or ``failed`` (the server refused it), with
    the answer or the message, as a viewer would read it."""
    try:
        result = attempt()
    except TargetNotReadOnly as exc:
        return "target refused", str(exc)
    except StatementRefused as exc:
        return "refused", str(exc)
    except ServerError as exc:
        return "failed", str(exc)
    if isinstance(result, ExplainResult) and any(
        note.startswith("ANALYZE skipped") for note in result.notes
    ):
        return "not executed", repr(result)
    return "executed", repr(result)


def _expected(user: str, case: dict[str, Any]) -> dict[str, str]:
    if "refused" in case:  # the classifier refuses it before any session opens
        return {"analyze": "refused", "profile": "refused"}
    if "execute_refused" in case:  # explained as its rewrite, never executed
        return {
            "analyze": "not executed",
            "profile": "refused",
            # ALL PRIVILEGES bypasses read_only: the target is refused as it opens.
            # (the guard refuses the locking clause as written).
            "analyze as written": "target refused" if user == BROAD else "refused",
        }
    # Harmless and executable: on the verified target for the least-privilege account;
    # never for the broad one, which read_only does not stop.
    how = "target refused" if user == BROAD else "executed"
    return {"analyze": how, "profile": how, "analyze as written": how}


def _explained_as_written(monitored: ConnectionOptions, sql: str) -> object:
    """EXPLAIN of the example exactly as written, not of Quanta's rewrite."""
    statement = sql.strip().rstrip(";")
    with GuardedConnection(monitored) as conn, conn.read_only():
        return conn.query(f"EXPLAIN {statement}")


def _analyzed_as_written(target: ConnectionOptions, sql: str) -> object:
    """ANALYZE of the example exactly as written, on a session verified read-only (the
    only kind Quanta executes on)."""
    statement = sql.strip().rstrip(";")
    with TargetConnection(target) as conn, conn.read_only():
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
    server = hostile_server.server
    monitored = options(server, user)
    before = server_state(hostile_server)
    for case in BENIGN:  # EXPLAIN on the monitored server, read-write as a primary is
        try:
            result = explain(monitored, case["sql"])
        except MonitoredError as exc:
            pytest.fail(f"{case['sql']!r} was not explained: {exc}")
        assert result.explained == case["explain"]
        assert result.tabular, case["sql"]
        assert result.analyze is None
        if result.kind.value == "dml":
            assert "is explained as its equivalent SELECT" in result.notes[0]
    with server.read_only():  # ANALYZE on the same server as a read-only execution target
        for case in BENIGN:
            found = _executed(lambda: explain(monitored, case["sql"], execute_on=monitored))  # noqa: B023
            if classify_statement(case["sql"]).executable:
                expected = "target refused" if user == BROAD else "executed"
            else:  # DML: explained as its SELECT, never executed
                expected = "not executed"
            assert found[0] == expected, (case["sql"], found)
            if found[0] == "target refused":
                assert found[1] == _bypass_refusal(server)
    assert server_state(hostile_server) == before
    assert sessions_of(server, user) == 0
