"""Nothing runs through a view, no statement outlives its limit, one guard: on a real MariaDB.

Issue 38's review, replayed: an application account with ALL ON shop.* defines functions
and views (SQL SECURITY DEFINER, the default); root defines one that sets a global
variable. Each vector is first shown to work when sent without Quanta (EXPLAIN evaluates a
DETERMINISTIC function in a view's WHERE while optimising, as the view's definer), then sent
through Quanta's real EXPLAIN path (quanta.monitored.plans on a GuardedConnection) as the
least-privilege account and as a broader one (EXECUTE: an INVOKER view's function would
run). Server-side evidence after each: global variables, an audit table the functions
write, IS_USED_LOCK while Quanta's session is still open, a NOCACHE sequence, the
processlist, the general log (no EXPLAIN reached the server), and the slow log
(long_query_time=0): no statement of Quanta's ran longer than its limit.

One module-scoped server and a 1 s statement limit keep it short; the 60-table join and the
spinning function are asserted refused or stopped within the limit.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import re
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from hashlib import md5
from pathlib import Path
from typing import Any

import pymysql
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from quanta.analysis.fingerprint import fingerprint
from quanta.analysis.slowlog import parse_slow_log
from quanta.analysis.sqltext import SESSION_SQL_MODE
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.diagnostics import service as diagnostics
from quanta.ingest import service as ingest
from quanta.ingest.models import IngestBatch
from quanta.monitored import (
    ConnectionOptions,
    GuardedConnection,
    MonitoredSettings,
    ServerError,
    StatementRefused,
    explain,
    explain_on,
)
from quanta.monitored.privileges import account_privileges
from quanta.monitored.target import TargetNotReadOnly, verify_target
from tests.fixtures.servers import MariaDBServer, OwnMariaDB, started_mariadb
from tests.helpers import wait_until

pytestmark = [pytest.mark.services, pytest.mark.timeout(300)]

DB = "shop"
PASSWORD = "pw-guard"
APP = "app"
LEAST, BROAD, NO_SHOW_VIEW, SHOP_ONLY = "quanta", "quanta_broad", "quanta_noview", "quanta_shop"
QUANTA_USERS = frozenset((LEAST, BROAD, NO_SHOW_VIEW, SHOP_ONLY))
# The least-privilege grants too, for what is sent without Quanta (kept apart in the logs).
RAW = "quanta_raw"
# Short, and above the 1 s metadata-lock wait, so that either can be seen to stop a statement.
LIMIT = 2.0
SETTINGS = MonitoredSettings(statement_timeout=LIMIT, read_timeout=5, connect_timeout=3)
PREFIX = "SET STATEMENT max_statement_time=2, lock_wait_timeout=1, optimizer_search_depth=7 FOR "
# The slow log's clock and the limit's: a statement stopped at 1 s is logged at 1.00x s.
TIMER_SLACK = 0.25
LOCK, INVOKER_LOCK = "quanta_guard", "quanta_guard_invoker"
THE_ISSUES_FUNCTION = """CREATE FUNCTION f_state() RETURNS INT DETERMINISTIC
BEGIN
  DECLARE t0 DATETIME DEFAULT SYSDATE();
  SET @n = IFNULL(@n, 0) + 1;
  IF @n <= 2 THEN SET SESSION max_statement_time = 0; RETURN 1; END IF;
  WHILE SYSDATE() < t0 + INTERVAL 300 SECOND DO SET @spin = IFNULL(@spin, 0) + 1; END WHILE;
  RETURN 2;
