"""Per-class digest statistics: exact values on a known log, and merging parts."""

from __future__ import annotations

import io
import math
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quanta.analysis import slowlog as slowlog_module
from quanta.analysis.digest import Digest
from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.histogram import LatencyHistogram
from quanta.analysis.slowlog import ParseStats, SlowLogEvent, read_slow_log
from tests.analysis.test_slowlog import SECONDS, flavour_entries
from tests.fixtures.servers import native_unavailable

START = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


def entry(sql: str, seconds: float, at: datetime, *, db: str | None = None, extra: str = "") -> str:
    """One MySQL 8 slow-log entry; `use` only when ``db`` is given, as the server writes it."""
    use = f"use {db};\n" if db else ""
    return (
        f"# Time: {at.strftime('%Y-%m-%dT%H:%M:%S.%fZ')}\n"
        f"# User@Host: app[app] @ web{int(seconds * 1000) % 2} [10.0.0.1]  Id: 7\n"
        f"# Query_time: {seconds:.6f}  Lock_time: 0.000010 Rows_sent: 2  Rows_examined: 5\n"
        f"{extra}{use}SET timestamp={int(at.timestamp())};\n{sql};\n"
    )


def digest_of(events: list[SlowLogEvent]) -> Digest:
    fingerprinter = Fingerprinter()
    digest = Digest()
    for event in events:
        digest.add(event, *fingerprinter(event.query))
    return digest


def parse(text: str) -> list[SlowLogEvent]:
    return list(read_slow_log(io.BytesIO(text.encode())))


def exact_quantile(values: list[float], q: float) -> float:
    return sorted(values)[math.floor(q * (len(values) - 1))]


def test_statistics_of_one_class() -> None:
    times = [0.001 * (n + 1) for n in range(100)]
    log = entry("SELECT * FROM orders WHERE id = 0", times[0], START, db="shop")
    for n, seconds in enumerate(times[1:], 1):
        log += entry(f"SELECT * FROM orders WHERE id = {n}", seconds, START + timedelta(seconds=n))
    log += entry("UPDATE orders SET a = 1", 0.5, START + timedelta(hours=1), db="crm")
    log += entry("UPDATE orders SET a = 2", 0.5, START, extra="# Bytes_sent: 10  Full_scan: Yes\n")
    digest = digest_of(parse(log))

    select, update = digest.ranked()  # 5.05 s of response time, then 1 s
    assert (select.fingerprint, select.count) == ("select * from orders where id=?", 100)
    assert math.isclose(select.query_time.sum, sum(times))
    assert (select.query_time.min, select.query_time.max) == (0.001, 0.1)
    for q in (0.5, 0.95, 0.99):
        estimate = select.query_time_histogram.quantile(q)
        exact = exact_quantile(times, q)
        assert estimate is not None
        assert abs(estimate - exact) <= exact * LatencyHistogram.RELATIVE_ACCURACY + 1e-12
    assert select.rows_sent.sum == 200
    assert select.rows_examined.sum == 500
    assert select.rows_affected.count == 0  # not in this log: unknown, not 0
    assert dict(select.databases) == {"shop": 100}  # 'use shop' carries over
    assert dict(select.hosts) == {"web0": 50, "web1": 50}
    assert (select.first_seen, select.last_seen) == (START, START + timedelta(seconds=99))
    assert select.example is not None
    assert (select.example.query, select.example.query_time) == (
        "SELECT * FROM orders WHERE id = 99",
        0.1,
    )

    assert update.count == 2
    assert dict(update.databases) == {"crm": 2}
    assert update.example is not None
    assert update.example.query == "UPDATE orders SET a = 1"
    assert update.attributes["Bytes_sent"].sum == 10
    assert update.attributes["Full_scan"].sum == 1  # Yes counts as 1
    assert "Thread_id" not in update.attributes  # an identifier, not a measurement

    assert digest.events == 102
    assert math.isclose(digest.query_time.sum, sum(times) + 1.0)
    assert (digest.ts_min, digest.ts_max) == (START, START + timedelta(hours=1))


