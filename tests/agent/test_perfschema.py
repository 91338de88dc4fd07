"""The performance_schema poller: exact deltas against what a real MariaDB executed.

Each scenario runs statements of known shapes a known number of times between two polls
and asserts the shipped deltas equal what was executed, across TRUNCATE, restarts and a
digest table too small to hold every shape. Every body is validated by the server's own
ingest model, so the agent and the API agree on the wire format.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pymysql
import pytest
from pymysql.cursors import Cursor

from quanta.ingest.schemas import IngestBatchIn
from quanta_agent.config import InstanceSettings
from quanta_agent.mysql import ServerClock
from quanta_agent.perfschema import (
    Bucket,
    DigestRow,
    DigestSnapshot,
    PerfSchemaCollector,
    diff_snapshots,
    make_perfschema_collector,
)
from tests.fixtures.servers import MariaDBServer, OwnMariaDB, started_mariadb
from tests.helpers import wait_until

services = pytest.mark.services

TRUNCATE_DIGESTS = "TRUNCATE performance_schema.events_statements_summary_by_digest"
# FIRST_SEEN has one-second resolution on MariaDB: statements meant to be "before" the agent
# started must be in an earlier second (see next_second).
SECOND_TIMEOUT = 5.0
ROWS = 3


# --------------------------------------------------------------------------- helpers


def dsn(server: MariaDBServer) -> str:
    return f"mysql://{server.user}@{server.host}:{server.port}/"


def collector(server: MariaDBServer, examples: str = "full") -> PerfSchemaCollector:
    instance = InstanceSettings(
        name="db1", dsn=dsn(server), sources=("perfschema",), examples=examples
    )
    return make_perfschema_collector(instance)


def poll(col: PerfSchemaCollector) -> dict[str, Any]:
    """Poll and check the body against the ingest API's model and the no-negative rule."""
    body = col.poll()
    if body:
        batch = IngestBatchIn.model_validate(
            {"batch_id": "b1", "instance": "db1", "source": "perfschema", **body}
        )
        for digest in batch.digests:
            numbers = [v for v in digest.model_dump().values() if isinstance(v, int | float)]
            assert all(v >= 0 for v in numbers), digest
            assert digest.digest is not None
    return body


def by_table(body: dict[str, Any], table: str) -> dict[str, Any] | None:
    """The digest of the test's SELECT shape on ``table``."""
    shape = f"SELECT `v` FROM `{table}` WHERE"
    found = [d for d in body.get("digests", []) if (d["digest_text"] or "").startswith(shape)]
    assert len(found) <= 1, found
    return found[0] if found else None


def count(body: dict[str, Any], table: str) -> int:
    digest = by_table(body, table)
    return 0 if digest is None else int(digest["count_star"])


def run(cursor: Cursor, sql: str, times: int) -> None:
    for i in range(times):
        cursor.execute(sql, (i % ROWS + 1,))


def next_second(server: MariaDBServer) -> None:
    """Return once the server's clock is in a later second than when called: whatever ran
    before has a FIRST_SEEN older than anything that happens after (half a second on average,
    where a fixed sleep had to take more than a whole one)."""

    def second() -> int:
        with contextlib.closing(server.connect()) as conn, conn.cursor() as cursor:
            cursor.execute("SELECT FLOOR(UNIX_TIMESTAMP(NOW(6)))")
            row = cursor.fetchone()
        assert row is not None
        return int(row[0])

    start = second()
    wait_until(lambda: second() > start, SECOND_TIMEOUT, "the server's next second")


def workload(conn: pymysql.Connection[Cursor], table: str) -> Cursor:
    cursor = conn.cursor()
    cursor.execute(f"CREATE TABLE {table} (id INT PRIMARY KEY, v INT)")
    cursor.execute(f"INSERT INTO {table} VALUES " + ", ".join(f"({i}, {i})" for i in range(1, 4)))
    return cursor


@pytest.fixture
def own() -> Iterator[OwnMariaDB]:
    with started_mariadb() as server:
        yield server


# --------------------------------------------------------------------------- real server