END"""
AS_ROOT = (
    f"CREATE DATABASE {DB}",
    f"USE {DB}",
    """CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NOT NULL, amount INT NOT NULL,
       KEY idx_customer (customer_id))""",
    "INSERT INTO orders SELECT seq, seq % 100 + 1, seq % 1000 FROM seq_1_to_2000",
    "CREATE TABLE customers (id INT PRIMARY KEY, country CHAR(2) NOT NULL, KEY (country))",
    "INSERT INTO customers SELECT seq, ELT(seq % 3 + 1, 'fr', 'de', 'it') FROM seq_1_to_100",
    "CREATE TABLE noidx (a INT, b INT)",
    "INSERT INTO noidx SELECT seq % 7, seq % 11 FROM seq_1_to_100",
    "CREATE TABLE audit (n INT) ENGINE=InnoDB",
    "CREATE SEQUENCE seq_ids NOCACHE",
    # A DEFAULT that advances a sequence, a virtual column, a CHECK constraint.
    """CREATE TABLE tickets (id INT PRIMARY KEY, n INT DEFAULT (NEXT VALUE FOR seq_ids),
       r DOUBLE AS (RAND()) VIRTUAL, CHECK (n > 0))""",
    "INSERT INTO tickets (id) VALUES (1), (2)",
    # A virtual column whose computation leaves a warning: it shows when it is computed.
    "CREATE TABLE computed (id INT PRIMARY KEY, s VARCHAR(10), v DOUBLE AS (s + 0) VIRTUAL)",
    "INSERT INTO computed (id, s) VALUES (1, 'abc')",
    "CREATE TRIGGER orders_audit BEFORE UPDATE ON orders FOR EACH ROW INSERT INTO audit VALUES (3)",
    "ANALYZE TABLE orders, customers, noidx",
    # root's: a function that changes the server (SUPER), a view of it, one in another schema.
    "CREATE FUNCTION f_global() RETURNS INT DETERMINISTIC "
    "BEGIN SET GLOBAL max_connections = 77; RETURN 1; END",
    "CREATE VIEW v_global AS SELECT * FROM orders WHERE id = f_global()",
    "CREATE DATABASE hr",
    "CREATE TABLE hr.salaries (id INT PRIMARY KEY, amount INT)",
    "CREATE VIEW hr.v_pay AS SELECT id FROM hr.salaries WHERE id = shop.f_global()",
    "CREATE VIEW v_reads_hr AS SELECT * FROM hr.v_pay",
    # Accounts: the application's (which defines the rest), and Quanta's.
    f"CREATE USER {APP}@'%' IDENTIFIED BY '{PASSWORD}'",
    f"GRANT ALL ON {DB}.* TO {APP}@'%'",
    f"CREATE USER {LEAST}@'%' IDENTIFIED BY '{PASSWORD}'",
    f"GRANT SELECT, PROCESS, SHOW VIEW, BINLOG MONITOR, SLAVE MONITOR ON *.* TO {LEAST}@'%'",
    f"CREATE USER {RAW}@'%' IDENTIFIED BY '{PASSWORD}'",
    f"GRANT SELECT, PROCESS, SHOW VIEW, BINLOG MONITOR, SLAVE MONITOR ON *.* TO {RAW}@'%'",
    f"CREATE USER {BROAD}@'%' IDENTIFIED BY '{PASSWORD}'",
    f"GRANT SELECT, PROCESS, SHOW VIEW, EXECUTE ON *.* TO {BROAD}@'%'",
    f"CREATE USER {NO_SHOW_VIEW}@'%' IDENTIFIED BY '{PASSWORD}'",
    f"GRANT SELECT, PROCESS ON *.* TO {NO_SHOW_VIEW}@'%'",
    f"CREATE USER {SHOP_ONLY}@'%' IDENTIFIED BY '{PASSWORD}'",
    f"GRANT SELECT, SHOW VIEW ON {DB}.* TO {SHOP_ONLY}@'%'",
)
AS_APP = (
    THE_ISSUES_FUNCTION,
    "CREATE FUNCTION f_audit() RETURNS INT DETERMINISTIC "
    "BEGIN INSERT INTO audit VALUES (1); RETURN 1; END",
    "CREATE FUNCTION f_nd() RETURNS INT NOT DETERMINISTIC "
    "BEGIN INSERT INTO audit VALUES (2); RETURN 1; END",
    f"CREATE FUNCTION f_lock() RETURNS INT DETERMINISTIC RETURN GET_LOCK('{LOCK}', 0)",
    "CREATE FUNCTION f_sleep() RETURNS INT DETERMINISTIC RETURN SLEEP(1)",
    f"CREATE FUNCTION f_inv() RETURNS INT DETERMINISTIC SQL SECURITY INVOKER "
    f"RETURN GET_LOCK('{INVOKER_LOCK}', 0)",
    "CREATE VIEW v_state AS SELECT * FROM orders WHERE id = f_state()",
    "CREATE VIEW v_audit AS SELECT * FROM orders WHERE id = f_audit()",
    "CREATE VIEW v_nd AS SELECT * FROM orders WHERE id = f_nd()",
    "CREATE VIEW v_lock AS SELECT * FROM orders WHERE id = f_lock()",
    "CREATE VIEW v_sleep AS SELECT * FROM orders WHERE id = f_sleep()",
    "CREATE SQL SECURITY INVOKER VIEW v_inv AS SELECT * FROM orders WHERE id = f_inv()",
    "CREATE ALGORITHM=TEMPTABLE VIEW v_tmp AS SELECT id, amount FROM orders WHERE id = f_audit()",
    "CREATE VIEW v_on_v AS SELECT * FROM v_audit",
    # Benign: plain joins and filters over base tables, and a view on such a view.
    """CREATE VIEW v_join AS SELECT o.id, o.customer_id, o.amount, c.country FROM orders o
       JOIN customers c ON c.id = o.customer_id WHERE c.country = 'fr' AND o.amount > 10""",
    """CREATE VIEW v_on_join AS SELECT customer_id, COUNT(*) AS n, SUM(amount) AS total
       FROM v_join GROUP BY customer_id""",
)
# (example, what the refusal names): each would run code on the server when explained.
VECTORS = [
    ("SELECT * FROM v_state WHERE amount > 3", "the view shop.v_state"),  # the issue's
    ("SELECT * FROM v_global", "the view shop.v_global"),  # SET GLOBAL as root
    ("SELECT * FROM v_audit WHERE amount > 3", "the view shop.v_audit"),  # DETERMINISTIC
    ("SELECT * FROM v_nd", "the view shop.v_nd"),  # NOT DETERMINISTIC
    ("SELECT * FROM v_lock", "the view shop.v_lock"),  # GET_LOCK
    ("SELECT * FROM v_sleep", "the view shop.v_sleep"),  # SLEEP
    ("SELECT * FROM v_inv", "the view shop.v_inv"),  # SQL SECURITY INVOKER
    ("SELECT * FROM v_tmp", "the view shop.v_tmp"),  # ALGORITHM=TEMPTABLE
    ("SELECT o.id FROM orders o JOIN `v_on_v` v ON v.id = o.id", "the view shop.v_audit"),
    ("UPDATE v_audit SET amount = 1 WHERE id = 2", "the view shop.v_audit"),  # DML via a view
    ("SELECT DEFAULT(n) FROM tickets WHERE id = 1", "the DEFAULT of shop.tickets.n"),
]
BENIGN = [
    "SELECT * FROM v_join WHERE customer_id = 9",
    "SELECT * FROM v_on_join WHERE n > 2 ORDER BY total DESC",
    "SELECT * FROM tickets WHERE id = 1",  # a virtual RAND() column: a pure built-in
    "SELECT * FROM computed WHERE id = 1",  # a virtual column computed at EXPLAIN: allowed
    "SELECT n FROM tickets WHERE id = 2",  # its DEFAULT is not evaluated: not called
    "UPDATE orders SET amount = 5 WHERE id = 3",  # a trigger on it: never fires (a SELECT)
]
JOINED = 60
SPUN = "SELECT * FROM v_state WHERE amount > 3"


def join_of(tables: int) -> str:
    """A join of ``tables`` tables whose full plan search takes the optimizer seconds."""
    names = [f"{'orders' if i % 2 else 'noidx'} t{i}" for i in range(tables)]
    conditions = [
        f"t{i}.{'customer_id' if i % 2 else 'a'} = "
        f"t{(i * 7 + 3) % tables}.{'id' if (i * 7 + 3) % tables % 2 else 'b'}"
        for i in range(tables)
    ]
    return f"SELECT * FROM {', '.join(names)} WHERE {' AND '.join(conditions)}"


# --------------------------------------------------------------------------- the server


@dataclass
class Guarded:
    own: OwnMariaDB
    general_log: Path

    @property
    def server(self) -> MariaDBServer:
        return self.own.server


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Guarded]:
    general_log = tmp_path_factory.mktemp("general") / "general.log"
    with started_mariadb(["--general-log=ON", f"--general-log-file={general_log}"]) as own:
        with contextlib.closing(own.server.connect()) as conn, conn.cursor() as cursor:
            for statement in AS_ROOT:
                cursor.execute(statement)
        run(own.server, APP, *AS_APP)
        yield Guarded(own, general_log)
        # For the record (pytest -s): Quanta's longest statements here, as the server timed them.
        longest = [(round(t, 3), q[:70]) for t, q in quanta_statements(own.server, 0)[:3]]
        print(f"\nQuanta's longest statements on the server (slow log): {longest}")


def connect(server: MariaDBServer, user: str, **kwargs: Any) -> pymysql.Connection[Any]:
    if user == "root":
        return server.connect(DB)
    return pymysql.connect(
        host=server.host, port=server.port, user=user, password=PASSWORD, database=DB,
        autocommit=True, **kwargs,
    )  # fmt: skip


def run(server: MariaDBServer, user: str, *statements: str) -> list[tuple[Any, ...]]:
    """The statements as ``user`` on one session; the last one's rows."""
    rows: list[tuple[Any, ...]] = []
    with contextlib.closing(connect(server, user)) as conn, conn.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
            rows = list(cursor.fetchall())
    return rows


