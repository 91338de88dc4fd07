"""Table, index and user statistics: exact deltas from userstat and from performance_schema."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pymysql
import pytest
from pymysql.cursors import Cursor

from quanta.ingest.schemas import IngestBatchIn
from quanta_agent.config import InstanceSettings
from quanta_agent.mysql import ServerClock
from quanta_agent.stats import (
    Counters,
    Key,
    Origin,
    RowDelta,
    StatsCollector,
    StatsSnapshot,
    diff_rows,
    make_stats_collector,
    poll_body,
)
from tests.fixtures.servers import OwnMariaDB, started_mariadb

services = pytest.mark.services

ROW_IDS = (1, 2, 3)
LOOKUPS = 7  # ids 0..6: three of them exist
FULL_SCANS = 2
INDEX_RANGE_SCANS = 2  # v >= 2: two rows each


def collector(own: OwnMariaDB) -> StatsCollector:
    server = own.server
    instance = InstanceSettings(
        name="db1", dsn=f"mysql://root@{server.host}:{server.port}/", sources=("stats",)
    )
    return make_stats_collector(instance)


def poll(col: StatsCollector) -> dict[str, Any]:
    body = col.poll()
    if body:
        batch = IngestBatchIn.model_validate(
            {"batch_id": "s1", "instance": "db1", "source": "stats", **body}
        )
        rows = [*batch.tables, *batch.indexes, *batch.users]
        values = [v for r in rows for v in r.model_dump().values() if isinstance(v, int | float)]
        assert all(v >= 0 for v in values)
    return body


def setup_table(cursor: Cursor) -> None:
    cursor.execute("CREATE TABLE t (id INT PRIMARY KEY, v INT, KEY kv (v), KEY never_used (v, id))")
    cursor.execute("INSERT INTO t VALUES " + ", ".join(f"({i}, {i})" for i in ROW_IDS))


def workload(cursor: Cursor) -> None:
    for i in range(LOOKUPS):
        cursor.execute("SELECT v FROM t WHERE id = %s", (i,))
    for _ in range(INDEX_RANGE_SCANS):
        cursor.execute("SELECT id FROM t FORCE INDEX (kv) WHERE v >= 2")
    for _ in range(FULL_SCANS):
        cursor.execute("SELECT * FROM t IGNORE INDEX (PRIMARY, kv, never_used)")


def rows_of(body: dict[str, Any], kind: str) -> dict[tuple[Any, ...], dict[str, Any]]:
    keys = ("schema_name", "table_name", "index_name")
    return {
        tuple(r[k] for k in keys if k in r): r
        for r in body.get(kind, [])
        if r["schema_name"] == "test"
    }


@pytest.fixture
def userstat() -> Iterator[OwnMariaDB]:
    with started_mariadb(["--userstat=1"]) as own:
        yield own


@pytest.fixture
def perfschema_only() -> Iterator[OwnMariaDB]:
    with started_mariadb() as own:
        yield own


@services
def test_userstat_deltas_equal_rows_read(userstat: OwnMariaDB) -> None:
    cursor = userstat.server.connect(database="test").cursor()
    setup_table(cursor)
    col = collector(userstat)
    assert poll(col) == {}  # baseline

    workload(cursor)
    body = poll(col)

    indexes = rows_of(body, "indexes")
    assert indexes[("test", "t", "PRIMARY")]["rows_read"] == len(ROW_IDS)
    assert indexes[("test", "t", "kv")]["rows_read"] == INDEX_RANGE_SCANS * 2
    assert ("test", "t", "never_used") not in indexes
    table = rows_of(body, "tables")[("test", "t")]
    expected_reads = len(ROW_IDS) + INDEX_RANGE_SCANS * 2 + FULL_SCANS * len(ROW_IDS)
    assert (table["origin"], table["rows_read"], table["rows_changed"]) == (
        "userstat",
        expected_reads,
        0,
    )
    root = next(u for u in body["users"] if u["user"] == "root")
    assert root["select_commands"] >= LOOKUPS + INDEX_RANGE_SCANS + FULL_SCANS
    assert root["statement_errors"] == 0  # none failed
    observed = body["observed"]
    assert (observed["origin"], observed["reset"]) == ("userstat", None)
    assert observed["interval_start"] < observed["interval_end"]

    cursor.execute("UPDATE t SET v = v + 1 WHERE id = 1")
    with pytest.raises(pymysql.err.ProgrammingError):
        cursor.execute("SELECT * FROM no_such_table")
    body = poll(col)
    table = rows_of(body, "tables")[("test", "t")]
    assert (table["rows_changed"], table["reset"]) == (1, False)
    root = next(u for u in body["users"] if u["user"] == "root")
    assert root["statement_errors"] == 1  # performance_schema's count, next to userstat's

    # Nothing moved: no rows, but the interval is still reported (it is not a gap).
    idle = poll(col)
    assert (idle["tables"], idle["indexes"]) == ([], [])
    assert idle["observed"]["interval_start"] == body["observed"]["interval_end"]


@services
def test_userstat_flush_is_a_reset(userstat: OwnMariaDB) -> None:
    cursor = userstat.server.connect(database="test").cursor()
    setup_table(cursor)
    col = collector(userstat)
    poll(col)
    for _ in range(3):  # a lifetime of reads before the FLUSH...
        workload(cursor)
    poll(col)

    cursor.execute("FLUSH TABLE_STATISTICS")
    cursor.execute("FLUSH INDEX_STATISTICS")
    workload(cursor)  # ...and a little after it: every row went down
    body = poll(col)

    indexes = rows_of(body, "indexes")
    assert (indexes[("test", "t", "kv")]["rows_read"], indexes[("test", "t", "kv")]["reset"]) == (
        INDEX_RANGE_SCANS * 2,
        True,
    )
    assert indexes[("test", "t", "PRIMARY")]["rows_read"] == len(ROW_IDS)
    assert body["observed"]["reset"] == "flush"


@services
def test_performance_schema_io_when_userstat_is_off(perfschema_only: OwnMariaDB) -> None:
    cursor = perfschema_only.server.connect(database="test").cursor()
    setup_table(cursor)
    col = collector(perfschema_only)
    assert poll(col) == {}

    workload(cursor)
    body = poll(col)

    indexes = rows_of(body, "indexes")
    assert indexes[("test", "t", "PRIMARY")]["count_fetch"] == LOOKUPS
    assert indexes[("test", "t", "kv")]["count_fetch"] == INDEX_RANGE_SCANS * 2
    assert indexes[("test", "t", None)]["count_fetch"] == FULL_SCANS * len(ROW_IDS)
    assert ("test", "t", "never_used") not in indexes
    table = rows_of(body, "tables")[("test", "t")]
    assert table["origin"] == "perfschema"
    assert table["count_fetch"] == sum(i["count_fetch"] for i in indexes.values())
    assert 0 < table["sum_timer_wait"] < 1.0  # seconds
    assert body["users"] == []

    perfschema_only.restart()
    with perfschema_only.server.connect(database="test") as conn:
        conn.cursor().execute("SELECT v FROM t WHERE id = 1")
    index = rows_of(poll(col), "indexes")[("test", "t", "PRIMARY")]
    assert (index["count_fetch"], index["reset"]) == (1, True)


@pytest.mark.parametrize(
    ("prev", "cur", "restarted", "expected"),
    [
        pytest.param(None, {("a",): {"N": 5}}, False, [], id="first poll is a baseline"),
        pytest.param(
            {("a",): {"N": 5}, ("b",): {"N": 1}},
            {("a",): {"N": 8}, ("b",): {"N": 1}, ("c",): {"N": 2}},
            False,
            [RowDelta(("a",), {"N": 3}), RowDelta(("c",), {"N": 2})],
            id="growth and a new row; idle rows left out",
        ),
        pytest.param(
            {("a",): {"N": 5}, ("b",): {"N": 4}},
            {("a",): {"N": 9}},
            False,
            [RowDelta(("a",), {"N": 4})],
            id="one row dropped (DROP TABLE) is no reset",
        ),
        pytest.param(
            {("a",): {"N": 5}, ("b",): {"N": 4}},
            {("a",): {"N": 2}, ("b",): {"N": 6}},
            False,
            [RowDelta(("a",), {"N": 2}, reset=True), RowDelta(("b",), {"N": 2})],
            id="a counter went down: that row was reset",
        ),
        pytest.param(
            {("a",): {"N": 5}},
            {("a",): {"N": 9}},
            True,
            [RowDelta(("a",), {"N": 9}, reset=True)],
            id="restart: every value is new",
        ),
    ],
)
def test_row_delta_rules(
    prev: dict[Key, Counters] | None,
    cur: dict[Key, Counters],
    restarted: bool,
    expected: list[RowDelta],
) -> None:
    assert diff_rows(prev, cur, restarted=restarted) == expected


T0 = datetime(2026, 1, 1, tzinfo=UTC)


def snapshot(seconds: int, uptime: int, reads: int, origin: Origin = "userstat") -> StatsSnapshot:
    clock = ServerClock(now=T0 + timedelta(seconds=seconds), uptime=uptime)
    rows = {("db", "t", "PRIMARY"): {"ROWS_READ": reads}} if reads else {}
    return StatsSnapshot(clock=clock, origin=origin, tables={}, indexes=rows, users={})


@pytest.mark.parametrize(
    ("prev", "cur", "reset", "rows"),
    [
        pytest.param(snapshot(0, 100, 5), snapshot(60, 160, 5), None, 0, id="idle"),
        pytest.param(snapshot(0, 100, 5), snapshot(60, 160, 9), None, 1, id="reads"),
        pytest.param(snapshot(0, 100, 5), snapshot(60, 30, 2), "restart", 1, id="restart"),
        pytest.param(snapshot(0, 100, 5), snapshot(60, 160, 2), "flush", 1, id="flush"),
    ],
)
def test_every_poll_reports_the_interval_it_covered(
    prev: StatsSnapshot, cur: StatsSnapshot, reset: str | None, rows: int
) -> None:
    body = poll_body(prev, cur)
    assert body["observed"] == {
        "origin": "userstat",
        "interval_start": "2026-01-01T00:00:00+00:00",
        "interval_end": "2026-01-01T00:01:00+00:00",
        "reset": reset,
    }
    assert len(body["indexes"]) == rows
