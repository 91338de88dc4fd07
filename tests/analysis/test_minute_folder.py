"""MinuteFolder: the agent's per-minute folding must give what digest_events gives."""

from __future__ import annotations

import io
import math
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quanta.analysis.aggregate import digest_events
from quanta.analysis.buckets import BatchDigest
from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.folder import MinuteFolder
from quanta.analysis.metrics import MAX_COUNTER
from quanta.analysis.slowlog import read_slow_log
from tests.analysis.test_slowlog import SECONDS, flavour_entries

SAMPLE_LOGS = sorted((Path(__file__).parent / "data" / "slowlogs").glob("*.log"))
START = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
FALLBACK = datetime(2024, 1, 1, tzinfo=UTC)


def fold(data: bytes, block_size: int = 1 << 20, seed: int = 0) -> BatchDigest:
    folder = MinuteFolder(Fingerprinter(), random.Random(seed))
    for event in read_slow_log(io.BytesIO(data), block_size=block_size, sink=folder):
        event.ts = event.ts or FALLBACK
        folder.add(event, {})
    return folder.digest()


def by_events(data: bytes) -> BatchDigest:
    """digest_events of the log's events, wrapped counters unknown (as the wire has them)."""
    events = list(read_slow_log(io.BytesIO(data)))
    for event in events:
        event.ts = event.ts or FALLBACK
        if (event.rows_examined or 0) > MAX_COUNTER:
            event.rows_examined = None
    return digest_events(events, Fingerprinter())


def comparable(digest: BatchDigest) -> dict[str, Any]:
    """Everything but the sampled examples (drawn differently), sums to 9 places."""
    return {
        "queries": {
            qid: (seen.fingerprint, seen.first_seen, seen.last_seen)
            for qid, seen in digest.queries.items()
        },
        "buckets": {
            key: (
                m.count, round(m.query_time_sum, 9), m.query_time_min, m.query_time_max,
                m.lock_time_max, m.histogram.to_bytes() if m.histogram else None,
                {name: round(value, 9) for name, value in m.sums.items()},
            )
            for key, m in digest.buckets.items()
        },
        "examples": {
            key: (pick.seen, pick.slowest.query, pick.slowest.ts, pick.slowest.schema)
            for key, pick in digest.examples.items()
        },
    }  # fmt: skip


@pytest.mark.parametrize("log", SAMPLE_LOGS, ids=[log.stem for log in SAMPLE_LOGS])
def test_folder_gives_the_buckets_of_digest_events(log: Path) -> None:
    data = log.read_bytes()
    assert comparable(fold(data, block_size=4096)) == comparable(by_events(data))


def entry(sql: str, seconds: float, at: datetime, user: str, rows: int) -> str:
    return (
        f"# Time: {at.strftime('%Y-%m-%dT%H:%M:%S.%fZ')}\n"
        f"# User@Host: {user}[{user}] @ web1 [10.0.0.1]  Id: 7\n"
        f"# Query_time: {seconds:.6f}  Lock_time: 0.000010 Rows_sent: 2  Rows_examined: {rows}\n"
        f"SET timestamp={int(at.timestamp())};\n{sql};\n"
    )


@settings(max_examples=100)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                [
                    "SELECT 1",
                    "SELECT * FROM t WHERE a = 'x'",
                    "UPDATE t SET a = 2",
                    "SELECT 1 /* team=a */",
                    "SELECT 1 /*team:b,job:x*/",
                    "SELECT '/* team=c */'",
                ]
            ),
            st.sampled_from([0.000001, 0.25, 0.25, 3.0]),
            st.integers(min_value=0, max_value=200),  # seconds from START
            st.sampled_from(["app", "report"]),
            st.sampled_from([5, 10, MAX_COUNTER + 5]),  # a wrapped counter is unknown
        ),
        max_size=40,
    ),
    st.sampled_from([256, 1 << 20]),
)
def test_folder_agrees_with_digest_events_on_any_stream(
    entries: list[tuple[str, float, int, str, int]], block_size: int
) -> None:
    data = "".join(
        entry(sql, seconds, START + timedelta(seconds=offset), user, rows)
        for sql, seconds, offset, user, rows in entries
    ).encode()
    assert comparable(fold(data, block_size)) == comparable(by_events(data))