def test_merged_parts_equal_the_whole() -> None:
    rng = random.Random(7)
    shapes = ["SELECT a FROM t WHERE id = {}", "DELETE FROM q WHERE x < {}", "SELECT {}"]
    log = "".join(
        entry(
            rng.choice(shapes).format(rng.randint(1, 99)),
            rng.expovariate(50),
            START + timedelta(seconds=n),
            db=rng.choice(["a", "b"]),
        )
        for n in range(600)
    )
    events = parse(log)
    whole = digest_of(events)
    merged = Digest()
    for start in range(0, 600, 200):
        merged.merge(digest_of(events[start : start + 200]))

    assert merged.events == whole.events == 600
    for a, b in zip(merged.ranked(), whole.ranked(), strict=True):
        assert (a.query_id, a.count, a.databases, a.users, a.hosts) == (
            b.query_id, b.count, b.databases, b.users, b.hosts,
        )  # fmt: skip
        assert a.query_time_histogram == b.query_time_histogram
        assert math.isclose(a.query_time.sum, b.query_time.sum)
        assert (a.query_time.min, a.query_time.max) == (b.query_time.min, b.query_time.max)
        assert (a.first_seen, a.last_seen, a.example) == (b.first_seen, b.last_seen, b.example)


def test_a_part_learns_its_database_from_the_part_before() -> None:
    events = parse(entry("SELECT 1", 0.1, START) + entry("SELECT 2", 0.2, START))
    digest = Digest()
    for event in events:
        event.db = "\x00inherited"
        digest.add(event, "select ?", "X")
    digest.rename_database("\x00inherited", "shop")
    query_class = digest.classes["X"]
    assert dict(query_class.databases) == {"shop": 2}
    assert query_class.example is not None
    assert query_class.example.database == "shop"


# -- the C reader's sink -------------------------------------------------------------------
# With a sink, read_slow_log hands the usual entries to the digest's columns from C; the
# digest must be the one the events give, whatever mix of usual and unusual entries.

SAMPLE_LOGS = sorted((Path(__file__).parent / "data" / "slowlogs").glob("*.log"))


def digest_by_sink(data: bytes, block_size: int = 1 << 20) -> tuple[Digest, int]:
    digest = Digest()
    fingerprinter = Fingerprinter()
    stats = ParseStats()
    sink = digest.sink(fingerprinter)
    for event in read_slow_log(io.BytesIO(data), stats, block_size=block_size, sink=sink):
        digest.add(event, *fingerprinter(event.query))
    digest.flush()
    return digest, stats.events


def significant(value: float) -> float:
    """``value`` to 12 significant digits: sums of large values (a sum of squares past 2**53)
    differ in their last bits with the summation order."""
    return float(f"{value:.12g}")


def comparable(digest: Digest) -> list[tuple[object, ...]]:
    """Everything a digest reports, sums to 12 significant digits (see significant)."""
    digest.flush()
    out = []
    for c in sorted(digest.classes.values(), key=lambda c: c.query_id):
        metrics = {
            name: (m.count, significant(m.sum), m.min, m.max, significant(m.sum_of_squares))
            for name, m in [
                ("query_time", c.query_time), ("lock_time", c.lock_time),
                ("rows_sent", c.rows_sent), ("rows_examined", c.rows_examined),
                ("rows_affected", c.rows_affected), ("query_length", c.query_length),
                *sorted(c.attributes.items()),
            ]
        }  # fmt: skip
        out.append(
            (c.query_id, c.fingerprint, c.count, metrics, c.query_time_histogram.to_bytes(),
             dict(c.databases), dict(c.users), dict(c.hosts), c.first_seen, c.last_seen,
             c.example)
        )  # fmt: skip
    return out


def test_sink_is_fed_from_c(monkeypatch: pytest.MonkeyPatch) -> None:
    if slowlog_module.PlainReader is None:
        native_unavailable("_slowlog", "the C slow-log reader")
    log = "".join(entry(f"SELECT {n}", 0.01, START, db="shop") for n in range(10)).encode()
    added: list[SlowLogEvent] = []
    monkeypatch.setattr(Digest, "add", lambda self, event, *_: added.append(event))
    digest, events = digest_by_sink(log)
    assert events == 10
    assert added == []  # every entry went to the columns
    (select,) = digest.classes.values()
    assert (select.fingerprint, select.count, dict(select.databases)) == (
        "select ?",
        10,
        {"shop": 10},
    )


