"""The query analytics API on SQLite: top list, detail, examples and filters, end to end
from the ingest API through the batch service, asserting exact values."""

import gzip
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from quanta.analysis.fingerprint import fingerprint
from quanta.analysis.histogram import LatencyHistogram
from quanta.analysis.own import is_own
from quanta.core.config import Settings
from quanta.core.crypto import encrypt
from quanta.core.db import session_scope
from quanta.ingest import service as ingest
from quanta.ingest.models import IngestBatch
from quanta.instances.models import Instance
from quanta.queries import service as queries
from quanta.queries.window import TimeWindow
from tests.helpers import parse_yaml

SETTINGS = Settings(env="test")
# Three hours ago on a whole hour: every event lies in the two hours after it.
BASE = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(hours=3)
TWO_HOURS = {"from": BASE.isoformat(), "to": (BASE + timedelta(hours=2)).isoformat()}
ACCURACY = LatencyHistogram.RELATIVE_ACCURACY

# A: 100 calls on db1, one a minute, 0.01 s .. 1.00 s; every 4th by user "batch".
SQL_A = "SELECT * FROM orders WHERE id = {}"
# B: 10 calls of 2 s on db2 in minutes 0..9, nothing sent.
SQL_B = "UPDATE customers SET name = 'x' WHERE id = {}"
# C: 5 calls of 6 s on db1 in minutes 0..4, 1000 rows examined for one sent.
SQL_C = "SELECT COUNT(*) FROM items WHERE price > {}"
A_TIME = 0.01 * 5050  # 50.5
B_TIME = 20.0
C_TIME = 30.0
TOTAL_TIME = A_TIME + B_TIME + C_TIME


def query_id(sql: str) -> str:
    from hashlib import md5

    return md5(fingerprint(sql.format(1)).encode()).hexdigest()[:16].upper()


QID_A, QID_B, QID_C = query_id(SQL_A), query_id(SQL_B), query_id(SQL_C)


def event(minute: int, query_time: float, sql: str, **extra: Any) -> dict[str, Any]:
    return {
        "ts": (BASE + timedelta(minutes=minute, seconds=7)).isoformat(),
        "query": sql,
        "query_time": query_time,
        "lock_time": 0.001,
        "rows_sent": 1,
        "rows_examined": 10,
        "db": "shop",
        "user": "app",
        "host": "web1",
        **extra,
    }


def post(client: TestClient, batch_id: str, instance: str, events: list[dict[str, Any]]) -> None:
    payload = json.dumps({"batch_id": batch_id, "instance": instance, "events": events})
    response = client.post(
        "/api/v1/ingest",
        content=gzip.compress(payload.encode()),
        headers={"Content-Encoding": "gzip"},
    )
    assert response.status_code == 202, response.text


@pytest.fixture
def seeded(client: TestClient, session_factory: sessionmaker[Session]) -> TestClient:
    """Queries A and C on db1, B on db2, processed into the store."""
    events_a = [
        event(i, 0.01 * (i + 1), SQL_A.format(i), full_scan=i % 2 == 0, user="batch")
        if i % 4 == 0
        else event(i, 0.01 * (i + 1), SQL_A.format(i), full_scan=False)
        for i in range(100)
    ]
    events_c = [event(i, 6.0, SQL_C.format(i), rows_examined=1000) for i in range(5)]
    events_b = [
        event(i, 2.0, SQL_B.format(i), db="crm", user="admin", host="web2", rows_sent=0)
        for i in range(10)
    ]
    post(client, "a", "db1", events_a + events_c)
    post(client, "b", "db2", events_b)
    with session_scope(session_factory) as session:
        ids = list(session.scalars(select(IngestBatch.id).order_by(IngestBatch.id)))
    for batch_pk in ids:
        with session_scope(session_factory) as session:
            ingest.process_batch(session=session, settings=SETTINGS, batch_pk=batch_pk)
    return client


