"""Capture MariaDB slow logs at every log_slow_verbosity, for the parser's data-driven tests.

Run by hand from the repository root, with MariaDB installed (``mariadbd`` on PATH or in
/usr/sbin)::

    .venv/bin/python -m tests.tools.capture_mariadb_slowlogs

It starts a throw-away MariaDB (``tests/fixtures/servers.py``) and, for each value in
:data:`VERBOSITIES`, runs :data:`SCRIPT` with the slow log switched to a file of its own, then
writes ``tests/analysis/data/slowlogs/mariadb_10_11_verbosity_<name>.log`` and, from the
current parser, its ``.expected.json``. Read every expected file against its log before
committing it: it is the specification, not a snapshot (see the README there).

``tests/integration/test_mariadb_slow_log.py`` runs the same capture on every test run and
checks the parsed events against what :data:`SCRIPT` sent.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pymysql
from pymysql.connections import Connection
from pymysql.cursors import Cursor

from tests.fixtures.servers import MariaDBServer, OwnMariaDB, started_mariadb

DATA = Path(__file__).resolve().parents[1] / "analysis" / "data" / "slowlogs"
FIXTURE_PREFIX = "mariadb_10_11_verbosity_"

# Every value MariaDB 10.11 accepts for log_slow_verbosity, alone, and all of them at once
# ('all' is its own shorthand for that set).
VERBOSITIES = {
    "empty": "",
    "query_plan": "query_plan",
    "innodb": "innodb",
    "explain": "explain",
    "engine": "engine",
    "warnings": "warnings",
    "full": "full",
    "all": "innodb,query_plan,explain,engine,warnings,full",
}

APP_PASSWORD = "app-secret"
# Longest long_query_time there is: the control connection's statements are never logged.
NEVER_SLOW = 31536000
LOG_WAIT = 10.0

# pymysql sends this on connect: it is the first statement of every connection.
DRIVER_SET_NAMES = b"SET NAMES utf8mb4"


@dataclass(frozen=True)
class Client:
    """A connection of the script: who connects, how, and to which database."""

    user: str
    database: str | None
    unix_socket: bool = False  # else TCP to 127.0.0.1

    @property
    def host(self) -> str:
        """The host the slow log names: the socket is localhost, TCP the client's address."""
        return "localhost" if self.unix_socket else "127.0.0.1"


@dataclass(frozen=True)
class Step:
    """One thing a client does: send a statement, or a protocol command.

    Attributes:
        client: Key in :data:`CLIENTS`.
        sql: The statement's bytes; None for a command.
        command: ``ping``, ``init_db <name>`` or ``quit`` (none of which MariaDB logs).
        rows_affected: Rows_affected, as the server counts them.
        rows_sent: Rows_sent, where it is not the number of rows the client received.
        plan: The query-plan flags the server sets (``Full_scan`` ...); with none set it
            writes no query-plan line at all (log_slow_verbosity=query_plan).
        explain: The table of the first EXPLAIN row ("NULL" when no table is used); None
            when the server writes no EXPLAIN (log_slow_verbosity=explain).
        pages: Whether the server writes the InnoDB page counters (innodb, engine).
        warnings: The warnings the statement raises, as the log lists them (warnings).
    """

    client: str
    sql: bytes | None = None
    command: str | None = None
    rows_affected: int = 0
    rows_sent: int | None = None
    plan: tuple[str, ...] = ()
    explain: str | None = None
    pages: bool = False
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Sent:
    """One statement as it was sent and where, i.e. what its slow-log event must say."""

    query: str
    db: str | None
    user: str
    host: str
    rows_sent: int
    step: Step


CLIENTS = {
    "app": Client("app", "shop"),
    "root": Client("root", None, unix_socket=True),
    "crm": Client("app", "crm"),
}