def options(server: MariaDBServer, user: str) -> ConnectionOptions:
    return ConnectionOptions(
        host=server.host, port=server.port, user=user, password=PASSWORD, database=DB
    )


@dataclass(frozen=True)
class State:
    """What a statement that ran code could have changed, as root sees it."""

    globals: dict[str, str]
    audit: int
    sequence: int
    locks: tuple[Any, Any]


def state(server: MariaDBServer) -> State:
    return State(
        globals=dict(run(server, "root", "SHOW GLOBAL VARIABLES")),
        audit=int(run(server, "root", "SELECT COUNT(*) FROM audit")[0][0]),
        sequence=int(run(server, "root", "SELECT next_not_cached_value FROM seq_ids")[0][0]),
        locks=run(server, "root", f"SELECT IS_USED_LOCK('{LOCK}'), IS_USED_LOCK('{INVOKER_LOCK}')")[
            0
        ],
    )


def busy_sessions(server: MariaDBServer) -> list[tuple[Any, ...]]:
    """Sessions of Quanta's accounts or of the definer still there (a closed one leaves the
    processlist a moment later), and anything still running as one of them."""
    users = ", ".join(f"'{user}'" for user in (*QUANTA_USERS, RAW, APP))

    def listed() -> list[tuple[Any, ...]]:
        return run(
            server,
            "root",
            "SELECT ID, USER, COMMAND, TIME_MS, INFO FROM information_schema.PROCESSLIST "
            f"WHERE USER IN ({users})",
        )

    with contextlib.suppress(AssertionError):
        wait_until(lambda: not listed(), 3, "Quanta's sessions to end")
    return listed()