def get(client: TestClient, path: str, expect: int = 200, **params: Any) -> Any:
    response = client.get(f"/api/v1{path}", params=params)
    assert response.status_code == expect, response.text
    return response.json()


def top(client: TestClient, **params: Any) -> Any:
    return get(client, "/queries", **{**TWO_HOURS, **params})


def ids(body: Any) -> list[str]:
    return [row["query_id"] for row in body["rows"]]


def test_totals_shares_and_row_fields(seeded: TestClient) -> None:
    body = top(seeded)
    seconds = 7200.0
    assert body["seconds"] == seconds
    assert body["sort"] == "load"
    assert body["order"] == "desc"
    totals = body["totals"]
    assert totals["count"] == 115
    assert totals["query_time"] == pytest.approx(TOTAL_TIME)
    assert totals["load"] == pytest.approx(TOTAL_TIME / seconds)
    assert totals["qps"] == pytest.approx(115 / seconds)
    assert totals["rows_examined"] == 100 * 10 + 5 * 1000 + 10 * 10
    assert totals["rows_sent"] == 100 + 5
    assert totals["queries"] == 3
    assert ids(body) == [QID_A, QID_C, QID_B]
    assert sum(row["share"] for row in body["rows"]) == pytest.approx(1.0)
    a, c, b = body["rows"]
    assert a["share"] == pytest.approx(A_TIME / TOTAL_TIME)
    assert a["fingerprint"] == "select * from orders where id=?"
    assert a["statement_type"] == "select"
    assert a["tables"] == ["orders"]
    assert (a["count"], a["rows_examined"], a["rows_sent"]) == (100, 1000, 100)
    assert a["qps"] == pytest.approx(100 / seconds)
    assert a["load"] == pytest.approx(A_TIME / seconds)
    assert a["query_time_avg"] == pytest.approx(0.505)
    assert a["query_time_max"] == pytest.approx(1.0)
    assert a["query_time_p95"] == pytest.approx(0.95, rel=ACCURACY)
    assert a["query_time_p99"] == pytest.approx(0.99, rel=ACCURACY)
    assert a["flags"] == {
        "full_scan": True,
        "filesort": None,
        "tmp_disk_tables": None,
        "no_index_used": None,
    }
    assert b["statement_type"] == "update"
    assert b["tables"] == ["customers"]
    assert b["flags"]["full_scan"] is None
    assert c["query_time_p95"] == pytest.approx(6.0)


@pytest.mark.parametrize(
    ("sort", "order", "expected"),
    [
        ("load", "asc", [QID_B, QID_C, QID_A]),
        ("count", "desc", [QID_A, QID_B, QID_C]),
        ("qps", "asc", [QID_C, QID_B, QID_A]),
        ("query_time_avg", "desc", [QID_C, QID_B, QID_A]),
        ("query_time_max", "desc", [QID_C, QID_B, QID_A]),
        ("rows_examined", "desc", [QID_C, QID_A, QID_B]),
        ("rows_sent", "desc", [QID_A, QID_C, QID_B]),
        # B sends nothing: no ratio, listed last whatever the order.
        ("rows_examined_per_row_sent", "desc", [QID_C, QID_A, QID_B]),
        ("rows_examined_per_row_sent", "asc", [QID_A, QID_C, QID_B]),
        ("query_time_p95", "desc", [QID_C, QID_B, QID_A]),
        ("query_time_p99", "asc", [QID_A, QID_B, QID_C]),
        ("lock_time", "desc", [QID_A, QID_B, QID_C]),
    ],
)
def test_sort_by_any_metric(seeded: TestClient, sort: str, order: str, expected: list[str]) -> None:
    assert ids(top(seeded, sort=sort, order=order)) == expected