SETUP = (
    "DROP DATABASE IF EXISTS shop",
    "DROP DATABASE IF EXISTS crm",
    "CREATE DATABASE shop",
    "CREATE DATABASE crm",
    "CREATE TABLE crm.customers (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL)",
    "CREATE TABLE crm.notes (id INT AUTO_INCREMENT PRIMARY KEY, body TEXT)",
    "CREATE TABLE shop.orders (id INT PRIMARY KEY, customer_id INT NOT NULL,"
    " status VARCHAR(10) NOT NULL, total DECIMAL(10, 2) NOT NULL, KEY customer_id (customer_id))",
    "INSERT INTO crm.customers VALUES (1, 'Ann'), (2, 'Bob'), (3, 'Cid')",
    "INSERT INTO shop.orders VALUES (1, 1, 'new', 12.50), (2, 2, 'paid', 99.00),"
    " (3, 2, 'new', 5.25), (4, 3, 'void', 150.00), (5, 1, 'paid', 8.00), (6, 3, 'new', 20.00)",
    "CREATE PROCEDURE shop.bump(IN amount INT)"
    " UPDATE shop.orders SET total = total + amount WHERE id = 1",
    "CREATE USER IF NOT EXISTS app@'%' IDENTIFIED BY '" + APP_PASSWORD + "'",
    "GRANT ALL ON *.* TO app@'%'",
)

FULL_SCAN, FULL_JOIN, TMP_TABLE, FILESORT = "Full_scan", "Full_join", "Tmp_table", "Filesort"

SCRIPT = (
    Step(
        "app",
        b"SELECT id, total FROM orders WHERE customer_id = 2 ORDER BY id",
        explain="orders",
        pages=True,
    ),
    Step(
        "app",
        b"SELECT o.id, c.name\n"
        b"FROM orders o\n"
        b"JOIN crm.customers c ON c.id = o.customer_id\n"
        b"\n"
        b"# the customers of big orders\n"
        b"WHERE o.total > 10\n"
        b"ORDER BY o.total DESC",
        plan=(FULL_SCAN, FULL_JOIN, TMP_TABLE, FILESORT),
        explain="c",
        pages=True,
    ),
    Step(
        "app",
        b"SELECT status, COUNT(*) FROM orders GROUP BY status ORDER BY COUNT(*) DESC",
        plan=(FULL_SCAN, TMP_TABLE, FILESORT),
        explain="orders",
        pages=True,
    ),
    # Latin-1 bytes and bytes that are no text at all, in string literals.
    Step("app", b"SELECT LENGTH('caf\xe9') AS n, HEX(_binary'\xff\xfe') AS h", explain="NULL"),
    Step("app", b"SELECT SLEEP(0.2)", explain="NULL"),
    Step("app", b"SELECT * FROM no_such_table"),
    Step(
        "app",
        b"SELECT CAST('12abc' AS INT) AS n",
        explain="NULL",
        warnings=("Warning 1292 Truncated incorrect INTEGER value: '12abc'",),
    ),
    Step(
        "app",
        b"SELECT CAST('1x' AS INT) + CAST('2y' AS INT) AS n",
        explain="NULL",
        warnings=(
            "Warning 1292 Truncated incorrect INTEGER value: '1x'",
            "Warning 1292 Truncated incorrect INTEGER value: '2y'",
        ),
    ),
    Step("app", b"SELECT 'first line\n# not a header' AS s", explain="NULL"),
    Step(
        "app",
        b"SELECT COUNT(*) FROM orders -- how many",
        plan=(FULL_SCAN,),
        explain="orders",
        pages=True,
    ),
    Step("app", command="ping"),
    Step("app", command="init_db crm"),
    Step(
        "app",
        b"UPDATE customers SET name = 'Bob B.' WHERE id = 2",
        rows_affected=1,
        explain="customers",
        pages=True,
    ),
    Step(
        "app",
        b"INSERT INTO customers (id, name) VALUES (10, 'Zo\xc3\xab'), (11, 'O''Brien')",
        rows_affected=2,
        explain="customers",
        pages=True,
    ),
    Step(
        "app",
        b"INSERT INTO notes (body) VALUES ('first'), ('second')",
        rows_affected=2,
        explain="notes",
        pages=True,
    ),
    Step("app", b"SELECT LAST_INSERT_ID()", explain="NULL"),
    # Another user, over the socket, with no default database.
    Step(
        "root",
        b"SELECT COUNT(*) FROM shop.orders WHERE status = 'new'",
        plan=(FULL_SCAN,),
        explain="orders",
        pages=True,
    ),
    Step("root", b"SELECT DATABASE(), CURRENT_USER()", explain="NULL"),
    Step(
        "app",
        b"DELETE FROM customers WHERE id >= 10 LIMIT 5",
        rows_affected=2,
        explain="customers",
        pages=True,
    ),
    Step("app", b"USE shop"),
    Step("app", b"BEGIN"),
    Step(
        "app",
        b"UPDATE orders SET total = total + 1 WHERE id = 1",
        rows_affected=1,
        explain="orders",
        pages=True,
    ),
    Step("app", b"COMMIT"),
    # The procedure's own UPDATE is not logged (log_slow_disabled_statements=sp).
    Step("app", b"CALL bump(1)", rows_affected=1, pages=True),
    Step(
        "app",
        b"CREATE TEMPORARY TABLE tmp_ids AS SELECT id FROM orders WHERE total > 10",
        rows_affected=4,
        plan=(FULL_SCAN,),
        explain="orders",
        pages=True,
    ),
    Step("app", b"DROP TEMPORARY TABLE tmp_ids"),
    Step(
        "app",
        b"DROP TEMPORARY TABLE IF EXISTS no_such_tmp",
        warnings=("Note 1051 Unknown table 'shop.no_such_tmp'",),
    ),
    # An administrative statement: its result row is not counted as sent.
    Step("app", b"ANALYZE TABLE orders", rows_sent=0),
    Step("app", b"SHOW TABLES", plan=(FULL_SCAN, TMP_TABLE), explain="TABLE_NAMES"),
    # A second connection of the same user, to another database.
    Step("crm", b"SELECT name FROM customers WHERE id IN (1, 3)", explain="customers", pages=True),
    Step("root", command="quit"),
    Step("app", command="quit"),
    Step("crm", command="quit"),
)