def slow_log_offset(server: MariaDBServer) -> int:
    return server.slow_log_path.stat().st_size


def quanta_statements(server: MariaDBServer, offset: int) -> list[tuple[float, str]]:
    """(seconds, statement) of every statement Quanta's accounts ran since ``offset``, as the
    server's slow log (long_query_time=0) measured them, longest first."""
    with server.slow_log_path.open("rb") as log:
        log.seek(offset)
        events = list(parse_slow_log(log))
    timed = [(e.query_time, e.query) for e in events if e.user in QUANTA_USERS]
    return sorted(timed, reverse=True)


@dataclass(frozen=True)
class Logged:
    connection: int
    user: str
    text: str


def general_log(guarded: Guarded, after: str) -> list[Logged]:
    """Statements logged after the line holding the marker ``after``, with their session's
    user (from its Connect line)."""

    def marked() -> str:
        text = guarded.general_log.read_text(errors="replace")
        return text.split(after, 1)[1] if after in text else ""

    text = wait_until(marked, 5, f"{after!r} in the general log")
    users: dict[int, str] = {}
    logged: list[Logged] = []
    for line in text.splitlines():
        match = re.match(r"^(?:\S+\s+\S+)?\s+(\d+) (Connect|Query)\t(.*)$", line)
        if match is None:
            continue
        connection, kind, rest = int(match[1]), match[2], match[3]
        if kind == "Connect":
            users[connection] = rest.split("@", 1)[0]
        else:
            logged.append(Logged(connection, users.get(connection, ""), rest))
    return logged


def mark(server: MariaDBServer) -> str:
    marker = f"quanta-guard-{uuid.uuid4().hex[:8]}"
    run(server, "root", f"SELECT '{marker}'")
    return marker


# What goes without the limits: the driver's charset at connect, then Quanta's sql_mode and
# the version read (which says how limits are written), and the session's limit itself.
BARE = (
    "SET NAMES utf8mb4",
    f"SET SESSION sql_mode = '{SESSION_SQL_MODE}'",
    "SHOW VARIABLES WHERE Variable_name IN ('version', 'version_comment')",
    f"SET SESSION max_statement_time = {LIMIT:g}",
)


def sent_by_quanta(logged: list[Logged]) -> list[str]:
    """Quanta's statements, less the limits written before each; asserts each had them."""
    texts = []
    for entry in logged:
        if entry.user not in QUANTA_USERS or entry.text in BARE:
            continue
        assert entry.text.startswith(PREFIX), entry.text
        texts.append(entry.text.removeprefix(PREFIX))
    return texts


# --------------------------------------------------------------------------- the vectors live


def test_the_vectors_run_code_when_explained_without_quanta(guarded: Guarded) -> None:
    """EXPLAIN alone runs a view's DETERMINISTIC function (twice), as its definer."""
    server = guarded.server
    before = state(server)
    with contextlib.closing(connect(server, RAW)) as conn, conn.cursor() as cursor:
        cursor.execute("EXPLAIN SELECT * FROM v_audit WHERE amount > 3")
        cursor.execute("EXPLAIN SELECT * FROM v_tmp")  # TEMPTABLE: the same
        cursor.execute("EXPLAIN SELECT * FROM v_on_v")  # through a view on a view
        cursor.execute("EXPLAIN SELECT * FROM v_nd")  # NOT DETERMINISTIC: not at EXPLAIN
        # DEFAULT(n) evaluates NEXT VALUE FOR seq_ids at EXPLAIN: as the caller, who needs
        # INSERT on the sequence (the application's account has it; Quanta's has not).
        with pytest.raises(pymysql.err.OperationalError, match="1142"):
            cursor.execute("EXPLAIN SELECT * FROM tickets WHERE id = 1 AND n <> DEFAULT(n)")
        cursor.execute("EXPLAIN SELECT * FROM v_lock")
        assert state(server).locks[0] == conn.thread_id()
        cursor.execute("EXPLAIN SELECT * FROM v_global")
        started = time.monotonic()
        cursor.execute("EXPLAIN SELECT * FROM v_sleep")
        assert time.monotonic() - started >= 2  # SLEEP(1), evaluated twice
    with contextlib.closing(connect(server, APP)) as conn, conn.cursor() as cursor:
        cursor.execute("EXPLAIN SELECT * FROM v_inv")  # INVOKER: with the invoker's EXECUTE
        assert state(server).locks[1] == conn.thread_id()
    run(server, APP, "EXPLAIN SELECT * FROM tickets WHERE id = 1 AND n <> DEFAULT(n)")
    after = state(server)
    assert after.audit - before.audit == 2 * 3  # v_audit, v_tmp, v_on_v: twice each
    assert after.sequence == before.sequence + 1  # DEFAULT(n) ran NEXT VALUE FOR seq_ids
    assert after.globals["max_connections"] == "77"
    run(server, "root", f"SET GLOBAL max_connections = {before.globals['max_connections']}")
    with pytest.raises(pymysql.err.OperationalError, match="1356"):  # no EXECUTE: not run
        run(server, RAW, "EXPLAIN SELECT * FROM v_inv")


