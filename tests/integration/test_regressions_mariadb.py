"""A query that gets slower reaches chat with its likely cause, and nothing else does: a real
MariaDB with a steady workload on an indexed lookup, `quanta-agent run` tailing its slow log
into `quanta run` (API, worker, beat), a local HTTP receiver as the webhook.

The baseline is real statements of the same workload, run first in a session whose
`timestamp` walks through the minutes before now (MariaDB writes the session's time into the
slow log, as a replay would): the windows are minutes, the baseline cannot be compressed any
other way. Then, live, DROP INDEX and a minute's calls (a `regression` message naming the
query and the dropped index once that minute has ended, the detector's recent window being
the newest whole minute), then CREATE INDEX and a minute's calls (`regression_resolved`).
The EXPLAIN the regression's plan is compared with must run before the DROP, and each of the
two minutes must end: about three minutes of wall clock, waiting.

What it asserts follows from the rules, not from wall-clock timings: the lookup costs
~0.2 ms with its index and scans 200,000 rows (tens of ms) without, against a floor of 5 ms
per call set here (so no noise of an indexed lookup on a loaded machine crosses it).
"""

from __future__ import annotations

import contextlib
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.backend.test_notify_service import Receiver, receiver  # noqa: F401
from tests.fixtures.quanta import QuantaServer, quanta_run
from tests.fixtures.servers import MariaDBServer, started_mariadb
from tests.helpers import HTTP, agent_follows
from tests.integration.test_day_one import DB, MONITOR_PASSWORD, MONITOR_USER, running_agent

pytestmark = [pytest.mark.services, pytest.mark.long(seconds=180), pytest.mark.timeout(600)]

ROWS = 200_000
# One recent minute against the baseline's minutes: a rank test is at best 1/(n+1) sure, so
# p < ALPHA needs over 1/ALPHA - 1 baseline minutes with calls (the default 0.01 would need
# 100 minutes, each shipped by the agent as it would ship a replayed log: two minutes a
# second).
ALPHA = 0.05
BASELINE_MINUTES = 40
# A call every 2 s, in the baseline and after each change alike.
LOOKUPS_PER_MINUTE = 30
# A change and its minute's calls start no later than this into a minute, so that they all
# land in that minute (the scans take a few seconds on a loaded machine).
LATEST_START_SECOND = 30
FLOOR_SECONDS = 0.005
SETUP = (
    # Not the workload: kept out of the slow log.
    "SET SESSION long_query_time = 1000",
    f"CREATE DATABASE {DB}",
    f"USE {DB}",
    f"""CREATE TABLE {DB}.orders (id INT PRIMARY KEY, phone VARCHAR(20) NOT NULL,
        amount INT NOT NULL, INDEX idx_phone (phone))""",
    f"""INSERT INTO {DB}.orders SELECT seq, CONCAT('555-', LPAD(seq % 90000, 5, '0')),
        (seq * 37) % 1000 FROM seq_1_to_{ROWS}""",
    f"ANALYZE TABLE {DB}.orders",
    f"CREATE USER {MONITOR_USER}@'%' IDENTIFIED BY '{MONITOR_PASSWORD}'",
    f"GRANT SELECT ON {DB}.* TO {MONITOR_USER}@'%'",
    f"GRANT PROCESS ON *.* TO {MONITOR_USER}@'%'",
    f"GRANT SELECT ON performance_schema.* TO {MONITOR_USER}@'%'",
)
LOOKUP = "SELECT id, amount FROM orders WHERE phone = '555-{k:05d}'"
SETTINGS = {
    "QUANTA_ALLOW_PRIVATE_WEBHOOKS": "true",
    "QUANTA_REGRESSION_BASELINE_MINUTES": str(BASELINE_MINUTES),
    "QUANTA_REGRESSION_ALPHA": str(ALPHA),
    "QUANTA_REGRESSION_MIN_MINUTES": "1",
    "QUANTA_REGRESSION_CAUSE_MINUTES": "10",
    "QUANTA_REGRESSION_CHECK_SECONDS": "5",
    "QUANTA_REGRESSION_MIN_LATENCY_CHANGE": str(FLOOR_SECONDS),
    # The lookup is EXPLAINed while it is indexed: the plan a regression is compared with.
    "QUANTA_ADVICE_HOT_CHECK_SECONDS": "10",
}