def decoded(sql: bytes) -> str:
    """Return a statement as the parser must give it: UTF-8, or else Latin-1, as each line is."""
    try:
        return sql.decode("utf-8")
    except UnicodeDecodeError:
        return sql.decode("latin-1")


def connect(server: MariaDBServer, client: Client) -> Connection[Cursor]:
    """Open the connection a client of the script uses."""
    if client.unix_socket:
        return pymysql.connect(
            unix_socket=server.unix_socket,
            user=client.user,
            database=client.database,
            autocommit=True,
            charset="utf8mb4",
        )
    return pymysql.connect(
        host=server.host,
        port=server.port,
        user=client.user,
        password=APP_PASSWORD if client.user == "app" else server.password,
        database=client.database,
        autocommit=True,
        charset="utf8mb4",
    )


@dataclass
class _Session:
    """An open connection of the script and its current database."""

    conn: Connection[Cursor]
    db: str | None


def run_script(server: MariaDBServer) -> list[Sent]:
    """Run :data:`SCRIPT` and return every statement it sent, in the order sent.

    A connection is opened at its client's first step (pymysql's ``SET NAMES`` is then the
    first statement) and stays open until the client's ``quit``.
    """
    sent: list[Sent] = []
    sessions: dict[str, _Session] = {}
    try:
        for step in SCRIPT:
            client = CLIENTS[step.client]
            if step.client not in sessions:
                sessions[step.client] = _Session(connect(server, client), client.database)
                sent.append(
                    Sent(
                        decoded(DRIVER_SET_NAMES),
                        client.database,
                        client.user,
                        client.host,
                        0,
                        Step(step.client, DRIVER_SET_NAMES),
                    )
                )
            session = sessions[step.client]
            if step.sql is None:
                _run_command(session, step)
                if step.command == "quit":
                    del sessions[step.client]
                continue
            with session.conn.cursor() as cursor:
                try:
                    # Bytes go out as they are (typed str only): the script sends non-UTF-8.
                    cursor.execute(step.sql)  # type: ignore[call-overload]
                    rows = len(cursor.fetchall()) if cursor.description else 0
                except pymysql.err.MySQLError:
                    rows = 0  # the slow log records a statement that failed too
            if step.rows_sent is not None:
                rows = step.rows_sent
            if step.sql.upper().startswith(b"USE "):
                # The server logs USE with the database it switched to.
                session.db = step.sql[4:].decode().strip("` ")
            sent.append(Sent(decoded(step.sql), session.db, client.user, client.host, rows, step))
    finally:
        for session in sessions.values():
            session.conn.close()
    return sent