@services
def test_deltas_equal_what_was_executed(own: OwnMariaDB) -> None:
    conn = own.server.connect(database="test")
    cursor = workload(conn, "orders")
    next_second(own.server)
    col = collector(own.server)
    assert by_table(poll(col), "orders") is None  # first poll: a baseline only

    run(cursor, "SELECT v FROM orders WHERE id = %s", 7)
    run(cursor, "UPDATE orders SET v = v + 1 WHERE id = %s", 3)
    body = poll(col)

    select = by_table(body, "orders")
    assert select is not None
    assert select["count_star"] == 7
    assert select["sum_rows_sent"] == 7
    assert select["schema_name"] == "test"
    assert 0 < select["sum_timer_wait"] < 7 * 1.0  # seconds, not picoseconds
    assert 0 < select["min_timer_wait"] <= select["max_timer_wait"] < 1.0
    updates = [d for d in body["digests"] if d["digest_text"].startswith("UPDATE `orders`")]
    assert [(d["count_star"], d["sum_rows_affected"]) for d in updates] == [(3, 3)]
    assert body["digest_lost"] == 0
    assert by_table(poll(col), "orders") is None  # nothing ran since: nothing shipped
    run(cursor, "SELECT v FROM orders WHERE id = %s", 2)
    assert count(poll(col), "orders") == 2


@services
def test_first_poll_ships_only_digests_first_seen_after_the_start(own: OwnMariaDB) -> None:
    cursor = workload(own.server.connect(database="test"), "before_start")
    cursor.execute("CREATE TABLE after_start (id INT PRIMARY KEY, v INT)")
    run(cursor, "SELECT v FROM before_start WHERE id = %s", 4)
    next_second(own.server)
    col = collector(own.server)
    next_second(own.server)
    run(cursor, "SELECT v FROM before_start WHERE id = %s", 2)
    run(cursor, "SELECT v FROM after_start WHERE id = %s", 5)

    body = poll(col)

    assert count(body, "after_start") == 5  # new since the start: its whole value
    assert by_table(body, "before_start") is None  # lifetime totals are never shipped
    run(cursor, "SELECT v FROM before_start WHERE id = %s", 3)
    assert count(poll(col), "before_start") == 3


@services
@pytest.mark.parametrize(("before", "after"), [(2, 3), (2, 9)])
def test_truncate_between_polls(own: OwnMariaDB, before: int, after: int) -> None:
    cursor = workload(own.server.connect(database="test"), "t_trunc")
    col = collector(own.server)
    poll(col)
    run(cursor, "SELECT v FROM t_trunc WHERE id = %s", 5)
    assert count(poll(col), "t_trunc") == 5
    run(cursor, "SELECT v FROM t_trunc WHERE id = %s", before)  # lost with the TRUNCATE

    cursor.execute(TRUNCATE_DIGESTS)
    run(cursor, "SELECT v FROM t_trunc WHERE id = %s", after)
    body = poll(col)

    digest = by_table(body, "t_trunc")
    assert digest is not None
    assert (digest["count_star"], digest["reset"]) == (after, True)
    run(cursor, "SELECT v FROM t_trunc WHERE id = %s", 4)
    digest = by_table(poll(col), "t_trunc")
    assert digest is not None
    assert (digest["count_star"], digest["reset"]) == (4, False)


@services
def test_server_restart_between_polls(own: OwnMariaDB) -> None:
    workload(own.server.connect(database="test"), "t_restart").close()
    col = collector(own.server)
    poll(col)
    with own.server.connect(database="test") as conn:
        run(conn.cursor(), "SELECT v FROM t_restart WHERE id = %s", 6)
    assert count(poll(col), "t_restart") == 6

    own.restart()
    with own.server.connect(database="test") as conn:
        run(conn.cursor(), "SELECT v FROM t_restart WHERE id = %s", 2)
    body = poll(col)  # reconnects by itself

    digest = by_table(body, "t_restart")
    assert digest is not None
    assert (digest["count_star"], digest["reset"]) == (2, True)
    assert col.conn.connections_opened == 2
    with own.server.connect(database="test") as conn:
        run(conn.cursor(), "SELECT v FROM t_restart WHERE id = %s", 3)
    assert count(poll(col), "t_restart") == 3


