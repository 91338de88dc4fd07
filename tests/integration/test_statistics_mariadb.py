"""The workload by table, index and user end to end: a MariaDB with userstat=ON, `quanta-agent
run` polling its statistics (and tailing its slow log) into `quanta run`, a workload over two
tables of which one index is never read. The Tables figures equal the server's own
TABLE_STATISTICS, the Users figures its USER_STATISTICS (and performance_schema's errors); the
never-read index is found unused once the (test-sized) window is covered, and no longer after
the server restarts; each page is walked in headless Chromium (frontend/e2e/workload.e2e.mjs),
its screenshots kept in test-artifacts/workload/."""

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pymysql
import pytest
import yaml

from tests.fixtures.quanta import VENV_BIN, QuantaServer, quanta_run
from tests.fixtures.servers import OwnMariaDB, service_unavailable, started_mariadb
from tests.helpers import HTTP

pytestmark = [pytest.mark.services, pytest.mark.long(seconds=70)]

REPO = Path(__file__).resolve().parents[2]
FRONTEND = REPO / "frontend"
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = REPO / "test-artifacts" / "workload"
INSTANCE = "shop-db"
MONITOR, MONITOR_PASSWORD = "quanta", "monitor-secret"
APP, APP_PASSWORD = "app", "app-secret"
UNUSED_AFTER_MINUTES = 0.5  # 30 s of unbroken statistics, for the test
TABLE_FIELDS = ("rows_read", "rows_changed", "rows_changed_x_indexes")
# USER_STATISTICS columns (MariaDB's layout) and the Users page's figure each one is.
USER_FIELDS = {
    "total_connections": "connections_total",
    "denied_connections": "connections_denied",
    "access_denied": "access_denied",
    "rows_read": "rows_read",
    "rows_sent": "rows_sent",
    "select_commands": "select_commands",
    "update_commands": "update_commands",
    "other_commands": "other_commands",
    "commit_transactions": "commit_transactions",
}


@dataclass(frozen=True)
class Stack:
    """The monitored server, Quanta with its agent, and the instance's id."""

    mariadb: OwnMariaDB
    server: QuantaServer
    instance_id: int

    def get(self, path: str, **params: Any) -> Any:
        response = self.server.get(f"/api/v1/instances/{self.instance_id}/{path}", **params)
        assert response.status_code == 200, response.text
        return response.json()


def execute(mariadb: OwnMariaDB, *statements: str, user: str = "root", password: str = "") -> None:
    with contextlib.closing(
        pymysql.connect(
            host=mariadb.server.host, port=mariadb.server.port, user=user, password=password,
            database="shop", autocommit=True,
        )
    ) as conn, conn.cursor() as cursor:  # fmt: skip
        for statement in statements:
            cursor.execute(statement)
            cursor.fetchall()


def setup_schema(mariadb: OwnMariaDB) -> None:
    """Two tables; orders.idx_note is never read by the workload."""
    with contextlib.closing(mariadb.server.connect()) as conn, conn.cursor() as cursor:
        for statement in (
            "CREATE DATABASE shop",
            "CREATE TABLE shop.orders (id INT PRIMARY KEY, customer INT, note VARCHAR(20), "
            "KEY idx_customer (customer), KEY idx_note (note))",
            "CREATE TABLE shop.items (sku INT PRIMARY KEY, qty INT, KEY idx_qty (qty))",
            "INSERT INTO shop.orders VALUES "
            + ",".join(f"({i}, {i % 10}, 'n{i}')" for i in range(200)),
            "INSERT INTO shop.items VALUES " + ",".join(f"({i}, {i % 5})" for i in range(50)),
            f"CREATE USER {MONITOR}@'%' IDENTIFIED BY '{MONITOR_PASSWORD}'",
            f"GRANT SELECT, PROCESS, SHOW VIEW ON *.* TO {MONITOR}@'%'",
            f"CREATE USER {APP}@'%' IDENTIFIED BY '{APP_PASSWORD}'",
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON shop.* TO {APP}@'%'",
        ):
            cursor.execute(statement)


def workload(mariadb: OwnMariaDB) -> None:
    """The application's traffic: lookups by customer (idx_customer) and by key, a scan of
    items by quantity (idx_qty), a few writes, a statement it may not run and one that fails."""
    statements = [
        *(
            f"SELECT * FROM orders FORCE INDEX (idx_customer) WHERE customer = {c}"
            for c in range(5)
        ),
        *(f"SELECT note FROM orders WHERE id = {i}" for i in range(20)),
        *(f"SELECT sku FROM items FORCE INDEX (idx_qty) WHERE qty = {q}" for q in range(3)),
        "UPDATE orders SET customer = customer + 1 WHERE id < 5",
        "INSERT INTO items VALUES (1000, 1), (1001, 2)",
        "DELETE FROM items WHERE sku = 1001",
    ]
    execute(mariadb, *statements, user=APP, password=APP_PASSWORD)
    for refused in ("SELECT * FROM mysql.user", "SELECT * FROM no_such_table"):
        with contextlib.suppress(pymysql.err.MySQLError):
            execute(mariadb, refused, user=APP, password=APP_PASSWORD)
    with contextlib.suppress(pymysql.err.MySQLError):
        execute(mariadb, "SELECT 1", user=APP, password="wrong")