def _run_command(session: _Session, step: Step) -> None:
    """Send a protocol command."""
    command = step.command or ""
    if command == "ping":
        session.conn.ping(reconnect=False)
    elif command.startswith("init_db "):
        session.db = command.split(" ", 1)[1]
        session.conn.select_db(session.db)
    elif command == "quit":
        session.conn.close()
    else:
        raise ValueError(f"unknown command {command!r}")


def prepare(control: Connection[Cursor]) -> None:
    """Create the script's databases and user afresh, with nothing written to the slow log."""
    with control.cursor() as cursor:
        cursor.execute(f"SET SESSION long_query_time = {NEVER_SLOW}")
        for statement in SETUP:
            cursor.execute(statement)


def capture(own: OwnMariaDB, verbosity: str, log_path: Path) -> list[Sent]:
    """Run the script with ``log_slow_verbosity=verbosity`` and its slow log in ``log_path``.

    Returns what the script sent; ``log_path`` then holds exactly those statements' entries.
    """
    server = own.server
    with contextlib.closing(server.connect()) as control:
        prepare(control)
        with control.cursor() as cursor:
            # New connections take the global value; the switch writes a banner to the file.
            cursor.execute("SET GLOBAL log_slow_verbosity = %s", (verbosity,))
            cursor.execute("SET GLOBAL slow_query_log_file = %s", (str(log_path),))
        try:
            sent = run_script(server)
            _wait_for_entries(log_path, len(sent))
        finally:
            with control.cursor() as cursor:
                cursor.execute("SET GLOBAL slow_query_log_file = %s", (str(server.slow_log_path),))
    return sent


def _wait_for_entries(path: Path, count: int) -> None:
    """Wait until the log holds ``count`` entries: the server writes one after it answers."""
    deadline = time.monotonic() + LOG_WAIT
    found = 0
    while time.monotonic() < deadline:
        found = sum(line.startswith(b"# Query_time:") for line in path.read_bytes().splitlines())
        if found >= count:
            return
        time.sleep(0.05)
    raise TimeoutError(f"{path} has {found} entries after {LOG_WAIT}s, expected {count}")


@contextlib.contextmanager
def capturing_server() -> Iterator[OwnMariaDB]:
    """A MariaDB for captures: every statement slow (long_query_time=0), admin ones too."""
    with started_mariadb(["--log-slow-admin-statements=ON"]) as own:
        yield own


def main(argv: list[str]) -> int:
    """Capture one log per verbosity into DATA (or the directory given) with expected files."""
    # Imported here: the integration test imports this module, and needs none of that.
    from tests.analysis.test_slowlog import write_expected

    target = Path(argv[0]) if argv else DATA
    with capturing_server() as own:
        for name, verbosity in VERBOSITIES.items():
            log = target / f"{FIXTURE_PREFIX}{name}.log"
            log.unlink(missing_ok=True)
            sent = capture(own, verbosity, log)
            log.chmod(0o644)  # the server creates it readable by its own group only
            write_expected(log)
            print(f"{log}: {len(sent)} statements")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