def test_percentile_sort_stops_early_and_pages(
    seeded: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One candidate a round: C's p95 (6 s) beats the next maximum (B's 2 s) after one round.
    monkeypatch.setattr(queries, "PERCENTILE_CHUNK", 1)
    assert ids(top(seeded, sort="query_time_p95", limit=1)) == [QID_C]
    assert ids(top(seeded, sort="query_time_p95", limit=1, offset=1)) == [QID_B]
    assert ids(top(seeded, sort="query_time_p95", limit=5, offset=2)) == [QID_A]


def test_percentile_sort_reads_every_candidate_when_the_first_ones_do_not_settle_it(
    seeded: TestClient, session_factory: sessionmaker[Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    # D and E: one outlier (10 s, 9 s) among 99 fast calls each, so the heaviest maxima but
    # the lowest p95s. The first read (one chunk and its bound: D, E) does not settle the
    # first place, so every query is read; C's p95 beats the next maximum (B's 2 s).
    outliers = {"DELETE FROM carts WHERE id = {}": 10.0, "DELETE FROM wishes WHERE id = {}": 9.0}
    for n, (sql, slowest) in enumerate(outliers.items()):
        calls = [event(i % 60, slowest if i == 0 else 0.001, sql.format(i)) for i in range(100)]
        post(seeded, f"outlier{n}", "db1", calls)
    with session_scope(session_factory) as session:
        batches = list(session.scalars(select(IngestBatch.id).order_by(IngestBatch.id)))
    for batch_pk in batches[-2:]:
        with session_scope(session_factory) as session:
            ingest.process_batch(session=session, settings=SETTINGS, batch_pk=batch_pk)
    monkeypatch.setattr(queries, "PERCENTILE_CHUNK", 1)
    first = top(seeded, sort="query_time_p95", limit=1)
    assert ids(first) == [QID_C]
    assert first["totals"]["queries"] == 5
    assert first["totals"]["count"] == 315
    d, e = (query_id(sql) for sql in outliers)
    assert ids(top(seeded, sort="query_time_p95", limit=3)) == [QID_C, QID_B, QID_A]
    assert set(ids(top(seeded, sort="query_time_p95", offset=3))) == {d, e}


def test_every_sort_shows_the_same_rows(seeded: TestClient) -> None:
    """A percentile sort ranks by histograms merged apart from the page's: its rows hold
    the same figures, flags, percentiles and sparklines as the default sort's."""
    by_load = {row["query_id"]: row for row in top(seeded)["rows"]}
    for order in ("desc", "asc"):
        by_p95 = top(seeded, sort="query_time_p95", order=order)["rows"]
        assert {row["query_id"]: row for row in by_p95} == by_load
    assert by_load[QID_A]["flags"]["full_scan"] is True


def test_an_instances_load_is_the_top_lists_order_and_figures(
    seeded: TestClient, session_factory: sessionmaker[Session]
) -> None:
    """Beat's passes rank an instance's queries without the list's percentiles: same
    order, sums and shares as the list filtered to that instance."""
    listed = top(seeded, instance="db1")
    window = TimeWindow(BASE, BASE + timedelta(hours=2))
    with session_scope(session_factory) as session:
        load = queries.instance_load(
            session=session, settings=SETTINGS, instance="db1", window=window, limit=10
        )
        first = queries.instance_load(
            session=session, settings=SETTINGS, instance="db1", window=window, limit=1
        )
    assert [row.query_id for row in load.rows] == [QID_A, QID_C] == ids(listed)
    assert load.query_time == pytest.approx(A_TIME + C_TIME) == listed["totals"]["query_time"]
    for ranked, row in zip(load.rows, listed["rows"], strict=True):
        assert (ranked.fingerprint, ranked.statement_type, ranked.tables) == (
            row["fingerprint"], row["statement_type"], row["tables"],
        )  # fmt: skip
        assert (ranked.count, ranked.rows_examined) == (row["count"], row["rows_examined"])
        assert ranked.query_time == pytest.approx(row["query_time"])
        assert ranked.load == pytest.approx(row["load"])
        assert ranked.share == pytest.approx(row["share"])
    assert load.rows[1].share == pytest.approx(C_TIME / (A_TIME + C_TIME))
    # The limit cuts the rows, not the instance's query time.
    assert [row.query_id for row in first.rows] == [QID_A]
    assert first.query_time == pytest.approx(A_TIME + C_TIME)


def test_limit_and_offset(seeded: TestClient) -> None:
    assert ids(top(seeded, limit=2)) == [QID_A, QID_C]
    page = top(seeded, limit=2, offset=2)
    assert ids(page) == [QID_B]
    assert page["totals"]["count"] == 115  # totals do not depend on the page
    past_the_end = top(seeded, offset=10)
    assert past_the_end["rows"] == []
    assert past_the_end["totals"]["count"] == 115
    assert past_the_end["totals"]["queries"] == 3


def test_filters_narrow_rows_and_totals(seeded: TestClient) -> None:
    db2 = top(seeded, instance="db2")
    assert ids(db2) == [QID_B]
    assert db2["totals"]["count"] == 10
    assert db2["rows"][0]["share"] == pytest.approx(1.0)
    both = top(seeded, instance=["db1", "db2"])
    assert both["totals"]["count"] == 115
    shop = top(seeded, schema="shop")
    assert ids(shop) == [QID_A, QID_C]
    assert shop["totals"]["query_time"] == pytest.approx(A_TIME + C_TIME)
    batch = top(seeded, user="batch")
    assert ids(batch) == [QID_A]
    assert batch["rows"][0]["count"] == 25
    assert batch["rows"][0]["query_time"] == pytest.approx(12.25)
    assert ids(top(seeded, host="web2")) == [QID_B]
    assert ids(top(seeded, instance="nosuch")) == []
    assert top(seeded, instance="nosuch")["totals"]["count"] == 0


@pytest.mark.parametrize(
    ("search", "expected"),
    [
        ("count(", [QID_C]),  # fingerprint text
        ("CUSTOMERS", [QID_B]),  # a table, any case
        ("orders", [QID_A]),
        (QID_A, [QID_A]),  # a query_id
        (QID_B.lower(), [QID_B]),
        ("%", []),  # LIKE wildcards are matched literally
        ("nothing like it", []),
    ],
)
def test_search(seeded: TestClient, search: str, expected: list[str]) -> None:
    body = top(seeded, search=search)
    assert ids(body) == expected
    assert body["totals"]["queries"] == len(expected)


def test_sparkline_has_zero_filled_gaps(seeded: TestClient) -> None:
    # One hour from minute 5: minute buckets, 60 one-minute slots.
    start = BASE + timedelta(minutes=5)
    body = top(
        seeded, **{"from": start.isoformat(), "to": (start + timedelta(hours=1)).isoformat()}
    )
    rows = {row["query_id"]: row for row in body["rows"]}
    points = rows[QID_B]["sparkline"]
    assert len(points) == 60
    assert [datetime.fromisoformat(p["ts"]) for p in points] == [
        start + timedelta(minutes=i) for i in range(60)
    ]
    assert [p["load"] for p in points] == pytest.approx([2.0 / 60] * 5 + [0.0] * 55)
    a_points = rows[QID_A]["sparkline"]
    assert [p["load"] for p in a_points] == pytest.approx([0.01 * (i + 6) / 60 for i in range(60)])


def test_relative_times(seeded: TestClient) -> None:
    body = get(seeded, "/queries", **{"from": "now-24h"})
    assert body["totals"]["count"] == 115
    assert body["seconds"] == pytest.approx(86400, abs=1)
    assert get(seeded, "/queries", **{"from": "now-7d", "to": "now"})["seconds"] == 7 * 86400


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"from": "yesterday"}, "Cannot read time 'yesterday'"),
        ({"from": "now-1h", "to": "now-2h"}, "must be before 'to'"),
        ({"sort": "bogus"}, "Unknown sort key 'bogus'; use one of: load,"),
        ({"order": "sideways"}, "Unknown order 'sideways'; use 'asc' or 'desc'."),
    ],
)
def test_bad_requests_are_400_with_a_message(
    seeded: TestClient, params: dict[str, str], message: str
) -> None:
    body = get(seeded, "/queries", expect=400, **params)
    assert message in body["detail"]