def server_tables(mariadb: OwnMariaDB) -> dict[str, dict[str, int]]:
    """TABLE_STATISTICS of the shop schema, as the server counts."""
    with contextlib.closing(mariadb.server.connect()) as conn, conn.cursor() as cursor:
        cursor.execute(
            "SELECT TABLE_NAME, ROWS_READ, ROWS_CHANGED, ROWS_CHANGED_X_INDEXES "
            "FROM information_schema.TABLE_STATISTICS WHERE TABLE_SCHEMA = 'shop'"
        )
        return {f"shop.{row[0]}": dict(zip(TABLE_FIELDS, row[1:], strict=True)) for row in cursor}


def server_user(mariadb: OwnMariaDB) -> dict[str, float]:
    """The app account's USER_STATISTICS row, and its statement errors (performance_schema)."""
    with contextlib.closing(mariadb.server.connect()) as conn, conn.cursor() as cursor:
        cursor.execute(
            f"SELECT {', '.join(USER_FIELDS)}, ROWS_INSERTED + ROWS_UPDATED + ROWS_DELETED, "
            "CPU_TIME, BUSY_TIME FROM information_schema.USER_STATISTICS WHERE USER = %s",
            (APP,),
        )
        row = cursor.fetchone() or (0,) * (len(USER_FIELDS) + 3)
        cursor.execute(
            "SELECT SUM(SUM_ERRORS) FROM "
            "performance_schema.events_statements_summary_by_user_by_event_name WHERE USER = %s",
            (APP,),
        )
        errors = (cursor.fetchone() or (0,))[0] or 0
    names = [*USER_FIELDS.values(), "rows_changed", "cpu_time_s", "busy_time_s"]
    return {**dict(zip(names, row, strict=True)), "errors": int(errors)}