def test_the_issues_function_outlives_a_session_limit_and_cannot_be_killed_by_its_account(
    guarded: Guarded,
) -> None:
    """The issue's attack as it was: the function zeroes the session's limit on the first
    EXPLAIN, the second spins past the client's read timeout as the definer (shown with Time
    0 under the definer's name), and the same account may not KILL QUERY it (error 1095:
    so the kill Quanta sends is a second line; the statement's own limit is the first).
    Sent with SET STATEMENT's limit, the spin stops at the limit."""
    server = guarded.server
    with contextlib.closing(connect(server, RAW, read_timeout=2)) as conn:
        spinning = conn.thread_id()
        with conn.cursor() as cursor:
            cursor.execute("SET SESSION max_statement_time = 1")
            cursor.execute("EXPLAIN SELECT * FROM v_state WHERE amount > 3")
            with pytest.raises(pymysql.err.OperationalError, match="timed out"):
                cursor.execute(f"EXPLAIN FORMAT=JSON {SPUN}")
    try:
        # 2 s after it started, past the session's 1 s: still there, as the definer, showing
        # its statement or the function's (whose Time restarts with each of them).
        [(user, info)] = run(
            server, "root",
            f"SELECT USER, INFO FROM information_schema.PROCESSLIST WHERE ID = {spinning}",
        )  # fmt: skip
        assert user == APP
        assert info in ("SET @spin = IFNULL(@spin, 0) + 1", f"EXPLAIN FORMAT=JSON {SPUN}")
        with pytest.raises(pymysql.err.OperationalError, match="1095"):
            run(server, RAW, f"KILL QUERY {spinning}")
    finally:
        with contextlib.suppress(pymysql.err.MySQLError):
            run(server, "root", f"KILL QUERY {spinning}")
    with contextlib.closing(connect(server, RAW)) as conn, conn.cursor() as cursor:
        cursor.execute("EXPLAIN SELECT * FROM v_state WHERE amount > 3")  # zeroes the session
        started = time.monotonic()
        with pytest.raises(pymysql.err.OperationalError, match="max_statement_time"):
            cursor.execute(
                "SET STATEMENT max_statement_time=1 FOR "
                "EXPLAIN FORMAT=JSON SELECT * FROM v_state WHERE amount > 3"
            )
        assert time.monotonic() - started < 1 + TIMER_SLACK
    assert busy_sessions(server) == []


# --------------------------------------------------------------------------- through Quanta


def test_nothing_runs_through_a_view_or_a_default_when_quanta_explains(
    guarded: Guarded,
) -> None:
    """As the least-privilege account and as one with EXECUTE (an INVOKER view's function
    would run for it): each vector refused before any EXPLAIN is sent."""
    server = guarded.server
    before = state(server)
    marker = mark(server)
    offset = slow_log_offset(server)
    refusals = {}
    for user in (LEAST, BROAD):
        with GuardedConnection(options(server, user), SETTINGS) as conn:
            for sql, named in VECTORS:
                started = time.monotonic()
                with pytest.raises(StatementRefused) as refused:
                    explain_on(conn, sql)
                assert time.monotonic() - started < LIMIT
                refusals[sql] = str(refused.value)
                assert refusals[sql].startswith(f"not explained: it reads {named}"), refusals[sql]
                # While Quanta's session is still open: no user lock is held by anyone.
                assert state(server).locks == (None, None), sql
    assert refusals["SELECT * FROM v_state WHERE amount > 3"] == (
        "not explained: it reads the view shop.v_state: its definition calls `f_state`(), a "
        "quoted name that can only be a stored function or a UDF"
    )
    assert refusals["SELECT DEFAULT(n) FROM tickets WHERE id = 1"] == (
        "not explained: it reads the DEFAULT of shop.tickets.n (the statement calls DEFAULT()),"
        " which the server evaluates: its definition uses a sequence (NEXT VALUE FOR, "
        "NEXTVAL...), which changes its state"
    )
    assert state(server) == before  # globals, audit rows, the sequence, locks
    assert busy_sessions(server) == []
    sent = sent_by_quanta(general_log(guarded, marker))
    assert sent, "Quanta's session is in the general log"
    # Only catalog reads and session statements: no EXPLAIN (or anything else) reached it.
    reads = [s for s in sent if s.startswith("SELECT")]
    assert all("FROM information_schema." in s for s in reads), reads
    assert not [s for s in sent if s.startswith(("EXPLAIN", "ANALYZE", "UPDATE"))]
    longest = quanta_statements(server, offset)
    assert longest, "Quanta's statements are in the slow log"
    assert longest[0][0] < LIMIT, longest[:1]