def test_extended_metrics_are_summed_per_bucket_and_the_folder_starts_over() -> None:
    data = b"".join(
        f"# Time: 2024-03-01T12:00:0{n}Z\n# Query_time: 0.5  Lock_time: 0.0\n"
        f"# Bytes_sent: 10\nSELECT {n};\n".encode()
        for n in range(3)
    )
    folder = MinuteFolder(Fingerprinter(), random.Random(0))
    for event in read_slow_log(io.BytesIO(data), sink=folder):
        folder.add(event, {"bytes_sent": 10, "full_scan": 1}, truncated=event.query == "SELECT 2")
    digest = folder.digest()
    (bucket,) = digest.buckets.values()
    assert (bucket.count, bucket.sums["bytes_sent"], bucket.sums["full_scan"]) == (3, 30, 3)
    assert math.isclose(bucket.query_time_sum, 1.5)
    (pick,) = digest.examples.values()
    assert (pick.seen, pick.slowest.query, pick.slowest.truncated) == (3, "SELECT 0", False)
    assert len(folder) == 0
    assert folder.digest().buckets == {}


def test_sampled_examples_are_drawn_from_every_event_of_the_minute() -> None:
    data = "".join(
        entry(f"SELECT {n}", 0.1, START + timedelta(seconds=n), "app", 1) for n in range(10)
    ).encode()
    sampled = {
        pick.sampled.query
        for seed in range(200)
        for pick in fold(data, seed=seed).examples.values()
    }
    assert sampled == {f"SELECT {n}" for n in range(10)}


def test_a_digest_before_a_minute_keeps_the_later_events_for_the_next() -> None:
    data = "".join(
        entry(f"SELECT {n}", 0.1, START + timedelta(seconds=20 * n), "app", 1) for n in range(9)
    ).encode()  # minutes 12:00, 12:01, 12:02 with three events each
    folder = MinuteFolder(Fingerprinter(), random.Random(0))
    for event in read_slow_log(io.BytesIO(data), sink=folder):
        folder.add(event, {})
    assert folder.latest_minute() == START + timedelta(minutes=2)
    first = folder.digest(before=folder.latest_minute())
    assert sorted(key.start.minute for key in first.buckets) == [0, 1]
    assert len(folder) == 3
    second = folder.digest()
    assert [(key.start.minute, m.count) for key, m in second.buckets.items()] == [(2, 3)]
    assert second.queries[next(iter(second.queries))].first_seen == START + timedelta(minutes=2)
    whole = fold(data)
    assert {**first.buckets, **second.buckets} == whole.buckets


@pytest.mark.parametrize("columnar", [False, True], ids=["events", "attribute columns"])
def test_a_statements_tags_hold_in_every_batch_it_waits_for(columnar: bool) -> None:
    # Each statement its own tags and Bytes_sent; the reader hands the entries over as
    # events, or (given ``extended``) as columns whose attribute dicts are absorbed. The
    # events of minute 2 wait in the folder for the second batch, which brings minute 3's.
    def tagged(n: int) -> str:
        at = START + timedelta(seconds=20 * n)
        return (
            f"# Time: {at.strftime('%Y-%m-%dT%H:%M:%SZ')}\n# Query_time: 0.5  Lock_time: 0.0\n"
            f"# Bytes_sent: {n}\nSELECT {n} /* team=t{n % 3} */;\n"
        )

    def bytes_sent(attributes: dict[str, Any]) -> dict[str, int | float]:
        return {"bytes_sent": attributes["Bytes_sent"]}

    def read(folder: MinuteFolder, numbers: range) -> None:
        data = "".join(map(tagged, numbers)).encode()
        for event in read_slow_log(io.BytesIO(data), sink=folder):
            folder.add(event, {"bytes_sent": event.attributes["Bytes_sent"]})
        folder.absorb()

    def new_folder() -> MinuteFolder:
        return MinuteFolder(
            Fingerprinter(), random.Random(0), extended=bytes_sent if columnar else None
        )

    folder = new_folder()
    read(folder, range(9))
    first = folder.digest(before=folder.latest_minute())
    read(folder, range(9, 12))
    second = folder.digest()
    whole = new_folder()
    read(whole, range(12))
    expected = whole.digest()
    assert {**first.buckets, **second.buckets} == expected.buckets
    sent = {(key.start.minute, key.tags): m.sums["bytes_sent"] for key, m in second.buckets.items()}
    assert sent == {
        (2, "team=t0"): 6, (2, "team=t1"): 7, (2, "team=t2"): 8,
        (3, "team=t0"): 9, (3, "team=t1"): 10, (3, "team=t2"): 11,
    }  # fmt: skip


@settings(max_examples=100)
@given(st.lists(flavour_entries(SECONDS), max_size=10), st.sampled_from([64, 1 << 20]))
def test_folder_gives_the_buckets_of_digest_events_for_every_flavour(
    entries: list[tuple[str, bool]], block_size: int
) -> None:
    # The folder has no attribute columns: the C reader leaves it the entries with
    # attributes (Percona Server's, MariaDB's), which it reads as events.
    data = "".join(text for text, _ in entries).encode()
    assert comparable(fold(data, block_size=block_size)) == comparable(by_events(data))