def minus(after: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    return {name: value - before.get(name, 0) for name, value in after.items()}


@contextlib.contextmanager
def running_agent(base: Path, server: QuantaServer, mariadb: OwnMariaDB) -> Iterator[Path]:
    """`quanta-agent run` polling the statistics every second and tailing the slow log."""
    dsn = f"mysql://{MONITOR}:{MONITOR_PASSWORD}@{mariadb.server.host}:{mariadb.server.port}/"
    config = {
        "server": server.url,
        "token": server.token,
        "spool_dir": str(base / "spool"),
        "batch": {"max_events": 500, "max_age": 1.0},
        "instances": {
            INSTANCE: {
                "dsn": dsn,
                "sources": ["slowlog", "stats"],
                "poll_interval": 1,
                "slowlog": {"path": str(mariadb.server.slow_log_path), "from_start": False},
            }
        },
    }
    path = base / "agent.yaml"
    path.write_text(yaml.safe_dump(config))
    log_path = base / "agent.log"
    with log_path.open("w") as log:
        agent = subprocess.Popen(
            [str(VENV_BIN / "quanta-agent"), "run", "--config", str(path)],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            yield log_path
        finally:
            agent.terminate()
            try:
                agent.wait(30)
            except subprocess.TimeoutExpired:
                agent.kill()


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """MariaDB (userstat=ON) with the schema, Quanta with the instance and its DSN, the agent
    polling, and the agent's first interval received (its baseline is taken)."""
    base = tmp_path_factory.mktemp("statistics")
    settings = {
        "QUANTA_INDEX_UNUSED_MIN_MINUTES": str(UNUSED_AFTER_MINUTES),
        # Beat's hot-query pass EXPLAINs on its own; not what this test looks at.
        "QUANTA_ADVICE_HOT_CHECK_SECONDS": "3600",
    }
    with (
        started_mariadb(["--userstat=ON"]) as mariadb,
        quanta_run(base / "data", settings=settings) as server,
    ):
        setup_schema(mariadb)
        dsn = f"mysql://{MONITOR}:{MONITOR_PASSWORD}@{mariadb.server.host}:{mariadb.server.port}/"
        created = HTTP.post(
            f"{server.url}/api/v1/instances",
            json={"name": INSTANCE, "dsn": dsn},
            headers={"Authorization": f"Bearer {server.token}"},
            timeout=30,
        )
        assert created.status_code == 201, created.text
        found = Stack(mariadb, server, created.json()["id"])
        with running_agent(base, server, mariadb):
            server.wait_for(
                lambda: found.get("tables")["coverage"], what="the agent's first interval"
            )
            yield found


def test_workload_pages_match_the_server_s_counters(stack: Stack) -> None:
    if not CHROMIUM.exists():
        service_unavailable("Chromium is missing: apt-get install chromium")
    if not (FRONTEND / "dist" / "index.html").exists() or not shutil.which("node"):
        pytest.fail("The UI is not built: run `make install` (Node 20+ required).")
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    tables_before, user_before = server_tables(stack.mariadb), server_user(stack.mariadb)
    workload(stack.mariadb)

    # Tables: what the page shows is what TABLE_STATISTICS counted since the agent began.
    def tables_agree() -> dict[str, dict[str, Any]] | None:
        expected = minus_tables(server_tables(stack.mariadb), tables_before)
        shown = {t["table"]: {f: t[f] for f in TABLE_FIELDS} for t in stack.get("tables")["tables"]}
        return shown if shown == expected and len(shown) == 2 else None

    shown = stack.server.wait_for(tables_agree, what="the Tables figures to equal the server's")
    print("tables (API == TABLE_STATISTICS since the agent's baseline):", json.dumps(shown))
    assert shown["shop.orders"]["rows_changed"] == 5  # the UPDATE of ids 0..4
    assert shown["shop.items"]["rows_changed"] == 3  # two inserted, one deleted

    # Users: the app account's figures are USER_STATISTICS' (and performance_schema's errors).
    def user_agrees() -> dict[str, Any] | None:
        expected = minus(server_user(stack.mariadb), user_before)
        (row,) = [u for u in stack.get("users")["users"] if u["user"] == APP] or [None]
        if row is None or not row["calls"]:  # its query classes, from the slow log, too
            return None
        counted = {name: row[name] for name in expected if not name.endswith("_s")}
        if counted != {k: v for k, v in expected.items() if not k.endswith("_s")}:
            return None
        return {"api": row, "server": expected}

    users = stack.server.wait_for(user_agrees, what="the Users figures to equal the server's")
    print("users (API vs USER_STATISTICS):", json.dumps(users, default=str))
    api, server = users["api"], users["server"]
    for seconds in ("cpu_time_s", "busy_time_s"):  # summed from deltas rounded to 1 us
        assert api[seconds] == pytest.approx(server[seconds], abs=1e-3)
    # Both refused statements failed; reading mysql.user was denied (the server also counts
    # the failed sign-in there): the figures are the server's, whatever it counts.
    assert (api["errors"], api["access_denied"]) == (server["errors"], server["access_denied"])
    assert api["errors"] >= 2
    assert api["access_denied"] >= 1
    assert api["rows_changed"] == 8  # 5 updated + 2 inserted + 1 deleted
    accounts = {u["user"]: u["own"] for u in stack.get("users")["users"]}
    assert (accounts[APP], accounts[MONITOR]) == (False, True)  # Quanta's own is marked

    # Index review: the never-read index is unused once the window is covered.
    def unused_found() -> list[dict[str, Any]] | None:
        findings = stack.get("index-review")["findings"]
        return findings if any(f["index"] == "idx_note" for f in findings) else None

    findings = stack.server.wait_for(unused_found, timeout=120, what="idx_note found unused")
    assert [(f["table"], f["index"], f["kind"]) for f in findings] == [
        ("shop.orders", "idx_note", "unused")
    ]
    expect = {
        "instance": INSTANCE,
        "instance_id": stack.instance_id,
        "table": "shop.orders",
        "rows_read": shown["shop.orders"]["rows_read"],
        "unused": "idx_note",
        "used": "idx_customer",
        "user": APP,
        "select_commands": server["select_commands"],
    }
    browse(stack, expect, "window")

    # The server restarts: the counters start again, and so does the window.
    stack.mariadb.restart()

    def restarted() -> dict[str, Any] | None:
        review = stack.get("index-review")
        coverage = review["coverage"] or {}
        return review if coverage.get("broken_at") else None

    review = stack.server.wait_for(restarted, timeout=60, what="the window to restart")
    assert review["coverage"]["break_reason"] == "the server restarted, which reset its counters"
    assert [f for f in review["findings"] if f["kind"] == "unused"] == []
    assert [t["unused_checked"] for t in review["tables"] if t["table"] == "shop.orders"] == [False]
    browse(stack, expect, "restarted")
    for name in (
        "workload-tables", "workload-table", "workload-query-tables-tab", "workload-index-review",
        "workload-users", "workload-user-queries", "workload-index-review-restarted",
    ):  # fmt: skip
        assert (ARTIFACTS / f"{name}.png").exists(), name


def minus_tables(
    after: dict[str, dict[str, int]], before: dict[str, dict[str, int]]
) -> dict[str, dict[str, int]]:
    return {name: minus(row, before.get(name, {})) for name, row in after.items()}


def browse(stack: Stack, expect: dict[str, Any], phase: str) -> None:
    """The pages in headless Chromium (frontend/e2e/workload.e2e.mjs), one phase of them."""
    browser = subprocess.run(
        ["npm", "run", "--silent", "e2e:workload"],
        cwd=FRONTEND,
        env={
            **os.environ,
            "QUANTA_E2E_URL": stack.server.url,
            "QUANTA_E2E_TOKEN": stack.server.token,
            "QUANTA_E2E_EXPECT": json.dumps(expect),
            "QUANTA_E2E_PHASE": phase,
            "QUANTA_E2E_ARTIFACTS": str(ARTIFACTS),
        },
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"{phase}.tap").write_text(browser.stdout)
    assert browser.returncode == 0, (
        f"browser test failed:\n{browser.stdout}\n{browser.stderr}\n"
        f"server output:\n{stack.server.log_tail(80)}"
    )