def test_benign_views_and_tables_are_still_explained(guarded: Guarded) -> None:
    server = guarded.server
    before = state(server)
    offset = slow_log_offset(server)
    marker = mark(server)
    with GuardedConnection(options(server, LEAST), SETTINGS) as conn:
        plans = {sql: explain_on(conn, sql) for sql in BENIGN}
        started = time.monotonic()
        joined = explain_on(conn, join_of(JOINED))  # planned greedily beyond 7 tables
        planned_in = time.monotonic() - started
    tables = {sql: {row["table"] for row in result.tabular} for sql, result in plans.items()}
    assert tables["SELECT * FROM v_join WHERE customer_id = 9"] == {"o", "c"}
    assert tables["SELECT * FROM tickets WHERE id = 1"] == {"tickets"}
    assert plans["UPDATE orders SET amount = 5 WHERE id = 3"].explained == (
        "SELECT * FROM orders WHERE id = 3"
    )
    assert all(result.document is not None for result in plans.values())
    assert len(joined.tabular) == JOINED
    assert planned_in < LIMIT
    assert state(server) == before  # the trigger did not fire, the DEFAULT was not evaluated
    sent = sent_by_quanta(general_log(guarded, marker))
    explained = [s for s in sent if s.startswith("EXPLAIN")]
    assert len(explained) == 2 * (len(BENIGN) + 1)  # tabular and JSON, nothing else
    longest = quanta_statements(server, offset)
    assert longest[0][0] < LIMIT, longest[:1]


def test_definitions_quanta_cannot_read_are_refused(guarded: Guarded) -> None:
    server = guarded.server
    with pytest.raises(StatementRefused) as no_show_view:
        explain(options(server, NO_SHOW_VIEW), "SELECT * FROM v_join", settings=SETTINGS)
    assert str(no_show_view.value) == (
        "not explained: it reads the view shop.v_join, whose definition Quanta's account cannot "
        "read (it needs SHOW VIEW): what the view runs cannot be checked"
    )
    # shop's view reads hr's, which this account cannot see (its definition calls f_global).
    with pytest.raises(StatementRefused) as unseen:
        explain(options(server, SHOP_ONLY), "SELECT * FROM v_reads_hr", settings=SETTINGS)
    assert str(unseen.value) == (
        "not explained: a view it reads reads hr.v_pay, which Quanta's account cannot see: "
        "what that is cannot be checked (grant SELECT on it, or on its database)"
    )
    assert state(server).globals["max_connections"] != "77"


def test_what_mariadb_evaluates_without_it_being_named(guarded: Guarded) -> None:
    """EXPLAIN computes a virtual column of the row it reads while optimising (a const
    table's): Quanta checks generated columns. They, DEFAULT and CHECK expressions may call
    no stored function and no built-in with a side effect (the server refuses them: error
    1901, 1970), except a DEFAULT's NEXT VALUE FOR, which EXPLAIN evaluates when the
    statement calls DEFAULT(col) (Quanta then refuses, see above). Triggers never fire under
    EXPLAIN, not even of the UPDATE itself (and Quanta sends only its SELECT)."""
    server = guarded.server
    computed = run(server, APP, "EXPLAIN SELECT * FROM computed WHERE id = 1", "SHOW WARNINGS")
    assert computed == [("Warning", 1292, "Truncated incorrect DOUBLE value: 'abc'")]
    assert run(server, APP, "EXPLAIN SELECT id FROM computed WHERE id = 1", "SHOW WARNINGS") == []
    forbidden = ("f_audit()", "SLEEP(1)", f"GET_LOCK('{LOCK}', 0)", "LAST_INSERT_ID(7)")
    for expression in forbidden:
        for column in (f"AS ({expression}) VIRTUAL", f"DEFAULT ({expression})"):
            with pytest.raises(pymysql.err.OperationalError) as refused:
                run(server, APP, f"CREATE TABLE vcol (id INT, v INT {column})")
            assert refused.value.args[0] == 1901, (column, refused.value)
        with pytest.raises(pymysql.err.OperationalError) as refused:
            run(server, APP, f"CREATE TABLE chk (id INT, CHECK ({expression} > 0))")
        assert refused.value.args[0] in (1901, 1970), (expression, refused.value)
    with pytest.raises(pymysql.err.OperationalError) as refused:
        run(server, APP, "CREATE TABLE vseq (id INT, v INT AS (NEXT VALUE FOR seq_ids) VIRTUAL)")
    assert refused.value.args[0] == 1901
    before = state(server)
    run(server, APP, "EXPLAIN UPDATE orders SET amount = 1 WHERE id = 4")
    run(server, APP, "EXPLAIN UPDATE tickets SET n = 0 WHERE id = 1")  # CHECK (n > 0)
    assert state(server).audit == before.audit
    run(server, APP, "EXPLAIN SELECT * FROM tickets WHERE id = 1 AND n <> DEFAULT(n)")
    assert state(server).sequence == before.sequence + 1  # evaluated while optimising


# --------------------------------------------------------------------------- limits


