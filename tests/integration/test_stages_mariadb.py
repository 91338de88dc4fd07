"""Production stage profiles end to end on a real MariaDB: its stage and wait consumers on,
the agent's performance_schema collector polls, the API stores and ranks, nothing executed.

One server for the module (stage and wait consumers and instruments on at start, the
general log on): a filesort-heavy query ranks "Creating sort index" first, a full scan
"Sending data"; the sums equal what performance_schema measured per statement; no statement
is counted twice across polls, a TRUNCATE of the history or a restart of the server; the
general log shows that the agent sent only reads of performance_schema (and its session's
set-up).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from quanta.analysis.fingerprint import fingerprint, query_id
from quanta.core.config import Settings
from quanta_agent.config import InstanceSettings
from quanta_agent.perfschema import PerfSchemaCollector, make_perfschema_collector
from tests.fixtures.servers import OwnMariaDB, started_mariadb
from tests.helpers import process_all, wait_until

services = pytest.mark.services

STAGE_ARGS = [
    "--performance-schema-consumer-events-stages-current=ON",
    "--performance-schema-consumer-events-stages-history-long=ON",
    "--performance-schema-consumer-events-waits-current=ON",
    "--performance-schema-consumer-events-waits-history-long=ON",
    "--performance-schema-instrument=stage/%=ON",
    # The waits docs/operations.md turns on (wait/synch would fill the ring in moments).
    "--performance-schema-instrument=wait/io/%=ON",
    "--performance-schema-instrument=wait/lock/%=ON",
    "--performance-schema-events-stages-history-long-size=20000",
    "--performance-schema-events-waits-history-long-size=20000",
    "--performance-schema-events-statements-history-long-size=2000",
]
SORT = "SELECT * FROM orders WHERE customer_id = %s ORDER BY note DESC LIMIT 5"
SCAN = "SELECT COUNT(*) FROM orders WHERE note LIKE %s"
SORT_LIKE = "SELECT * FROM `orders` WHERE `customer_id` = ? ORDER BY %"
SCAN_LIKE = "SELECT COUNT ( * ) FROM `orders` WHERE `note` LIKE %"
SORT_FP = "select * from orders where customer_id=? order by note desc limit ?"
SCAN_FP = "select count(*) from orders where note like ?"
SETUP = (
    "CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT, note VARCHAR(64))",
    "INSERT INTO orders SELECT seq, seq % 50, CONCAT('n', seq) FROM seq_1_to_20000",
)
# A general-log line: the first of each second starts with the time ("261128 17:14:10"),
# the others with tabs; then the connection id, the command and its argument.
_LOG_LINE = re.compile(r"^(?:\d{6} +\d{1,2}:\d{2}:\d{2})?\s+(\d+) (\w[\w ]*?)\t(.*)$")


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnMariaDB]:
    general_log = tmp_path_factory.mktemp("general") / "general.log"
    args = [*STAGE_ARGS, "--general-log=ON", f"--general-log-file={general_log}"]
    with started_mariadb(args) as own, contextlib.closing(own.server.connect("test")) as conn:
        with conn.cursor() as cursor:
            for statement in SETUP:
                cursor.execute(statement)
        own.general_log = general_log  # type: ignore[attr-defined]
        yield own


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(env="test", data_dir=tmp_path / "data", database_url=None, redis_url=None)


def collector(own: OwnMariaDB) -> PerfSchemaCollector:
    server = own.server
    instance = InstanceSettings(
        name="db1", dsn=f"mysql://root@{server.host}:{server.port}/", sources=("perfschema",)
    )
    return make_perfschema_collector(instance)


def run(own: OwnMariaDB, sql: str, values: list[Any]) -> None:
    with contextlib.closing(own.server.connect("test")) as conn, conn.cursor() as cursor:
        for value in values:
            cursor.execute(sql, (value,))
            cursor.fetchall()


def sampled(body: dict[str, Any], text: str) -> tuple[int, int]:
    """(executions sampled, executions counted) of one class in a poll's body."""
    rows = [s for s in body.get("stage_samples", []) if s["fingerprint"] == text]
    return (
        sum(s["executions_sampled"] for s in rows),
        sum(s["executions_total"] for s in rows),
    )


def post(client: TestClient, factory: sessionmaker[Session], body: dict[str, Any], n: int) -> None:
    response = client.post(
        "/api/v1/ingest",
        json={"batch_id": f"stages-{n}", "instance": "db1", "source": "perfschema", **body},
    )
    assert response.status_code == 202, response.text
    process_all(factory)


def measured(own: OwnMariaDB, like: str) -> tuple[int, int, int]:
    """What performance_schema itself says of the class's statements in its history: their
    count, summed TIMER_WAIT and summed stage TIMER_WAIT (picoseconds)."""
    with contextlib.closing(own.server.connect()) as conn, conn.cursor() as cursor:
        cursor.execute(
            "SELECT s.THREAD_ID, s.EVENT_ID, s.TIMER_WAIT, "
            "(SELECT SUM(g.TIMER_WAIT) FROM performance_schema.events_stages_history_long g "
            " WHERE g.THREAD_ID = s.THREAD_ID AND g.NESTING_EVENT_ID = s.EVENT_ID) "
            "FROM performance_schema.events_statements_history_long s "
            "WHERE s.DIGEST_TEXT LIKE %s",
            (like,),
        )
        rows = cursor.fetchall()
    return len(rows), sum(int(r[2]) for r in rows), sum(int(r[3] or 0) for r in rows)