def test_detail_shares_are_of_the_queries_matching_the_same_filters(seeded: TestClient) -> None:
    def count_share(**params: str) -> float:
        body = get(seeded, f"/queries/{QID_A}", **TWO_HOURS, **params)
        return next(m["share"] for m in body["metrics"] if m["name"] == "count")

    assert count_share() == pytest.approx(100 / 115)  # instance totals: every query
    assert count_share(instance="db1") == pytest.approx(100 / 105)  # A and C run on db1
    assert count_share(user="app") == pytest.approx(75 / 80)  # buckets: A's and C's as app


def test_detail_metrics_series_and_breakdown(seeded: TestClient) -> None:
    body = get(seeded, f"/queries/{QID_A}", **TWO_HOURS)
    assert body["fingerprint"] == "select * from orders where id=?"
    assert (body["count"], body["seconds"]) == (100, 7200.0)
    assert body["share"] == pytest.approx(A_TIME / TOTAL_TIME)
    metrics = {m["name"]: m for m in body["metrics"]}
    qt = metrics["query_time"]
    assert qt["sum"] == pytest.approx(A_TIME)
    assert qt["rate"] == pytest.approx(A_TIME / 7200)
    assert qt["share"] == pytest.approx(A_TIME / TOTAL_TIME)
    assert qt["avg"] == pytest.approx(0.505)
    assert (qt["min"], qt["max"]) == pytest.approx((0.01, 1.0))
    # Exact percentiles of 0.01 .. 1.00 (nearest rank below): 0.50, 0.95, 0.99.
    for name, exact in (("p50", 0.50), ("p95", 0.95), ("p99", 0.99)):
        assert abs(qt[name] - exact) <= ACCURACY * exact
    assert metrics["count"]["sum"] == 100
    assert metrics["count"]["share"] == pytest.approx(100 / 115)
    rows = metrics["rows_examined"]
    assert (rows["sum"], rows["avg"]) == (1000, 10)
    assert rows["share"] == pytest.approx(1000 / 6100)
    assert metrics["lock_time"]["max"] == pytest.approx(0.001)
    assert metrics["rows_affected"]["sum"] is None  # never given: not 0

    assert body["resolution"] == "minute"
    series = body["series"]
    assert len(series) == 120
    assert datetime.fromisoformat(series[0]["ts"]) == BASE
    assert series[42]["count"] == 1
    assert series[42]["load"] == pytest.approx(0.43 / 60)
    assert series[42]["rows_examined"] == 10
    assert series[42]["p95"] == pytest.approx(0.43, rel=ACCURACY)
    assert series[100] == {
        "ts": series[100]["ts"],
        "load": 0.0,
        "count": 0,
        "rows_examined": 0,
        "p50": None,
        "p95": None,
        "p99": None,
    }

    breakdown = body["breakdown"]
    assert [(r["value"], r["count"]) for r in breakdown["user"]] == [("app", 75), ("batch", 25)]
    assert breakdown["user"][1]["share"] == pytest.approx(12.25 / A_TIME)
    assert [(r["value"], r["share"]) for r in breakdown["instance"]] == [("db1", pytest.approx(1))]
    assert [r["value"] for r in breakdown["schema"]] == ["shop"]
    assert [r["value"] for r in breakdown["host"]] == ["web1"]