def test_a_statement_quanta_gives_up_on_is_killed_on_the_server(guarded: Guarded) -> None:
    """The client stops waiting (here: a read timeout shorter than the statement's limit,
    and the 60-table join planned exhaustively): Quanta sends KILL QUERY for its own
    statement from a fresh session of the same account, and says so."""
    server = guarded.server
    patient = MonitoredSettings(
        statement_timeout=30, read_timeout=1, connect_timeout=3, optimizer_search_depth=62
    )
    marker = mark(server)
    offset = slow_log_offset(server)
    started = time.monotonic()
    with pytest.raises(ServerError) as gave_up:
        explain(options(server, LEAST), join_of(JOINED), settings=patient)
    waited = time.monotonic() - started
    assert gave_up.value.abandoned
    message = str(gave_up.value)
    assert "the server did not answer in time, or the connection was lost (error 2013" in message
    killed = re.search(r"Quanta stopped it on the server \(KILL QUERY (\d+)\)$", message)
    assert killed is not None, message
    assert waited < 3
    assert busy_sessions(server) == []  # nothing of Quanta's runs on
    logged = general_log(guarded, marker)
    kills = [e for e in logged if e.text.endswith(f"KILL QUERY {killed[1]}")]
    assert [(e.user, e.connection != int(killed[1])) for e in kills] == [(LEAST, True)]
    [(seconds, statement)] = [t for t in quanta_statements(server, offset) if "EXPLAIN" in t[1]]
    assert 1 <= seconds < 1 + TIMER_SLACK + 0.5, statement[:80]  # killed at the read timeout


def test_a_concurrent_alter_table_waits_no_longer_than_the_limit(guarded: Guarded) -> None:
    """Quanta holds a metadata lock only while one statement runs (a transaction per
    EXPLAIN): an ALTER TABLE that comes while Quanta plans the 60-table join (exhaustively
    here, so that it lasts) waits until the statement's limit stops it, no longer. The other
    way round, Quanta waits for a locked table at most its lock wait limit, and fails."""
    server = guarded.server
    slow = MonitoredSettings(
        statement_timeout=LIMIT, read_timeout=4, connect_timeout=3, optimizer_search_depth=62
    )
    offset = slow_log_offset(server)
    outcome: dict[str, Any] = {}

    def quanta() -> None:
        try:
            explain(options(server, LEAST), join_of(JOINED), settings=slow)
        except ServerError as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=quanta)
    thread.start()
    wait_until(
        lambda: run(
            server, "root",
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST "
            f"WHERE USER = '{LEAST}' AND INFO LIKE '%EXPLAIN SELECT%'",
        )[0][0],
        5, "Quanta's EXPLAIN to be running",
    )  # fmt: skip
    started = time.monotonic()
    run(server, "root", "SET SESSION lock_wait_timeout = 30", "ALTER TABLE orders COMMENT = 'x'")
    altered_in = time.monotonic() - started
    thread.join(10)
    assert altered_in < LIMIT + TIMER_SLACK, altered_in
    assert isinstance(outcome.get("error"), ServerError)
    assert outcome["error"].stopped
    assert str(outcome["error"]).endswith(
        f"stopped by the {LIMIT:g} s statement time limit (error 1969, SQLSTATE 70100)"
    )
    statements = quanta_statements(server, offset)
    assert statements[0][0] < LIMIT + TIMER_SLACK, statements[:1]

    with contextlib.closing(server.connect(DB)) as holder, holder.cursor() as cursor:
        cursor.execute("LOCK TABLES orders WRITE")
        started = time.monotonic()
        with pytest.raises(ServerError) as locked:
            explain(options(server, LEAST), "SELECT * FROM orders WHERE id = 1", settings=SETTINGS)
        waited = time.monotonic() - started
        cursor.execute("UNLOCK TABLES")
    assert locked.value.stopped
    assert not locked.value.abandoned
    assert "(error 1205, SQLSTATE HY000)" in str(locked.value)
    assert waited < SETTINGS.lock_wait_timeout + TIMER_SLACK + 0.5


# --------------------------------------------------------------------------- one guard


def test_execution_target_roles_and_public_grants_are_resolved(guarded: Guarded) -> None:
    """The review's account: READ_ONLY ADMIN through a default role passed as read-only.
    Now a default role, a role the account may SET ROLE to, and MariaDB 10.11's PUBLIC are
    all part of what the account may do."""
    server = guarded.server
    accounts = ("qexec_default", "qexec_settable", "qexec_plain")
    run(
        server, "root",
        "CREATE ROLE ro_admin", "GRANT READ_ONLY ADMIN, SUPER ON *.* TO ro_admin",
        "CREATE ROLE r_outer", "GRANT ro_admin TO r_outer",
        *(f"CREATE USER {a}@'%' IDENTIFIED BY '{PASSWORD}'" for a in accounts),
        *(f"GRANT SELECT, PROCESS ON *.* TO {a}@'%'" for a in accounts),
        "GRANT ro_admin TO qexec_default@'%'", "SET DEFAULT ROLE ro_admin FOR qexec_default@'%'",
        "GRANT r_outer TO qexec_settable@'%'",  # not a default: SET ROLE r_outer enables it
    )  # fmt: skip
    bypass = "SUPER ON *.*, READ_ONLY ADMIN ON *.* lets it write anyway"
    with server.read_only():
        for account in ("qexec_default", "qexec_settable"):
            with pytest.raises(TargetNotReadOnly, match=re.escape(bypass)):
                verify_target(options(server, account), SETTINGS)
        assert verify_target(options(server, "qexec_plain"), SETTINGS).account.privileges == (
            "SELECT ON *.*",
            "PROCESS ON *.*",
        )
        run(server, "root", "GRANT SUPER ON *.* TO PUBLIC")
        try:
            with pytest.raises(TargetNotReadOnly, match=re.escape("SUPER ON *.* lets it write")):
                verify_target(options(server, "qexec_plain"), SETTINGS)
            assert "SUPER ON *.*" in account_privileges(options(server, LEAST), SETTINGS).excess
        finally:
            run(server, "root", "REVOKE SUPER ON *.* FROM PUBLIC")
    # Proof that these are real: the default role's account may write where read_only is on.
    with server.read_only():
        run(server, "qexec_default", "SELECT 1")
        run(server, "root", "GRANT INSERT ON shop.audit TO qexec_default@'%'")
        run(server, "qexec_default", "INSERT INTO audit VALUES (9)")
        run(server, "root", "DELETE FROM audit WHERE n = 9")


