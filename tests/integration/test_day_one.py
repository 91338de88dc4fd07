"""Day one without a manual, through real processes: a MariaDB logging every statement runs a
workload whose heaviest query lacks an index; `quanta-agent run` tails its slow log into
`quanta run` (API, worker, beat). The only set-up calls are the instance's DSN and a chat
channel on a local receiver. Nobody asks for advice: the suggestion must reach the receiver by
itself within 5 minutes of the workload's start (the time taken is printed)."""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.backend.test_notify_service import Receiver, receiver  # noqa: F401
from tests.fixtures.quanta import VENV_BIN, QuantaServer, quanta_run
from tests.fixtures.servers import MariaDBServer, started_mariadb
from tests.helpers import HTTP

pytestmark = [pytest.mark.services, pytest.mark.long(seconds=75), pytest.mark.timeout(600)]

DB = "shop"
MONITOR_USER, MONITOR_PASSWORD = "quanta_mon", "mon-secret"
SETUP = (
    f"CREATE DATABASE {DB}",
    f"USE {DB}",
    f"""CREATE TABLE {DB}.orders (id INT PRIMARY KEY, customer_id INT NOT NULL,
        phone VARCHAR(20) NOT NULL, amount INT NOT NULL, INDEX idx_customer (customer_id))""",
    f"""INSERT INTO {DB}.orders SELECT seq, seq % 1000 + 1, CONCAT('555-', LPAD(seq % 9000, 4,
        '0')), (seq * 37) % 1000 FROM seq_1_to_30000""",
    f"ANALYZE TABLE {DB}.orders",
    # The least the README asks for: read the application's tables (EXPLAIN, snapshots).
    f"CREATE USER {MONITOR_USER}@'%' IDENTIFIED BY '{MONITOR_PASSWORD}'",
    f"GRANT SELECT ON {DB}.* TO {MONITOR_USER}@'%'",
    # The agent's performance_schema polls with the same account.
    f"GRANT PROCESS ON *.* TO {MONITOR_USER}@'%'",
    f"GRANT SELECT ON performance_schema.* TO {MONITOR_USER}@'%'",
)
DEADLINE = 300.0  # the promise: a suggestion in chat within 5 minutes of the workload


class Workload:
    """A shop's traffic from a thread: a phone lookup with no index (the heavy class) and
    cheap primary-key reads, until stopped."""

    def __init__(self, server: MariaDBServer) -> None:
        self.server = server
        self.executed = 0
        self.started_at = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with contextlib.closing(self.server.connect(DB)) as conn, conn.cursor() as cursor:
            i = 0
            while not self._stop.is_set():
                cursor.execute(f"SELECT * FROM orders WHERE phone = '555-{i % 9000:04d}'")
                cursor.fetchall()
                cursor.execute(f"SELECT amount FROM orders WHERE id = {i % 30000 + 1}")
                cursor.fetchall()
                self.executed += 2
                i += 1
                time.sleep(0.02)

    def __enter__(self) -> Workload:
        self.started_at = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)