def test_detail_over_a_day_uses_hours(seeded: TestClient) -> None:
    body = get(seeded, f"/queries/{QID_B}", **{"from": "now-24h"})
    assert body["resolution"] == "hour"
    assert sum(point["count"] for point in body["series"]) == 10
    assert len(body["series"]) in (24, 25)  # the first hour is partly in the range


def test_unknown_query_is_404(seeded: TestClient) -> None:
    for path in ("/queries/NOPE", "/queries/NOPE/examples"):
        body = get(seeded, path, expect=404)
        assert body == {"detail": "No query with query_id 'NOPE'."}
    assert "Cannot read time" in get(seeded, f"/queries/{QID_A}", 400, to="soon")["detail"]


def test_examples_slowest_first(seeded: TestClient) -> None:
    body = get(seeded, f"/queries/{QID_A}/examples", **TWO_HOURS)
    examples = body["examples"]
    slowest = examples[0]
    assert (slowest["kind"], slowest["text"]) == ("slowest", SQL_A.format(99))
    assert slowest["query_time"] == pytest.approx(1.0)
    assert (slowest["instance"], slowest["schema_name"], slowest["literals"]) == (
        "db1",
        "shop",
        "full",
    )
    times = [e["query_time"] for e in examples]
    assert times == sorted(times, reverse=True)
    assert len(examples) == 20  # the default limit
    # Minute examples are read too: each of the 100 statements, not two per hour.
    every = get(seeded, f"/queries/{QID_A}/examples", limit=100, **TWO_HOURS)["examples"]
    assert sorted(e["text"] for e in every) == sorted(SQL_A.format(i) for i in range(100))
    assert get(seeded, f"/queries/{QID_A}/examples", instance="db2", **TWO_HOURS)["examples"] == []
    assert len(get(seeded, f"/queries/{QID_A}/examples", limit=1, **TWO_HOURS)["examples"]) == 1