@services
def test_production_profiles_of_two_real_queries(
    own: OwnMariaDB, client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    with contextlib.closing(own.server.connect()) as conn, conn.cursor() as cursor:
        cursor.execute("TRUNCATE performance_schema.events_statements_history_long")
    col = collector(own)
    post(client, session_factory, col.poll(), 0)  # the baseline: nothing sampled
    run(own, SORT, list(range(12)))
    run(own, SCAN, [f"%{n}9%" for n in range(6)])
    body = col.poll()
    assert sampled(body, SORT_FP) == (12, 12)
    assert sampled(body, SCAN_FP) == (6, 6)
    post(client, session_factory, body, 1)

    profiles = {}
    for text in (SORT_FP, SCAN_FP):
        response = client.get(
            f"/api/v1/queries/{query_id(fingerprint(text))}/stages",
            params={"instance": "db1", "from": "now-1h"},
        )
        assert response.status_code == 200, response.text
        profiles[text] = response.json()
    print(json.dumps(profiles, indent=1))  # the closing note's figures (pytest -s)
    sort, scan = profiles[SORT_FP], profiles[SCAN_FP]
    assert sort["stages"][0]["stage"] == "Creating sort index"
    assert scan["stages"][0]["stage"] == "Sending data"
    for like, answer, executions in ((SORT_LIKE, sort, 12), (SCAN_LIKE, scan, 6)):
        count, response_ps, stages_ps = measured(own, like)
        assert (answer["executions_sampled"], answer["executions_total"]) == (
            executions,
            executions,
        )
        assert count == executions
        # The sums are what performance_schema measured, to the picosecond's float.
        assert answer["response_s"] == pytest.approx(response_ps / 1e12, rel=1e-9)
        stage_s = sum(s["time_s"] for s in answer["stages"])
        assert stage_s == pytest.approx(stages_ps / 1e12, rel=1e-9)
        assert answer["lost_time_s"] == pytest.approx(answer["response_s"] - stage_s, abs=1e-12)
        assert answer["waits_sampled"] == executions
        assert {w["stage"] for w in answer["waits"]} <= {s["stage"] for s in answer["stages"]} | {
            "lost time"
        }
    assert any(
        w["stage"] == "Sending data" and w["event"] == "wait/io/table/sql/handler"
        for w in scan["waits"]
    )
    # The same query id as the digest path's: the overview lists it with the digest count.
    listed = client.get("/api/v1/queries", params={"from": "now-1h", "search": "order by note"})
    assert [(r["query_id"], r["count"]) for r in listed.json()["rows"]] == [
        (query_id(fingerprint(SORT_FP)), 12)
    ]


@services
def test_each_statement_is_counted_once_across_polls_truncate_and_restart(
    own: OwnMariaDB,
) -> None:
    col = collector(own)
    col.poll()
    run(own, SCAN, ["%5%"] * 4)
    assert sampled(col.poll(), SCAN_FP) == (4, 4)
    assert sampled(col.poll(), SCAN_FP) == (0, 0)  # read again: nothing new
    with contextlib.closing(own.server.connect()) as conn, conn.cursor() as cursor:
        cursor.execute("TRUNCATE performance_schema.events_statements_history_long")
        cursor.execute("TRUNCATE performance_schema.events_stages_history_long")
    run(own, SCAN, ["%6%"] * 3)
    assert sampled(col.poll(), SCAN_FP) == (3, 3)
    # The agent tells a restart by the server's Uptime, in whole seconds (ServerClock): one
    # within a second and a half of the server's start may pass for none. This module's
    # server can be that young when pytest-xdist hands this test to a worker of its own.
    wait_until(lambda: own.uptime() >= 2, 5, "the server two seconds old")
    own.restart()  # thread and event ids start over
    run(own, SCAN, ["%7%"] * 2)
    body = col.poll()
    assert sampled(body, SCAN_FP) == (2, 2)
    assert sampled(col.poll(), SCAN_FP) == (0, 0)


@services
def test_the_agent_sends_only_reads_of_performance_schema(own: OwnMariaDB) -> None:
    col = collector(own)
    col.poll()
    agent_id = int(col.conn.query("SELECT CONNECTION_ID() AS id")[0]["id"])
    run(own, SORT, [1, 2])
    marker = "quanta-marker-stages"
    with contextlib.closing(own.server.connect()) as conn, conn.cursor() as cursor:
        cursor.execute(f"SELECT '{marker}'")
    body = col.poll()
    assert sampled(body, SORT_FP) == (2, 2)
    sent = agent_statements(own, marker, agent_id)
    assert any("events_stages_history_long" in s for s in sent)
    assert any("events_waits_history_long" in s for s in sent)
    for statement in sent:
        assert statement.startswith(("SELECT ", "SHOW GLOBAL ")), statement
        named = re.findall(r"\b(?:FROM|JOIN)\s+([\w.`]+)", statement)
        assert all(n.startswith(("performance_schema.", "information_schema.")) for n in named), (
            statement
        )


def agent_statements(own: OwnMariaDB, marker: str, connection: int) -> list[str]:
    """The statements the agent's connection sent after ``marker`` in the general log."""
    path: Path = own.general_log  # type: ignore[attr-defined]
    wait_until(lambda: marker in path.read_text(errors="replace"), 5, "the marker in the log")
    after = path.read_text(errors="replace").split(marker, 1)[1]
    sent = []
    for line in after.splitlines():
        match = _LOG_LINE.match(line)
        if match and int(match[1]) == connection and match[2] == "Query":
            sent.append(match[3])
    return sent