@contextlib.contextmanager
def running_agent(base: Path, server: QuantaServer, mariadb: MariaDBServer) -> Iterator[None]:
    """`quanta-agent run` tailing the slow log and polling performance_schema (it polls at
    start-up, so its first batch arrives before the slow log's)."""
    dsn = f"mysql://{MONITOR_USER}:{MONITOR_PASSWORD}@{mariadb.host}:{mariadb.port}/"
    config = {
        "server": server.url,
        "token": server.token,
        "spool_dir": str(base / "spool"),
        "batch": {"max_events": 500, "max_age": 2.0},
        "instances": {
            DB: {
                "dsn": dsn,
                "sources": ["slowlog", "perfschema"],
                "poll_interval": 10,
                "slowlog": {"path": str(mariadb.slow_log_path), "from_start": False},
            }
        },
    }
    path = base / "agent.yaml"
    path.write_text(yaml.safe_dump(config))
    log = (base / "agent.log").open("w")
    agent = subprocess.Popen(
        [str(VENV_BIN / "quanta-agent"), "run", "--config", str(path)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield
    finally:
        agent.terminate()
        try:
            agent.wait(30)
        except subprocess.TimeoutExpired:
            agent.kill()
        log.close()


def post(server: QuantaServer, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = HTTP.post(
        server.url + path,
        json=body,
        headers={"Authorization": f"Bearer {server.token}"},
        timeout=30,
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_suggestion_reaches_chat_by_itself(tmp_path: Path, receiver: Receiver) -> None:  # noqa: F811
    with (
        started_mariadb() as own,
        quanta_run(tmp_path / "data", settings={"QUANTA_ALLOW_PRIVATE_WEBHOOKS": "true"}) as server,
    ):
        mariadb = own.server
        with contextlib.closing(mariadb.connect()) as conn, conn.cursor() as cursor:
            for statement in SETUP:
                cursor.execute(statement)
        # The two set-up calls a new user makes.
        dsn = f"mysql://{MONITOR_USER}:{MONITOR_PASSWORD}@{mariadb.host}:{mariadb.port}/"
        post(server, "/api/v1/instances", {"name": DB, "dsn": dsn})
        post(
            server,
            "/api/v1/channels",
            {"name": "ops", "type": "webhook", "url": receiver.url(), "min_load_share": 0.2},
        )
        with running_agent(tmp_path, server, mariadb):
            with Workload(mariadb) as load:

                def suggested() -> Any:
                    return next((b for b in receiver.bodies() if "phone" in str(b)), None)

                body = server.wait_for(suggested, timeout=DEADLINE, what="a suggestion in chat")
                elapsed = time.monotonic() - load.started_at
            print(
                f"\nworkload start to first chat message: {elapsed:.1f} s ({load.executed} stmts)"
            )
            assert elapsed < DEADLINE
            text = str(body)
            assert "orders" in text
            assert "phone" in text
            # Nobody asked: the EXPLAIN run on the monitored server is audited as beat's.
            entries = server.get("/api/v1/audit", limit=100).json()
            explains = [e for e in entries if e["action"] == "run explain"]
            assert explains, entries
            assert {e["actor"] for e in explains} == {"beat"}

            # Both sources report: the slow log counts (prepared statements, percentiles).
            [instance] = server.get("/api/v1/instances").json()
            assert (instance["primary_source"], instance["primary_source_pinned"]) == (
                "slowlog",
                False,
            )
            phone = next(
                r
                for r in server.get("/api/v1/queries", instance=DB).json()["rows"]
                if "phone" in r["fingerprint"]
            )
            assert phone["query_time_p95"] is not None
            overview = server.get("/api/v1/queries", instance=DB, limit=500).json()
            print(
                f"overview, both sources on: {overview['totals']['count']} statements in "
                f"{len(overview['rows'])} classes counted from the {instance['primary_source']}"
            )

            # Honest prerequisites: the account reads the schema the queries use.
            instance_id = server.get("/api/v1/instances").json()[0]["id"]
            report = HTTP.post(
                f"{server.url}/api/v1/instances/{instance_id}/test-connection",
                headers={"Authorization": f"Bearer {server.token}"},
                timeout=60,
            ).json()
            read = next(c for c in report["capabilities"] if c["name"] == "read_schemas")
            assert read == {
                "name": "read_schemas",
                "ok": True,
                "detail": f"reads every schema the instance's queries use ({DB})",
            }

            # Applied means applied: the team runs the suggested DDL; the ALTER reaches
            # Quanta through the slow log, and the suggestion becomes applied in minutes.
            [suggestion] = suggestions(server)
            assert suggestion["status"] == "new"
            with contextlib.closing(mariadb.connect(DB)) as conn, conn.cursor() as cursor:
                cursor.execute(suggestion["ddl"])
            applied_at = time.monotonic()
            server.wait_for(
                lambda: [s["status"] for s in suggestions(server)] == ["applied"],
                timeout=180,
                what="the suggestion to become applied",
            )
            print(f"DDL to applied: {time.monotonic() - applied_at:.1f} s")
            table = server.get(f"/api/v1/instances/{instance_id}/tables/{DB}.orders")
            assert suggestion["ddl"].split("INDEX ")[1].split(" ")[0] in table.text, table.text


def suggestions(server: QuantaServer) -> list[dict[str, Any]]:
    """The phone lookup's suggestions that add an index."""
    rows = server.get("/api/v1/queries", instance=DB, limit=50).json()["rows"]
    query_id = next(r["query_id"] for r in rows if "phone" in r["fingerprint"])
    found = server.get(f"/api/v1/queries/{query_id}/suggestions", instance=DB).json()
    return [s for s in found["suggestions"] if s["action"] in ("add", "replace")]