def test_filters_list_values_with_their_share(seeded: TestClient) -> None:
    body = get(seeded, "/filters", **TWO_HOURS)
    assert [(v["value"], v["count"]) for v in body["instance"]] == [("db1", 105), ("db2", 10)]
    assert body["instance"][0]["share"] == pytest.approx((A_TIME + C_TIME) / TOTAL_TIME)
    users = [(v["value"], round(v["share"] * TOTAL_TIME, 6)) for v in body["user"]]
    assert users == [("app", 68.25), ("admin", 20.0), ("batch", 12.25)]
    assert sum(v["share"] for v in body["schema"]) == pytest.approx(1.0)
    assert [v["value"] for v in body["host"]] == ["web1", "web2"]
    narrowed = get(seeded, "/filters", instance="db2", **TWO_HOURS)
    assert [(v["value"], v["share"]) for v in narrowed["user"]] == [("admin", 1.0)]


# -- group_by -------------------------------------------------------------------------------


def test_group_by_user_ranks_users_by_load_with_shares_and_sparklines(seeded: TestClient) -> None:
    body = top(seeded, group_by="user")
    assert (body["group_by"], body["rows"]) == ("user", [])
    groups = {g["value"]: g for g in body["groups"]}
    assert [g["value"] for g in body["groups"]] == ["app", "admin", "batch"]
    # A's every 4th call (25 of them, 0.01 .. 0.97 s in steps of 0.04) ran as "batch".
    assert groups["batch"]["query_time"] == pytest.approx(12.25)
    assert groups["app"]["query_time"] == pytest.approx(A_TIME - 12.25 + C_TIME)
    assert groups["admin"]["query_time"] == pytest.approx(B_TIME)
    assert [groups[u]["count"] for u in ("app", "admin", "batch")] == [80, 10, 25]
    assert sum(g["share"] for g in body["groups"]) == pytest.approx(1.0)
    assert groups["admin"]["query_time_p95"] == pytest.approx(2.0, rel=ACCURACY)
    assert body["totals"]["count"] == 115
    assert body["totals"]["queries"] == 3
    assert body["totals"] == top(seeded)["totals"]  # rates and averages as the query view's
    sparkline = groups["admin"]["sparkline"]
    assert sum(p["load"] for p in sparkline) * 7200 / len(sparkline) == pytest.approx(B_TIME)