MINUTE = timedelta(minutes=1)


def minute_of(t: float) -> datetime:
    return datetime.fromtimestamp(t, UTC).replace(second=0, microsecond=0)


def calls(cursor: Any, start: float | None = None) -> None:
    """A minute's worth of the lookup; at once, or logged through the minute from ``start``."""
    for k in range(LOOKUPS_PER_MINUTE):
        if start is not None:
            cursor.execute(f"SET timestamp = {start + 1 + k * 2}")
        cursor.execute(LOOKUP.format(k=(int(start or 0) // 60 * 37 + k) % 90000))
        cursor.fetchall()


def baseline(server: MariaDBServer, end: datetime) -> None:
    """The workload's minutes before ``end``, each statement logged at its minute's time."""
    with contextlib.closing(server.connect(DB)) as conn, conn.cursor() as cursor:
        for m in range(BASELINE_MINUTES + 2, 0, -1):
            calls(cursor, (end - m * MINUTE).timestamp())
        cursor.execute("SET timestamp = DEFAULT")


def changed_minute(server: MariaDBServer, statement: str, after: datetime) -> datetime:
    """``statement`` early in a minute later than ``after``, then a minute's worth of the
    workload's calls at once; returns that minute."""
    while time.time() % 60 > LATEST_START_SECOND or minute_of(time.time()) <= after:
        time.sleep(1)
    minute = minute_of(time.time())
    with contextlib.closing(server.connect(DB)) as conn, conn.cursor() as cursor:
        cursor.execute(statement)
        calls(cursor)
    assert minute_of(time.time()) == minute, "the calls spilled into the next minute"
    return minute


def checks_done(server: QuantaServer) -> int:
    return sum(
        1
        for line in server.log_lines()
        if "quanta.regressions.check" in line and "succeeded" in line
    )


def regressions(server: QuantaServer) -> list[dict[str, Any]]:
    return list(server.get("/api/v1/regressions").json()["regressions"])


def test_a_dropped_index_reaches_chat_with_its_cause_and_its_return(
    tmp_path: Path,
    receiver: Receiver,  # noqa: F811
) -> None:
    timeline: list[tuple[str, float]] = []
    with started_mariadb() as own, quanta_run(tmp_path / "data", settings=SETTINGS) as server:
        mariadb = own.server
        with contextlib.closing(mariadb.connect()) as conn, conn.cursor() as cursor:
            for statement in SETUP:
                cursor.execute(statement)
        dsn = f"mysql://{MONITOR_USER}:{MONITOR_PASSWORD}@{mariadb.host}:{mariadb.port}/"
        for path, body in (
            ("/api/v1/instances", {"name": DB, "dsn": dsn}),
            ("/api/v1/channels", {"name": "ops", "type": "webhook", "url": receiver.url(),
                                  "events": ["regression", "regression_resolved"]}),
        ):  # fmt: skip
            response = HTTP.post(
                server.url + path, json=body, headers={"Authorization": f"Bearer {server.token}"}
            )
            assert response.status_code == 201, response.text
        with running_agent(tmp_path, server, mariadb):
            # The agent starts reading at the end of the slow log: it must be there first.
            server.wait_for(
                lambda: agent_follows((tmp_path / "agent.log").read_text()),
                timeout=60,
                what="the agent to open the slow log",
            )
            generated = minute_of(time.time())
            baseline(mariadb, generated)
            timeline.append(("baseline end", generated.timestamp()))
            # Steady: the lookup is EXPLAINed (by the hot-query pass) while indexed, and
            # checks over the steady minutes say nothing.
            query_id = server.wait_for(
                lambda: next((r["query_id"] for r in lookups(server, generated)), None),
                timeout=120,
                what="the baseline in the store",
            )
            server.wait_for(lambda: explained(server, query_id), timeout=120, what="an EXPLAIN")
            # The regression's plan is compared with the last one taken before its minute.
            explained_in = minute_of(time.time())
            checked = checks_done(server)
            server.wait_for(
                lambda: checks_done(server) >= checked + 2, timeout=120, what="two checks"
            )
            timeline.append(("steady checked", time.time()))
            assert receiver.bodies() == []
            assert regressions(server) == []
            dropped = changed_minute(mariadb, "DROP INDEX idx_phone ON orders", after=explained_in)
            timeline.append(("DROP INDEX", dropped.timestamp()))
            regression = server.wait_for(
                lambda: next((b for b in receiver.bodies() if b["event"] == "regression"), None),
                timeout=120,
                what="the regression in chat",
            )
            timeline.append(("regression message", time.time()))
            created = changed_minute(
                mariadb, "CREATE INDEX idx_phone ON orders (phone)", after=dropped
            )
            timeline.append(("CREATE INDEX", created.timestamp()))
            resolved = server.wait_for(
                lambda: next(
                    (b for b in receiver.bodies() if b["event"] == "regression_resolved"), None
                ),
                timeout=120,
                what="the resolution in chat",
            )
            timeline.append(("resolved message", time.time()))
        [stored] = regressions(server)

    start = timeline[0][1]
    for what, at in timeline:
        print(f"{what:>20}: {datetime.fromtimestamp(at, UTC).isoformat()} (+{at - start:.0f} s)")
    print(f"regression: {regression}\nresolved: {resolved}")
    print(f"evidence: {stored['evidence']}\nresolution: {stored['resolution']}")

    # The webhook's contract, exactly.
    assert list(regression) == ["event", "instance", "query_id", "fingerprint", "metric",
                                "before", "after", "since", "cause"]  # fmt: skip
    assert regression["instance"] == DB
    assert regression["fingerprint"] == "select id, amount from orders where phone=?"
    assert regression["query_id"] == stored["query_id"]
    # The cause names the statement that dropped the index, seen through the slow log.
    assert "drop index idx_phone on orders" in regression["cause"], regression["cause"]
    # Found by the rules: large (twice the cost per call, and 5 ms more), significant and
    # sustained, on the first per-call metric that was all three.
    before, after = regression["before"], regression["after"]
    metric = regression["metric"]
    assert after >= 2 * before
    evidence = stored["evidence"]["metrics"]
    assert {k: evidence[metric][k] for k in ("large", "significant", "sustained")} == {
        "large": True, "significant": True, "sustained": True}  # fmt: skip
    latency = evidence["avg_latency" if metric == "rows_examined_per_call" else metric]
    assert latency["after"] - latency["before"] >= FLOOR_SECONDS
    # It started in the minute of the DROP, and was found on the first window after it that
    # the agent had shipped: within the sustained window (one minute) plus one check.
    assert datetime.fromisoformat(regression["since"]) == dropped
    assert datetime.fromisoformat(stored["window_end"]) - dropped <= timedelta(minutes=2)
    # The plan the regression's EXPLAIN found against the one stored while indexed.
    plan = stored["evidence"]["plan"]
    assert "idx_phone" in (plan["before"] or ""), plan
    assert "ALL" in (plan["after"] or ""), plan
    # Resolved once, after the index was back, by a window that starts no earlier than it.
    assert resolved["query_id"] == regression["query_id"]
    assert resolved["since"] == regression["since"]
    assert resolved["after"] < 2 * before or (
        metric != "rows_examined_per_call" and resolved["after"] - before < FLOOR_SECONDS
    )
    assert stored["status"] == "resolved"
    assert datetime.fromisoformat(stored["resolution"]["window_end"]) > created
    # Nothing else reached chat: one message each.
    assert [b["event"] for b in receiver.bodies()] == ["regression", "regression_resolved"]


def lookups(server: QuantaServer, until: datetime) -> list[dict[str, Any]]:
    """The lookup's class, when its baseline up to ``until`` is in the store."""
    body = server.get(
        "/api/v1/queries",
        instance=DB,
        **{"from": (until - MINUTE).isoformat(), "to": until.isoformat()},
    ).json()
    return [r for r in body["rows"] if "phone" in r["fingerprint"]]


def explained(server: QuantaServer, query_id: str) -> bool:
    """Whether the query has a successful EXPLAIN on the instance."""
    response = server.get(f"/api/v1/queries/{query_id}/explain", instance=DB)
    return response.status_code == 200 and response.json()["status"] == "ok"