@pytest.mark.parametrize("log", SAMPLE_LOGS, ids=[log.stem for log in SAMPLE_LOGS])
def test_sink_gives_the_digest_of_the_events(log: Path) -> None:
    data = log.read_bytes()
    by_sink, events = digest_by_sink(data, block_size=4096)
    by_events = digest_of(list(read_slow_log(io.BytesIO(data))))
    assert comparable(by_sink) == comparable(by_events)
    assert events == by_events.events


MIXED_ENTRIES = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "SELECT * FROM t WHERE id = 1", "select * from t where id=22",
                "SELECT a FROM t /*db.t:1/2*/", "SELECT a FROM t /*x*/", "SELECT 'é' FROM t",
                "INSERT INTO t VALUES (1), (2)", "SELECT `b` FROM t2",
            ]
        ),
        st.sampled_from([0.001, 0.5, 0.5, 2.0]),
        st.sampled_from([None, "shop", "crm"]),
        st.sampled_from(["", "# Bytes_sent: 10  Full_scan: Yes\n", "# Rows_affected: 3\n"]),
    ),
    max_size=30,
)  # fmt: skip


@settings(max_examples=200)
@given(MIXED_ENTRIES, st.sampled_from([64, 4096, 1 << 20]))
def test_sink_gives_the_digest_of_the_events_on_any_mix(
    entries: list[tuple[str, float, str | None, str]], block_size: int
) -> None:
    data = "".join(
        entry(sql, seconds, START + timedelta(seconds=n), db=db, extra=extra)
        for n, (sql, seconds, db, extra) in enumerate(entries)
    ).encode()
    by_sink, _ = digest_by_sink(data, block_size)
    by_events = digest_of(list(read_slow_log(io.BytesIO(data))))
    assert comparable(by_sink) == comparable(by_events)


@settings(max_examples=150)
@given(st.lists(flavour_entries(SECONDS), max_size=10), st.sampled_from([64, 1 << 20]))
def test_sink_gives_the_digest_of_the_events_of_every_flavour(
    entries: list[tuple[str, bool]], block_size: int
) -> None:
    # Percona Server's and MariaDB's attribute lines go to the sink's attribute columns.
    data = "".join(text for text, _ in entries).encode()
    by_sink, _ = digest_by_sink(data, block_size)
    by_events = digest_of(list(read_slow_log(io.BytesIO(data))))
    assert comparable(by_sink) == comparable(by_events)


def test_ptstats_doctests() -> None:
    import doctest

    from quanta.analysis import ptstats

    assert doctest.testmod(ptstats).failed == 0


# pt-query-digest's buckets: the C counter must count as ptstats.bucket_index does, value by
# value, whatever the numbers (times, counts, bucket edges, huge ints, the values it declines).
PT_VALUES = st.one_of(
    st.floats(min_value=0, max_value=1e6, allow_nan=False),
    st.floats(min_value=0, max_value=1e-5),
    st.integers(min_value=0, max_value=10**12),
    st.sampled_from(
        [0, 0.0, 1e-6, 0.999999e-6, 1.05e-6, 2**53 + 1, 10**400, -1, -0.5, 1e308,
         float("inf"), *(1e-6 * 1.05**k for k in range(0, 1000, 7))]
    ),
)  # fmt: skip


@settings(max_examples=300)
@given(st.lists(PT_VALUES, max_size=60))
def test_pt_buckets_in_c_count_as_bucket_index(values: list[float]) -> None:
    from quanta.analysis import ptstats

    if ptstats._pt_bucket_counts_c is None:
        native_unavailable("_histogram", "the C histogram module")
    # An int is finite however large (math.isfinite would overflow converting 10**400).
    finite = [v for v in values if isinstance(v, int) or math.isfinite(v)]
    by_c, by_python = ptstats.Buckets(), ptstats.Buckets()
    by_c.add_many(finite)
    by_python._add_many_python(finite)
    assert by_c.counts == by_python.counts
    assert sum(by_c.counts.values()) == len(finite)
    # A value the C counter declines leaves the counts to the reference, unchanged until then.
    declined: dict[int, int] = {}
    assert ptstats._pt_bucket_counts_c(declined, [*finite, 10**400]) is False
    assert declined == {}