def test_group_by_instance_sorts_by_any_metric_and_pages(seeded: TestClient) -> None:
    by_count = top(seeded, group_by="instance", sort="count", order="asc")
    assert [(g["value"], g["count"]) for g in by_count["groups"]] == [("db2", 10), ("db1", 105)]
    by_p99 = top(seeded, group_by="instance", sort="query_time_p99")
    assert [g["value"] for g in by_p99["groups"]] == ["db1", "db2"]
    assert by_p99["groups"][0]["query_time_p99"] == pytest.approx(6.0, rel=ACCURACY)
    second = top(seeded, group_by="schema", limit=1, offset=1)
    assert [(g["value"], g["load"] * 7200) for g in second["groups"]] == [
        ("crm", pytest.approx(B_TIME))
    ]
    filtered = top(seeded, group_by="host", instance="db1")
    assert [(g["value"], g["count"]) for g in filtered["groups"]] == [("web1", 105)]


def test_unknown_group_by_is_a_400_that_lists_the_choices(seeded: TestClient) -> None:
    body = get(seeded, "/queries", expect=400, group_by="table", **TWO_HOURS)
    assert body["detail"] == (
        "Unknown group_by 'table'; use one of: query, schema, user, host, instance, tag:KEY "
        "or label:KEY."
    )


OWN_CASES = parse_yaml(
    (Path(__file__).parents[1] / "analysis" / "data" / "own_statements.yaml").read_text()
)


def test_quantas_own_statements_are_left_out_unless_asked(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    # The statements of quanta.analysis.own's cases, as the slow log would hold them: the
    # store's LIKE patterns must agree with the pure function on every one.
    events = [
        event(i, 1.0, case["fingerprint"].replace("?", "1")) for i, case in enumerate(OWN_CASES)
    ]
    post(client, "own", "db1", events)
    with session_scope(session_factory) as session:
        [batch_pk] = session.scalars(select(IngestBatch.id))
        ingest.process_batch(session=session, settings=SETTINGS, batch_pk=batch_pk)
    fingerprints = {
        row["fingerprint"]: row for row in top(client, limit=100, include_own=True)["rows"]
    }
    assert len(fingerprints) == len(OWN_CASES)
    shown = {row["fingerprint"] for row in top(client, limit=100)["rows"]}
    assert shown == {f for f in fingerprints if not is_own(f)}
    assert len(shown) == sum(not case["own"] for case in OWN_CASES)
    assert top(client)["totals"]["count"] == len(shown)
    # One query asked for by id is shown, own or not.
    explain = next(f for f in fingerprints if f.startswith("explain "))
    detail = get(client, f"/queries/{fingerprints[explain]['query_id']}", **TWO_HOURS)
    assert detail["count"] == 1


def test_statements_only_the_monitoring_account_ran_are_left_out(
    client: TestClient, session_factory: sessionmaker[Session]
) -> None:
    with session_scope(session_factory) as session:
        session.add(
            Instance(
                name="db1", dsn_encrypted=encrypt(SETTINGS, "mysql://quanta_mon:pw@127.0.0.1:1/")
            )
        )
    monitor_only = "SELECT name FROM shop.settings WHERE id = {}"  # a probe of the monitor
    both = "SELECT price FROM shop.items WHERE id = {}"  # the monitor and the application
    events = [
        event(1, 0.5, monitor_only.format(1), user="quanta_mon"),
        event(2, 0.5, both.format(2), user="quanta_mon"),
        event(3, 0.5, both.format(3), user="app"),
        event(4, 0.5, SQL_A.format(4), user="app"),
    ]
    post(client, "runners", "db1", events)
    with session_scope(session_factory) as session:
        [batch_pk] = session.scalars(select(IngestBatch.id))
        ingest.process_batch(session=session, settings=SETTINGS, batch_pk=batch_pk)
    assert sorted(ids(top(client))) == sorted([query_id(both), QID_A])
    assert len(ids(top(client, include_own="true"))) == 3