# --------------------------------------------------------------------------- stored runs


def query_id(sql: str) -> str:
    return md5(fingerprint(sql).encode()).hexdigest()[:16].upper()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        env="test",
        data_dir=tmp_path / "data",
        database_url=None,
        redis_url=None,
        monitored_statement_timeout_seconds=LIMIT,
    )


def stored_run(
    client: TestClient, factory: sessionmaker[Session], settings: Settings, sql: str
) -> dict[str, Any]:
    """The example through ingest, an EXPLAIN requested and run as the worker does; the run."""
    at = (datetime.now(UTC) - timedelta(minutes=5)).isoformat()
    events = [{"ts": at, "query": sql, "query_time": 0.5, "db": DB, "user": APP}]
    batch_id = uuid.uuid4().hex
    body = json.dumps({"batch_id": batch_id, "instance": "db1", "events": events})
    response = client.post(
        "/api/v1/ingest",
        content=gzip.compress(body.encode()),
        headers={"Content-Encoding": "gzip"},
    )
    assert response.status_code == 202, response.text
    with session_scope(factory) as session:
        pk = session.scalars(select(IngestBatch.id).where(IngestBatch.batch_id == batch_id)).one()
    with session_scope(factory) as session:
        ingest.process_batch(session=session, settings=settings, batch_pk=pk)
    queued = client.post(f"/api/v1/queries/{query_id(sql)}/explain", params={"instance": "db1"})
    assert queued.status_code == 202, queued.text
    with session_scope(factory) as session:
        diagnostics.execute_explain(session=session, settings=settings, run_id=queued.json()["id"])
    shown = client.get(f"/api/v1/queries/{query_id(sql)}/explain", params={"instance": "db1"})
    body: dict[str, Any] = shown.json()
    return body


def test_stored_runs_say_refused_or_failed_never_ok(
    guarded: Guarded, client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    """Through the diagnostics service (what the worker's task calls): the issue's example is
    refused with the view named, a benign view is explained, and an EXPLAIN stopped by a
    limit (here: a table locked by another session) is a failed run."""
    server = guarded.server
    dsn = f"mysql://{LEAST}:{PASSWORD}@{server.host}:{server.port}/{DB}"
    assert client.post("/api/v1/instances", json={"name": "db1", "dsn": dsn}).status_code == 201
    marker = mark(server)
    refused = stored_run(
        client, session_factory, settings, "SELECT * FROM v_state WHERE amount > 3"
    )
    assert (refused["status"], refused["error"]) == (
        "refused",
        "not explained: it reads the view shop.v_state: its definition calls `f_state`(), a "
        "quoted name that can only be a stored function or a UDF",
    )
    benign = stored_run(
        client, session_factory, settings, "SELECT * FROM v_join WHERE amount > 500"
    )
    assert (benign["status"], benign["error"]) == ("ok", None)
    assert {row["table"] for row in benign["tabular"]} == {"o", "c"}
    with contextlib.closing(server.connect(DB)) as holder, holder.cursor() as cursor:
        cursor.execute("LOCK TABLES customers WRITE")
        failed = stored_run(
            client, session_factory, settings, "SELECT * FROM customers WHERE id = 5"
        )
        cursor.execute("UNLOCK TABLES")
    assert failed["status"] == "failed"
    assert failed["error"].endswith(
        "a table it reads is locked by another session (a schema change?): Quanta stopped "
        "waiting at its lock wait limit (error 1205, SQLSTATE HY000)"
    )
    sent = sent_by_quanta(general_log(guarded, marker))
    explained = [s for s in sent if s.startswith("EXPLAIN")]
    assert explained == [
        "EXPLAIN SELECT * FROM v_join WHERE amount > 500",
        "EXPLAIN FORMAT=JSON SELECT * FROM v_join WHERE amount > 500",
        "EXPLAIN SELECT * FROM customers WHERE id = 5",
    ]
    assert busy_sessions(server) == []
