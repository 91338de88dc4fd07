"""Tags from performance_schema's statement history: a digest delta split into its tagged rows
(measured from the history) and its untagged rest (the delta minus them, clamped at 0), and
how the server stores the rows of one digest."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from quanta.analysis.aggregate import digest_perfschema
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.queries.models import QueryBucketMinute
from quanta.wire import PerfSchemaDigestIn
from quanta_agent.perfschema import (
    Bucket,
    DigestDelta,
    DigestRow,
    HistoryStatement,
    delta_to_wire,
    split_by_tags,
)
from tests.helpers import process_all

T0 = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
T1 = T0 + timedelta(minutes=1)
PS = 10**12  # picoseconds per second
CART = "action=checkout,route=/cart"
BILLING = "service=billing,team=payments"


def delta(counters: dict[str, int], histogram: list[Bucket] | None = None) -> DigestDelta:
    row = DigestRow(
        schema="app",
        digest="d1",
        digest_text="SELECT * FROM `orders` WHERE `customer_id` = ?",
        counters=counters,
        passthrough={"MIN_TIMER_WAIT": 1, "MAX_TIMER_WAIT": 90 * PS},
    )
    return DigestDelta(
        row=row, counters=counters, interval_start=T0, interval_end=T1, histogram=histogram
    )


def stmt(tags: str, wait: int, rows_sent: int = 1, lock: int = 0) -> HistoryStatement:
    return HistoryStatement(
        schema="app",
        digest="d1",
        tags=tags,
        counters={"SUM_TIMER_WAIT": wait, "SUM_ROWS_SENT": rows_sent, "SUM_LOCK_TIME": lock},
    )


def by_tags(rows: list[DigestDelta]) -> dict[str, dict[str, int]]:
    assert len({r.tags for r in rows}) == len(rows), "one row per tags"
    return {r.tags: dict(r.counters) for r in rows}


def test_tag_groups_are_measured_and_the_rest_is_untagged() -> None:
    whole = {
        "COUNT_STAR": 10,
        "SUM_TIMER_WAIT": 100,
        "SUM_ROWS_SENT": 20,
        "SUM_LOCK_TIME": 10,
        "COUNT_SECONDARY": 2,
    }
    history = [
        stmt(CART, 5, lock=1),
        stmt(CART, 7, rows_sent=3, lock=1),
        stmt(CART, 6),
        stmt(BILLING, 20, rows_sent=0),
        stmt(BILLING, 10, rows_sent=2, lock=4),
        stmt("", 9),  # no tags: stays in the rest
    ]
    rows = split_by_tags(delta(whole), history)
    assert by_tags(rows) == {
        "": {
            "COUNT_STAR": 5,
            "SUM_TIMER_WAIT": 52,
            "SUM_ROWS_SENT": 13,
            "SUM_LOCK_TIME": 4,
            "COUNT_SECONDARY": 2,  # the history has no such column: all of it stays here
        },
        CART: {"COUNT_STAR": 3, "SUM_TIMER_WAIT": 18, "SUM_ROWS_SENT": 5, "SUM_LOCK_TIME": 2},
        BILLING: {"COUNT_STAR": 2, "SUM_TIMER_WAIT": 30, "SUM_ROWS_SENT": 2, "SUM_LOCK_TIME": 4},
    }
    # Summed over its rows, the digest counts what the delta counted.
    for name, value in whole.items():
        assert sum(r.counters.get(name, 0) for r in rows) == value
    extremes = {r.tags: r.extremes for r in rows}
    assert extremes == {
        "": None,  # the digest's own (lifetime) extremes, as before
        CART: {"MIN_TIMER_WAIT": 5, "MAX_TIMER_WAIT": 7},
        BILLING: {"MIN_TIMER_WAIT": 10, "MAX_TIMER_WAIT": 20},
    }


def test_no_tagged_statement_leaves_the_delta_as_it_is() -> None:
    whole = delta({"COUNT_STAR": 4, "SUM_TIMER_WAIT": 40})
    assert split_by_tags(whole, []) == [whole]
    assert split_by_tags(whole, [stmt("", 3)]) == [whole]


def test_a_ring_that_lost_rows_leaves_them_untagged() -> None:
    # 100 executions in the interval, 40 of them tagged, but the history ring kept only
    # the last 3 of those: 3 are tagged, never extrapolated; the other 97 are untagged.
    rows = split_by_tags(
        delta({"COUNT_STAR": 100, "SUM_TIMER_WAIT": 1000, "SUM_ROWS_SENT": 100}),
        [stmt(CART, 10)] * 3,
    )
    assert by_tags(rows) == {
        "": {"COUNT_STAR": 97, "SUM_TIMER_WAIT": 970, "SUM_ROWS_SENT": 97},
        CART: {"COUNT_STAR": 3, "SUM_TIMER_WAIT": 30, "SUM_ROWS_SENT": 3},
    }


def test_the_rest_is_clamped_at_zero_and_left_out_when_empty() -> None:
    # The tagged statements measured more than the delta in one counter (a statement that
    # ended on the cut's edge): the rest is 0 there, never negative.
    rows = split_by_tags(
        delta({"COUNT_STAR": 3, "SUM_TIMER_WAIT": 30, "SUM_ROWS_SENT": 2}),
        [stmt(CART, 10, rows_sent=5), stmt(BILLING, 5)],
    )
    assert by_tags(rows) == {
        "": {"COUNT_STAR": 1, "SUM_TIMER_WAIT": 15, "SUM_ROWS_SENT": 0},
        CART: {"COUNT_STAR": 1, "SUM_TIMER_WAIT": 10, "SUM_ROWS_SENT": 5},
        BILLING: {"COUNT_STAR": 1, "SUM_TIMER_WAIT": 5, "SUM_ROWS_SENT": 1},
    }
    # Every statement of the delta tagged: no untagged row at all.
    rows = split_by_tags(
        delta({"COUNT_STAR": 2, "SUM_TIMER_WAIT": 20, "SUM_ROWS_SENT": 2}),
        [stmt(CART, 10), stmt(CART, 12)],
    )
    assert by_tags(rows) == {
        CART: {"COUNT_STAR": 2, "SUM_TIMER_WAIT": 22, "SUM_ROWS_SENT": 2},
    }


def test_histogram_is_split_by_bucketing_the_waits() -> None:
    buckets = [Bucket(0, 10, 3), Bucket(10, 20, 2)]
    rows = split_by_tags(
        delta({"COUNT_STAR": 5, "SUM_TIMER_WAIT": 50}, buckets),
        [stmt(CART, 5), stmt(CART, 15), stmt(BILLING, 10)],
    )
    histograms = {r.tags: r.histogram for r in rows}
    assert histograms == {
        "": [Bucket(0, 10, 2)],
        CART: [Bucket(0, 10, 1), Bucket(10, 20, 1)],
        BILLING: [Bucket(10, 20, 1)],
    }
    # A wait in none of the delta's buckets: neither that row nor the rest has a histogram.
    rows = split_by_tags(delta({"COUNT_STAR": 5, "SUM_TIMER_WAIT": 50}, buckets), [stmt(CART, 25)])
    assert [(r.tags, r.histogram) for r in rows] == [("", None), (CART, None)]


def test_wire_rows_carry_their_tags_and_validate() -> None:
    rows = split_by_tags(
        delta({"COUNT_STAR": 4, "SUM_TIMER_WAIT": 40 * PS}),
        [stmt(CART, 5 * PS), stmt(CART, 7 * PS)],
    )
    wires = [delta_to_wire(r) for r in rows]
    assert "tags" not in wires[0]  # an older server takes the untagged row as ever
    assert wires[0]["max_timer_wait"] == 90.0
    assert (wires[1]["tags"], wires[1]["min_timer_wait"], wires[1]["max_timer_wait"]) == (
        CART,
        5.0,
        7.0,
    )
    parsed = [PerfSchemaDigestIn.model_validate(w) for w in wires]
    assert [(p.tags, p.count_star) for p in parsed] == [("", 2), (CART, 2)]


def wire(tags: str | None, count: int, total: float, low: float, high: float) -> dict[str, object]:
    row: dict[str, object] = {
        "schema_name": "app",
        "digest": "d1",
        "digest_text": "SELECT * FROM `orders` WHERE `customer_id` = ?",
        "interval_start": T0.isoformat(),
        "interval_end": T1.isoformat(),
        "count_star": count,
        "sum_timer_wait": total,
        "min_timer_wait": low,
        "max_timer_wait": high,
    }
    if tags is not None:
        row["tags"] = tags
    return row


def test_the_server_keys_digest_rows_by_tags_and_sums_the_same_key() -> None:
    rows = [
        PerfSchemaDigestIn.model_validate(w)
        for w in (
            wire(None, 5, 5.0, 0.001, 90.0),  # an older agent: no tags field
            wire(CART, 2, 1.0, 0.25, 0.75),
            wire(CART, 1, 0.5, 0.5, 0.5),  # the same key again in the batch: summed
            wire(BILLING, 3, 3.0, 0.5, 2.0),
        )
    ]
    digest = digest_perfschema(rows)
    got = {
        key.tags: (m.count, m.query_time_sum, m.query_time_min, m.query_time_max)
        for key, m in digest.buckets.items()
    }
    assert got == {
        "": (5, 5.0, None, None),  # lifetime extremes are not the interval's
        CART: (3, 1.5, 0.25, 0.75),
        BILLING: (3, 3.0, 0.5, 2.0),
    }
    assert len({key.query_id for key in digest.buckets}) == 1


@pytest.mark.parametrize("tags", ["x" * 501])
def test_tags_past_the_column_width_are_refused(tags: str) -> None:
    with pytest.raises(ValueError, match="at most 500"):
        PerfSchemaDigestIn.model_validate(wire(tags, 1, 1.0, 1.0, 1.0))


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        env="test",
        data_dir=tmp_path / "data",
        database_url=None,
        redis_url=None,
        tag_values_per_key=2,
    )


def test_the_server_keeps_the_configured_keys_and_caps_values_as_for_the_slow_log(
    client: TestClient, session_factory: sessionmaker[Session], settings: Settings
) -> None:
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    rows = []
    for n, tags in enumerate(
        ["request_id=17,route=/a", "route=/b", "route=/c", "team=web", None], start=1
    ):
        row = wire(tags, n, float(n), 0.5, 1.0)
        row["interval_start"] = (now - timedelta(minutes=1)).isoformat()
        row["interval_end"] = now.isoformat()
        rows.append(row)
    response = client.post(
        "/api/v1/ingest",
        json={"batch_id": "ps-tags-1", "instance": "db1", "source": "perfschema", "digests": rows},
    )
    assert response.status_code == 202, response.text
    process_all(session_factory, settings)
    with session_scope(session_factory) as session:
        stored = dict(
            session.execute(select(QueryBucketMinute.tags, QueryBucketMinute.count)).tuples().all()
        )
    # request_id is not a kept key; the third route is past the cap of 2 values per key.
    assert stored == {"route=/a": 1, "route=/b": 2, "route=other": 3, "team=web": 4, "": 5}