@services
def test_full_digest_table_reports_lost_statements_and_nothing_negative() -> None:
    with started_mariadb(["--performance-schema-digests-size=5"]) as own:
        cursor = own.server.connect(database="test").cursor()
        col = collector(own.server, examples="off")
        poll(col)
        poll(col)  # the table is full of the agent's and the setup's own digests by now
        idle_lost = poll(col).get("digest_lost", 0)

        for width in range(1, 11):  # ten new shapes, none of which fits
            cursor.execute("SELECT " + ", ".join(["1"] * width))
        body = poll(col)

        assert body["digest_lost"] == idle_lost + 10
        assert all(d["digest"] for d in body["digests"])  # the NULL row is not a digest
        assert poll(col).get("digest_lost", 0) == idle_lost

        # After a TRUNCATE the rows are free again: a shape evicted by it and re-added
        # counts from zero.
        cursor.execute("CREATE TABLE t_evict (id INT PRIMARY KEY, v INT)")
        cursor.execute(TRUNCATE_DIGESTS)
        run(cursor, "SELECT v FROM t_evict WHERE id = %s", 4)
        digest = by_table(poll(col), "t_evict")
        assert digest is not None
        assert digest["count_star"] == 4


@services
@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("full", ("SELECT v FROM ex_{p} WHERE id = 2 AND v <> 'secret'", "full")),
        ("masked", ("select v from ex_{p} where id=? and v<>?", "masked")),
        ("off", None),
    ],
)
def test_examples_follow_the_policy(
    mariadb_server: MariaDBServer, policy: str, expected: tuple[str, str] | None
) -> None:
    table = f"ex_{policy}"
    cursor = workload(mariadb_server.connect(database="test"), table)
    col = collector(mariadb_server, examples=policy)
    poll(col)
    cursor.execute(f"SELECT v FROM {table} WHERE id = 2 AND v <> 'secret'")

    digest = by_table(poll(col), table)

    assert digest is not None
    shown = (digest["example"], digest["example_literals"]) if "example" in digest else None
    if expected is not None:
        expected = (expected[0].format(p=policy), expected[1])
    assert shown == expected


@services
def test_statement_cut_by_the_history_is_no_example(mariadb_server: MariaDBServer) -> None:
    cursor = workload(mariadb_server.connect(database="test"), "ex_long")
    col = collector(mariadb_server)
    poll(col)
    cursor.execute("SELECT v FROM ex_long WHERE v IN (" + ", ".join(["1"] * 800) + ")")

    digest = by_table(poll(col), "ex_long")

    assert digest is not None
    assert digest["count_star"] == 1
    assert "example" not in digest  # SQL_TEXT kept 1024 characters: not runnable


@services
def test_mariadb_has_no_histogram_and_polls_without_it(mariadb_server: MariaDBServer) -> None:
    cursor = workload(mariadb_server.connect(database="test"), "no_hist")
    col = collector(mariadb_server)
    poll(col)
    cursor.execute("SELECT v FROM no_hist WHERE id = 1")

    digest = by_table(poll(col), "no_hist")

    assert digest is not None
    assert "histogram" not in digest
    assert col._shape is not None
    assert col._shape.has_histogram is False


@services
def test_performance_schema_off_gives_nothing_to_ship() -> None:
    with started_mariadb(["--performance-schema=OFF"]) as own:
        col = collector(own.server)
        assert col.poll() == {}
        assert col.poll() == {}


# --------------------------------------------------------------------------- pure rules

T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
BOOT = T0 - timedelta(hours=1)


def clock(at: datetime, boot: datetime = BOOT) -> ServerClock:
    return ServerClock(now=at, uptime=int((at - boot).total_seconds()))


def row(
    digest: str,
    n: int,
    *,
    first_seen: datetime = T0 - timedelta(minutes=30),
    histogram: dict[int, Bucket] | None = None,
) -> DigestRow:
    return DigestRow(
        schema="app",
        digest=digest,
        digest_text=f"SELECT {digest}",
        counters={"COUNT_STAR": n, "SUM_TIMER_WAIT": n * 10**9},
        passthrough={"MAX_TIMER_WAIT": 10**9},
        first_seen=first_seen,
        histogram=histogram,
    )


def snap(at: datetime, *rows: DigestRow, lost: int = 0, boot: datetime = BOOT) -> DigestSnapshot:
    return DigestSnapshot(clock=clock(at, boot), rows={r.key: r for r in rows}, digest_lost=lost)


def counts(prev: DigestSnapshot | None, cur: DigestSnapshot) -> dict[str, tuple[int, bool]]:
    diff = diff_snapshots(prev, cur, new_since=T0)
    return {d.row.digest or "": (d.counters["COUNT_STAR"], d.reset) for d in diff.deltas}


T1 = T0 + timedelta(minutes=1)
T2 = T0 + timedelta(minutes=2)


@pytest.mark.parametrize(
    ("prev", "cur", "expected"),
    [
        pytest.param(
            None,
            snap(T1, row("old", 50), row("new", 4, first_seen=T0 + timedelta(seconds=5))),
            {"new": (4, False)},
            id="first poll: baseline, except digests first seen after the start",
        ),
        pytest.param(
            snap(T1, row("a", 50), row("b", 10)),
            snap(T2, row("a", 57), row("b", 10)),
            {"a": (7, False)},
            id="growth, and an idle digest is left out",
        ),
        pytest.param(
            snap(T1, row("a", 50)),
            snap(T2, row("a", 50), row("c", 3, first_seen=T1), row("d", 9, first_seen=T0)),
            {"c": (3, False)},
            id="new digest whole; one older than the last poll joins the baseline",
        ),
        pytest.param(
            snap(T1, row("a", 50), row("b", 10)),
            snap(T2, row("a", 52), row("b", 4, first_seen=T1 + timedelta(seconds=3))),
            {"a": (2, False), "b": (4, True)},
            id="one digest evicted and re-added: its value since then",
        ),
        pytest.param(
            snap(T1, row("a", 50), row("b", 10)),
            snap(T2, row("a", 60)),
            {"a": (60, True)},
            id="TRUNCATE: a row gone resets the table, even where counts grew",
        ),
        pytest.param(
            snap(T1, row("a", 50)),
            snap(T2, row("a", 70), boot=T1 + timedelta(seconds=20)),
            {"a": (70, True)},
            id="restart: boot time moved although the count grew",
        ),
    ],
)
def test_delta_rules(
    prev: DigestSnapshot | None, cur: DigestSnapshot, expected: dict[str, tuple[int, bool]]
) -> None:
    assert counts(prev, cur) == expected


def test_null_row_and_lost_counter() -> None:
    null_row = DigestRow(None, None, None, {"COUNT_STAR": 99}, {})
    prev = snap(T1, row("a", 1), null_row, lost=5)
    cur = snap(T2, row("a", 1), DigestRow(None, None, None, {"COUNT_STAR": 120}, {}), lost=26)
    assert diff_snapshots(prev, cur, new_since=T0).digest_lost == 21
    restarted = snap(T2, row("a", 1), lost=3, boot=T1 + timedelta(seconds=30))
    assert diff_snapshots(prev, restarted, new_since=T0).digest_lost == 3
    assert diff_snapshots(None, cur, new_since=T0).digest_lost is None


def test_histogram_buckets_are_deltas_and_must_add_up() -> None:
    before = {0: Bucket(0, 10, 5), 1: Bucket(10, 20, 1)}
    after = {0: Bucket(0, 10, 7), 1: Bucket(10, 20, 1), 2: Bucket(20, 40, 1)}
    prev = snap(T1, row("a", 6, histogram=before))
    diff = diff_snapshots(prev, snap(T2, row("a", 9, histogram=after)), new_since=T0)
    assert diff.deltas[0].histogram == [Bucket(0, 10, 2), Bucket(20, 40, 1)]

    # The histogram table truncated on its own: its buckets no longer add up: not shipped.
    alone = {0: Bucket(0, 10, 1)}
    diff = diff_snapshots(prev, snap(T2, row("a", 9, histogram=alone)), new_since=T0)
    assert diff.deltas[0].counters["COUNT_STAR"] == 3
    assert diff.deltas[0].histogram is None


def test_batch_holds_only_its_own_kind() -> None:
    digest = {
        "schema_name": None,
        "digest": "abc",
        "interval_start": T0.isoformat(),
        "interval_end": T1.isoformat(),
        "count_star": 1,
        "sum_timer_wait": 0.5,
    }
    event = {"ts": T0.isoformat(), "query": "SELECT 1", "query_time": 0.1}
    ok = IngestBatchIn.model_validate(
        {"batch_id": "b", "instance": "db1", "source": "perfschema", "digests": [digest]}
    )
    assert ok.digests[0].sum_timer_wait == 0.5
    assert ok.events == []
    with pytest.raises(ValueError, match="a 'perfschema' batch carries only digests"):
        IngestBatchIn.model_validate(
            {
                "batch_id": "b",
                "instance": "db1",
                "source": "perfschema",
                "digests": [digest],
                "events": [event],
            }
        )
    with pytest.raises(ValueError, match="a 'slowlog' batch carries only events"):
        IngestBatchIn.model_validate(
            {"batch_id": "b", "instance": "db1", "events": [event], "digests": [digest]}
        )
