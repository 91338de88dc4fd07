"""Slow-log parser tests.

Every ``data/slowlogs/NAME.log`` is parsed and compared with ``NAME.expected.json``, the list
of events it must give. To add a case, write the log, then create its expected file with
``python -m tests.analysis.test_slowlog data/slowlogs/NAME.log`` and read it line by line
before committing: the expected file is the specification, not a snapshot.
"""

from __future__ import annotations

import dataclasses
import io
import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from quanta.analysis import slowlog as slowlog_module
from quanta.analysis.slowlog import (
    BAD_QUERY_TIME,
    NO_HEADER,
    NO_QUERY,
    NO_QUERY_TIME,
    RESTARTED,
    ParseStats,
    SlowLogEvent,
    parse_slow_log,
    read_slow_log,
)
from tests.fixtures.servers import native_unavailable

DATA = Path(__file__).parent / "data" / "slowlogs"
LOGS = sorted(DATA.glob("*.log"))


def event_to_json(event: SlowLogEvent) -> dict[str, Any]:
    """Return an event as the plain data stored in the expected files."""
    data = dataclasses.asdict(event)
    data["ts"] = event.ts.isoformat() if event.ts is not None else None
    return data


def parse_file(path: Path, stats: ParseStats | None = None) -> list[dict[str, Any]]:
    with path.open("rb") as lines:
        return [event_to_json(event) for event in parse_slow_log(lines, stats)]


def parse_text(text: str, stats: ParseStats | None = None) -> list[SlowLogEvent]:
    return list(parse_slow_log(text.encode().splitlines(keepends=True), stats))


def test_every_variant_has_a_sample() -> None:
    assert len(LOGS) >= 10
    assert all(log.with_suffix(".expected.json").exists() for log in LOGS)


@pytest.mark.parametrize("log", LOGS, ids=[log.stem for log in LOGS])
def test_slow_log(log: Path) -> None:
    expected = json.loads(log.with_suffix(".expected.json").read_text(encoding="utf-8"))
    assert parse_file(log) == expected


@pytest.mark.parametrize(
    ("name", "skipped"),
    [
        ("restart_banner", [(10, RESTARTED)]),
        ("truncated_header", [(7, NO_QUERY)]),
        ("truncated_query", []),
        ("mysql_8_0_log_slow_extra", []),
    ],
)
def test_skipped_entries_are_reported(name: str, skipped: list[tuple[int, str]]) -> None:
    stats = ParseStats()
    events = parse_file(DATA / f"{name}.log", stats)
    assert stats.skipped == skipped
    assert stats.events == len(events)


def test_malformed_entries_are_skipped_with_their_line_and_reason() -> None:
    text = (
        "SELECT 'orphan, no header';\n"  # 1
        "# Time: 2024-01-01T00:00:00Z\n"  # 2
        "# User@Host: a[a] @ h []\n"  # 3
        "SELECT 'no Query_time';\n"  # 4
        "# User@Host: a[a] @ h []\n"  # 5
        "# Query_time: 1.2.3  Lock_time: 0\n"  # 6
        "SELECT 'bad Query_time';\n"  # 7
        "# User@Host: a[a] @ h []\n"  # 8
        "# Query_time: 0.5  Lock_time: 0\n"  # 9
        "SELECT 'good';\n"  # 10
        "# User@Host: a[a] @ h []\n"  # 11
        "# Query_time: 0.5  Lock_time: 0\n"  # 12
    )
    stats = ParseStats()
    events = parse_text(text, stats)
    assert [e.query for e in events] == ["SELECT 'good'"]
    assert events[0].line == 8
    assert stats.events == 1
    assert stats.skipped == [
        (1, NO_HEADER),
        (2, NO_QUERY_TIME),
        (5, BAD_QUERY_TIME),
        (11, NO_QUERY),
    ]


def test_reads_a_generator_lazily() -> None:
    produced = 0

    def lines() -> Iterator[bytes]:
        nonlocal produced
        for n in range(1_000_000):
            produced += 1
            yield b"# Query_time: 0.1  Lock_time: 0\n"
            yield f"SELECT {n};\n".encode()

    events = parse_slow_log(lines())
    first = next(events)
    second = next(events)
    assert (first.query, second.query) == ("SELECT 0", "SELECT 1")
    assert produced <= 3  # only the lines up to the start of the third entry were read


def test_time_and_database_carry_over_to_later_entries() -> None:
    text = (
        "# Time: 240102  3:04:05\n"
        "# User@Host: a[a] @ h []\n"
        "# Query_time: 1  Lock_time: 0\n"
        "use shop;\n"
        "SELECT 1;\n"
        "# User@Host: b[b] @ h []\n"
        "# Query_time: 2  Lock_time: 0\n"
        "SELECT 2;\n"
        "# User@Host: b[b] @ h []\n"
        "# Query_time: 2  Lock_time: 0\n"
        "SET timestamp=1704164700;\n"
        "SELECT 3;\n"
    )
    first, second, third = parse_text(text)
    assert first.ts == second.ts == datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert third.ts == datetime(2024, 1, 2, 3, 5, tzinfo=UTC)  # SET timestamp wins
    assert first.db == second.db == third.db == "shop"


def test_database_of_a_skipped_entry_carries_over() -> None:
    text = (
        "# Query_time: 1  Lock_time: 0\nuse shop;\nSELECT 1;\n"
        "# Query_time: oops\nuse crm;\nSELECT 2;\n"
        "# Query_time: 1  Lock_time: 0\nSELECT 3;\n"
    )
    first, third = parse_text(text)
    assert (first.db, third.db) == ("shop", "crm")


def test_schema_header_sets_the_database_and_an_empty_one_clears_it() -> None:
    text = (
        "# Thread_id: 1  Schema: shop  QC_hit: No\n"
        "# Query_time: 1  Lock_time: 0\n"
        "SELECT 1;\n"
        "# Thread_id: 2  Schema:   QC_hit: No\n"
        "# Query_time: 1  Lock_time: 0\n"
        "SELECT 2;\n"
    )
    first, second = parse_text(text)
    assert (first.db, second.db) == ("shop", None)
    assert second.attributes == {"Thread_id": 2, "QC_hit": False}


def test_restart_banner_resets_the_carried_database() -> None:
    text = (
        "# Query_time: 1  Lock_time: 0\n"
        "use shop;\n"
        "SELECT 1;\n"
        "/usr/sbin/mysqld, Version: 8.0.36 (MySQL Community Server - GPL). started with:\n"
        "Tcp port: 3306  Unix socket: /var/run/mysqld/mysqld.sock\n"
        "Time                 Id Command    Argument\n"
        "# Query_time: 1  Lock_time: 0\n"
        "SELECT 2;\n"
    )
    first, second = parse_text(text)
    assert (first.query, first.db) == ("SELECT 1", "shop")
    assert (second.query, second.db, second.line) == ("SELECT 2", None, 7)


def test_time_zones() -> None:
    text = (
        "# Time: 2024-03-05T11:15:02.5+01:00\n"
        "# Query_time: 1  Lock_time: 0\n"
        "SELECT 1;\n"
        "# Time: 2024-03-05 10:15:03\n"
        "# Query_time: 1  Lock_time: 0\n"
        "SELECT 2;\n"
        "# Time: not a time\n"
        "# Query_time: 1  Lock_time: 0\n"
        "SELECT 3;\n"
    )
    first, second, third = parse_text(text)
    assert first.ts == datetime(2024, 3, 5, 10, 15, 2, 500000, tzinfo=UTC)
    assert second.ts == datetime(2024, 3, 5, 10, 15, 3, tzinfo=UTC)
    assert third.ts == second.ts  # an unreadable time keeps the last good one


def test_no_time_at_all() -> None:
    (event,) = parse_text("# Query_time: 1  Lock_time: 0\nSELECT 1;\n")
    assert event.ts is None
    assert (event.user, event.host, event.db) == (None, None, None)


def test_user_host_forms() -> None:
    text = (
        "# User@Host: app[app] @ web1 [10.0.0.5]  Id:    42\n"
        "# Query_time: 1  Lock_time: 0\nSELECT 1;\n"
        "# User@Host: app[app] @  [10.0.0.6]\n"
        "# Query_time: 1  Lock_time: 0\nSELECT 2;\n"
        "# User@Host: [SQL_SLAVE] @  []\n"
        "# Query_time: 1  Lock_time: 0\nSELECT 3;\n"
        "# User@Host: garbage\n"
        "# Query_time: 1  Lock_time: 0\nSELECT 4;\n"
    )
    events = parse_text(text)
    assert [(e.user, e.host) for e in events] == [
        ("app", "web1"),
        ("app", "10.0.0.6"),
        ("SQL_SLAVE", None),
        (None, None),
    ]
    assert events[0].attributes == {"ip": "10.0.0.5", "Thread_id": 42}


def test_attribute_types() -> None:
    text = (
        "# Query_time: 2  Lock_time: 0.5 Rows_sent: 1  Rows_examined: 2  Rows_affected: 3\n"
        "# Bytes_sent: 10  Full_scan: Yes  QC_hit: No  InnoDB_IO_r_wait: 0.25\n"
        "# InnoDB_trx_id: 1234  Start: 2024-05-14T08:30:10.606387Z  Odd: -\n"
        "SELECT 1;\n"
    )
    (event,) = parse_text(text)
    assert (event.query_time, event.lock_time) == (2.0, 0.5)
    assert (event.rows_sent, event.rows_examined, event.rows_affected) == (1, 2, 3)
    assert event.attributes == {
        "Bytes_sent": 10,
        "Full_scan": True,
        "QC_hit": False,
        "InnoDB_IO_r_wait": 0.25,
        "InnoDB_trx_id": "1234",
        "Start": "2024-05-14T08:30:10.606387Z",
        "Odd": "-",
    }


def test_bare_use_statement_is_the_statement() -> None:
    # The server logs a USE statement's new database as 'use db;' and writes nothing else.
    text = "# Query_time: 1  Lock_time: 0\nSET timestamp=1;\nuse `crm`;\n"
    (event,) = parse_text(text)
    assert (event.query, event.db) == ("use crm", "crm")


def test_client_statements_that_look_like_meta_lines_stay_statements() -> None:
    text = "# Query_time: 1\nUSE crm;\n# Query_time: 1\nset timestamp=5;\n"
    first, second = parse_text(text)
    assert (first.query, first.db) == ("USE crm", None)
    assert (second.query, second.ts) == ("set timestamp=5", None)


@pytest.mark.parametrize(
    "lines",
    [
        [],
        [b""],
        [b"\n", b"\r\n", b"   \n"],
        [b"\xff\xfe\x00garbage\n"],
        [b"# Time: 9999-99-99T99:99:99Z\n", b"# Query_time: 1\n", b"SELECT 1;\n"],
        [b"# Query_time: 1\n", b"SET timestamp=99999999999999999999;\n", b"SELECT 1;\n"],
        [b"# Query_time: nan\n", b"SELECT 1;\n"],
        [b"# Query_time: -1\n", b"SELECT 1;\n"],
    ],
)
def test_odd_input_does_not_raise(lines: list[bytes]) -> None:
    stats = ParseStats()
    events = list(parse_slow_log(lines, stats))
    assert stats.events == len(events)


@given(st.lists(st.binary(max_size=80), max_size=40))
def test_random_bytes_do_not_raise(lines: list[bytes]) -> None:
    list(parse_slow_log(lines))


LOG_LINES = (
    b"# Time: 2024-01-01T00:00:00Z\n", b"# Time: 071015 21:43:52\n",
    b"# User@Host: a[a] @ h [1.2.3.4]  Id: 5\n", b"# Query_time: 1  Lock_time: 0\n",
    b"# Thread_id: 1  Schema: db  QC_hit: No\n", b"# explain: 1\tSIMPLE\n", b"#\n",
    b"use db;\n", b"SET timestamp=1700000000;\n", b"SELECT 1;\n", b"FROM t\n", b"\n",
    b"# administrator command: Quit;\n", b"Time  Id Command  Argument\n",
    b"/usr/sbin/mysqld, Version: 8.0.36. started with:\n", b"SELECT 'x\xff';\r\n",
)  # fmt: skip


@given(st.lists(st.sampled_from(LOG_LINES), max_size=30))
def test_line_soup_accounts_for_every_entry(lines: list[bytes]) -> None:
    stats = ParseStats()
    events = list(parse_slow_log(lines, stats))
    assert stats.events == len(events)
    assert all(event.query and event.query_time >= 0 for event in events)
    lines_seen = [e.line for e in events] + [line for line, _ in stats.skipped]
    assert len(lines_seen) == len(set(lines_seen))  # no line starts two entries


# --------------------------------------------------------------------------- read_slow_log
# The block reader must give exactly what the line-by-line parser gives, whatever the input
# and wherever the blocks are cut.


def both_ways(data: bytes, block_size: int) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """(events, skipped, final database) from parse_slow_log and from read_slow_log."""
    by_line, by_block = ParseStats(), ParseStats()
    lines = list(parse_slow_log(io.BytesIO(data), by_line))
    blocks = list(read_slow_log(io.BytesIO(data), by_block, block_size=block_size))
    return (
        (lines, by_line.skipped, by_line.events, by_line.database),
        (blocks, by_block.skipped, by_block.events, by_block.database),
    )


@pytest.mark.parametrize("log", LOGS, ids=[log.stem for log in LOGS])
@pytest.mark.parametrize("block_size", [1, 13, 4096, 1 << 20])
def test_block_reader_gives_the_same_events(log: Path, block_size: int) -> None:
    by_line, by_block = both_ways(log.read_bytes(), block_size)
    assert by_block == by_line


# The usual MySQL 8 entry (the block reader's fast path) and every way to get off it.
FAST_PATH_LINES = (
    b"# Time: 2024-01-02T03:04:05.123456Z\n", b"# Time: 2024-01-02T03:04:05.5Z\n",
    b"# Time: 2024-13-02T03:04:05.1Z\n", b"# Time: 2024-01-02T03:04:06Z\n",
    b"# User@Host: app[app] @ web1 [10.0.0.5]  Id:    42\n", b"# User@Host: root[root] @  []\n",
    b"# Query_time: 0.001234  Lock_time: 0.000100 Rows_sent: 1  Rows_examined: 10\n",
    b"# Query_time: 1.5  Lock_time: 0 Rows_sent: 1  Rows_examined: 10  Rows_affected: 2\n",
    b"# Bytes_sent: 123  Tmp_tables: 0\n", b"SET timestamp=1704164645;\n",
    b"SET timestamp=1704164646;\n", b"use shop;\n", b"use `crm`;\n", b";\n", b"  SELECT 2\n",
    b"SELECT * FROM orders WHERE id = 7;\n", b"  AND b = 2;\n", b"\n", b"# explain: x\n",
    b"/usr/sbin/mariadbd, Version: 10.11.6 started with:\n", b"\r\n",
    b"# administrator command: Quit;\n", b"# administrator command:  Ping ; \n",
)  # fmt: skip


@given(
    st.lists(st.sampled_from(LOG_LINES + FAST_PATH_LINES), max_size=40),
    st.sampled_from([1, 7, 64, 1 << 20]),
    st.booleans(),
)
def test_block_reader_agrees_on_any_line_soup(
    lines: list[bytes], block_size: int, cut_last_line_end: bool
) -> None:
    data = b"".join(lines)
    if cut_last_line_end:
        data = data.rstrip(b"\n")
    by_line, by_block = both_ways(data, block_size)
    assert by_block == by_line


TIME_LINES = [line for line in FAST_PATH_LINES if line.startswith(b"# Time")]
USER_HOST_LINES = [line for line in LOG_LINES + FAST_PATH_LINES if b"User@Host" in line]
QUERY_TIME_LINES = [line for line in LOG_LINES + FAST_PATH_LINES if b"Query_time" in line]
META_LINES = [b"use shop;\n", b"use `crm`;\n", b"SET timestamp=1704164645;\n", b"\n"]
BODY_LINES = [b"SELECT 1;\n", b"  SELECT 2\n", b"FROM t\n", b";\n", b"\n", b"-- c\n", b"x;\r\n"]


def optional(lines: list[bytes]) -> st.SearchStrategy[list[bytes]]:
    return st.lists(st.sampled_from(lines), max_size=1)


# Whole entries, mostly well formed, so that the fast path is taken and left in every way.
ENTRIES = st.builds(
    lambda *parts: b"".join(line for part in parts for line in part),
    optional(TIME_LINES),
    optional(USER_HOST_LINES),
    optional([*QUERY_TIME_LINES, b"# Query_time: 2"]),
    st.lists(
        st.sampled_from(
            [
                *(b"# Bytes_sent: 123  Tmp_tables: 0\n", b"# explain: x\n", b"#\n"),
                *(b"# Warnings\n", b"# Warning 1292 Incorrect value: '1a'\n", b"# Note 1 a: b\n"),
            ]
        ),
        max_size=3,
    ),
    st.lists(st.sampled_from(META_LINES), max_size=2),
    st.lists(st.sampled_from(BODY_LINES), min_size=1, max_size=3),
    optional(list(LOG_LINES)),
)


PLAIN_QUERY_TIME = b"# Query_time: 0.001234  Lock_time: 0.000100 Rows_sent: 1  Rows_examined: 10\n"


@settings(max_examples=300)
@given(st.lists(ENTRIES, max_size=12), st.sampled_from([1, 7, 64, 1 << 20]))
@example([PLAIN_QUERY_TIME + b"  SELECT 2\n"], 1)
@example([PLAIN_QUERY_TIME + b";\n", PLAIN_QUERY_TIME + b"use shop;\n;\n"], 1)
@example([PLAIN_QUERY_TIME + b"use shop;\nSET timestamp=1704164645;\nSELECT 1;\n"], 1)
def test_block_reader_agrees_on_entries(entries: list[bytes], block_size: int) -> None:
    by_line, by_block = both_ways(b"".join(entries), block_size)
    assert by_block == by_line


@given(st.binary(max_size=400), st.sampled_from([1, 5, 1 << 20]))
def test_block_reader_agrees_on_random_bytes(data: bytes, block_size: int) -> None:
    by_line, by_block = both_ways(data, block_size)
    assert by_block == by_line


def test_a_time_carried_over_skips_an_impossible_one() -> None:
    log = (
        b"# Time: 2024-01-02T03:04:05.5Z\n"
        b"# Query_time: 1.000000  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 1\n"
        b"SET timestamp=1704164645;\n"
        b"SELECT 1;\n"
        b"# Time: 2024-13-02T03:04:05.7Z\n"
        b"# Query_time: 1.000000  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 1\n"
        b"SELECT 2;\n"
    )
    events = list(read_slow_log(io.BytesIO(log)))
    assert [e.ts for e in events] == [
        datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC),  # SET timestamp is exact to the second
        datetime(2024, 1, 2, 3, 4, 5, 500000, tzinfo=UTC),  # the last valid '# Time:'
    ]


def test_block_reader_starts_with_the_database_it_is_given() -> None:
    log = (
        b"# Query_time: 1.000000  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 1\n"
        b"SELECT 1;\n"
        b"# Query_time: 1.000000  Lock_time: 0.000000 Rows_sent: 1  Rows_examined: 1\n"
        b"use crm;\n"
        b"SELECT 2;\n"
    )
    stats = ParseStats()
    events = list(read_slow_log(io.BytesIO(log), stats, database="shop"))
    assert [(e.query, e.db) for e in events] == [("SELECT 1", "shop"), ("SELECT 2", "crm")]
    assert stats.database == "crm"


def write_expected(log: Path) -> None:
    """Write LOG's .expected.json from the current parser (review it before committing)."""
    expected = json.dumps(parse_file(log), indent=2, ensure_ascii=False) + "\n"
    log.with_suffix(".expected.json").write_text(expected, encoding="utf-8")


if __name__ == "__main__":
    for name in sys.argv[1:]:
        write_expected(Path(name) if Path(name).exists() else Path(__file__).parent / name)


# --------------------------------------------------------------------------- the C reader
# read_slow_log reads entries of the usual shape with quanta.analysis._slowlog when it is built
# (make install builds it), so every comparison above runs it. These check that it is in use,
# and compare it with the Python reader on usual entries with random values.


class CountingReader:
    """Stands in for PlainReader: delegates to it and counts the events it read."""

    events = 0
    real: Any = None

    def __init__(self, *args: Any) -> None:
        self._reader = CountingReader.real(*args)

    def scan(self, *args: Any) -> Any:
        result = self._reader.scan(*args)
        CountingReader.events += len(result[0])
        return result


@pytest.fixture
def counting_reader(monkeypatch: pytest.MonkeyPatch) -> type[CountingReader]:
    if slowlog_module.PlainReader is None:
        native_unavailable("_slowlog", "the C slow-log reader")
    CountingReader.events = 0
    CountingReader.real = slowlog_module.PlainReader
    monkeypatch.setattr(slowlog_module, "PlainReader", CountingReader)
    return CountingReader


def read_python_only(data: bytes, block_size: int) -> tuple[Any, ...]:
    """(events, skipped, count, final database) of read_slow_log without the C reader."""
    original = slowlog_module.PlainReader
    slowlog_module.PlainReader = None
    try:
        stats = ParseStats()
        events = list(read_slow_log(io.BytesIO(data), stats, block_size=block_size))
    finally:
        slowlog_module.PlainReader = original
    return events, stats.skipped, stats.events, stats.database


def test_c_reader_reads_the_usual_entries(counting_reader: type[CountingReader]) -> None:
    entry = (
        "# Time: 2024-01-02T03:04:{s:02d}.{s}Z\n"
        "# User@Host: app[app] @ web1 [10.0.0.5]  Id:    42\n"
        "# Query_time: 0.00{s}  Lock_time: 0.000100 Rows_sent: {s}  Rows_examined: 10\n"
        "use shop;\nSET timestamp=17041646{s:02d};\nSELECT * FROM t WHERE a = {s};\n"
    )
    data = "".join(entry.format(s=s) for s in range(50)).encode()
    by_line, by_block = both_ways(data, 1 << 20)
    assert by_block == by_line
    assert counting_reader.events == 50
    assert by_block[0][7].query == "SELECT * FROM t WHERE a = 7"
    assert by_block[0][7].rows_sent == 7
    assert by_block[0][7].db == "shop"
    assert by_block[0][7].ts == datetime.fromtimestamp(1704164607, UTC)  # SET timestamp


DECIMALS = st.builds(
    "{}.{}".format,
    st.integers(min_value=0, max_value=10**12).map(str),
    st.text("0123456789", min_size=1, max_size=20),
)
PLAIN_ENTRIES = st.builds(
    lambda time, user_host, query_time, lock_time, rows, use, stamp, body: (
        time + user_host
        + f"# Query_time: {query_time}  Lock_time: {lock_time} Rows_sent: {rows}  "
        + f"Rows_examined: {rows}0\n{use}SET timestamp={stamp};\n{body}"
    ),
    st.sampled_from([
        "", "# Time: 2024-01-02T03:04:05.123456Z\n", "# Time: 2024-02-29T23:59:59Z\n",
        "# Time: 2023-02-29T00:00:00Z\n", "# Time: 0000-01-01T00:00:00Z\n",
        "# Time: 2024-01-02T24:00:00Z\n", "# Time: 2024-01-02T03:04:05.1234567Z\n",
        "# Time: 2024-01-02T03:04:05Z \t\n",
    ]),
    st.sampled_from(["", "# User@Host: app[app] @ web1 [10.0.0.5]  Id:    42\n",
                     "# User@Host: éa[éa] @  [::1]\n"]),
    DECIMALS, DECIMALS,
    st.integers(min_value=0, max_value=10**25),
    st.sampled_from(["", "use shop;\n", "use `crm` ;;\n", "use  ;\n", "use 数据;\n"]),
    st.sampled_from(["1704164645", "0", "99999999999999999", "1704164645.5"]),
    st.sampled_from([
        "SELECT 1;\n", "SELECT 'é'\n  FROM t;\n", "SELECT '中' ;  \n", ";\n", "\n",
        "SET timestamp=1;\nSELECT 2;\n", "SELECT 3;\n# comment\n", "x\n, Version: 1\n",
        "# administrator command: Quit;\n", "# administrator command:  Ping \u3000;\t\n",
        "# administrator command: Quit;\nSELECT 4;\n", "# administrator command:\n",
        "# administrator command: Quit;\n\n", "# administrator command: Quit;\n# Foo: 1\n",
    ]),
)  # fmt: skip


@settings(max_examples=300)
@given(st.lists(PLAIN_ENTRIES, max_size=8), st.sampled_from([7, 64, 1 << 20]), st.booleans())
def test_c_reader_reads_usual_entries_as_python_does(
    entries: list[str], block_size: int, cut_last_line_end: bool
) -> None:
    data = "".join(entries).encode()
    if cut_last_line_end:
        data = data.rstrip(b"\n")
    by_line, by_block = both_ways(data, block_size)
    assert by_block == by_line
    assert read_python_only(data, block_size) == by_line


def test_use_line_naming_no_database_keeps_the_database() -> None:
    entry = (
        "# Query_time: 0.1  Lock_time: 0.0 Rows_sent: 0  Rows_examined: 0\n"
        "{}SET timestamp=1;\nSELECT 1;\n"
    )
    data = (entry.format("use shop;\n") + entry.format("use  ;\n")).encode()
    by_line, by_block = both_ways(data, 1 << 20)
    assert by_block == by_line
    assert [event.db for event in by_block[0]] == ["shop", "shop"]
    assert read_python_only(data, 1 << 20) == by_line


# Each flavour's usual entry, as those servers write it (attribute names and layout from
# their documentation and the peer sample logs), with random values: the C reader must read
# every well-formed one itself, and give what the Python readers give on any of them.
def _pairs_line(names: list[str], values: list[str]) -> str:
    return "# " + "  ".join(f"{n}: {v}" for n, v in zip(names, values, strict=False)) + "\n"


VALUES = st.sampled_from(
    ["0", "1", "123456", "0.000100", "12.5", "Yes", "No", "YES", "no", "-3", "1e5", "abc",
     "2024-01-02T03:04:05.123456Z", "0x1F", "1.5.6", "007", "+1", "é"]
)  # fmt: skip
NUMBERS = st.integers(min_value=0, max_value=10**9).map(str)
FLAVOUR_TIMES = st.sampled_from(
    ["", "# Time: 2024-01-02T03:04:05.123456Z\n", "# Time: 240102  3:04:05\n",
     "# Time: 240102 13:04:05.25\n", "# Time: 240230  3:04:05\n", "# Time: 240102 3:04:05 x\n"]
)  # fmt: skip


@st.composite
def flavour_entries(
    draw: st.DrawFn, seconds: st.SearchStrategy[str] = DECIMALS
) -> tuple[str, bool]:
    """(an entry of one flavour, whether it is well formed and usual), its times drawn from
    ``seconds``."""
    flavour = draw(st.sampled_from(["mysql57", "mysql80", "mysql80extra", "percona", "mariadb"]))
    usual = draw(st.booleans())
    value = NUMBERS if usual else VALUES
    qt = f"{draw(seconds)}  Lock_time: {draw(seconds)} Rows_sent: {draw(NUMBERS)}  Rows_examined: {draw(NUMBERS)}"  # noqa: E501
    time = draw(FLAVOUR_TIMES) if not usual else "# Time: 2024-01-02T03:04:05.5Z\n"
    header = ""
    if flavour in ("mysql57", "mysql80"):
        header = f"# Query_time: {qt}\n"
    elif flavour == "mysql80extra":
        names = ["Thread_id", "Errno", "Killed", "Bytes_received", "Bytes_sent", "Read_first"]
        extra = " ".join(f"{n}: {draw(value)}" for n in names)
        header = f"# Query_time: {qt} {extra} Start: 2024-01-02T03:04:05.000001Z End: x\n"
    elif flavour == "percona":
        header = (
            f"# Schema: {draw(st.sampled_from(['shop', 'crm', '']))}  Last_errno: 0  Killed: 0\n"
            f"# Query_time: {qt}  Rows_affected: {draw(NUMBERS)}  Bytes_sent: {draw(value)}\n"
            + _pairs_line(["Tmp_tables", "Tmp_disk_tables", "Tmp_table_sizes"],
                          [draw(value) for _ in range(3)])
            + f"# InnoDB_trx_id: {draw(st.sampled_from(['0', '1A2B', '12']))}\n"
            + _pairs_line(["QC_Hit", "Full_scan", "Full_join", "Tmp_table", "Tmp_table_on_disk"],
                          [draw(st.sampled_from(["Yes", "No"])) for _ in range(5)])
            + _pairs_line(["Filesort", "Filesort_on_disk", "Merge_passes"],
                          ["No", "No", draw(value)])
            + f"#   InnoDB_IO_r_ops: {draw(value)}  InnoDB_IO_r_bytes: 0  InnoDB_IO_r_wait: {draw(seconds)}\n"  # noqa: E501
            + f"#   InnoDB_rec_lock_wait: {draw(value)}  InnoDB_queue_wait: 0.000000\n"
            + "#   InnoDB_pages_distinct: 8\n"
            + draw(st.sampled_from(["", "# No InnoDB statistics available for this query\n",
                                    "# Log_slow_rate_type: query  Log_slow_rate_limit: 10\n"]))
        )  # fmt: skip
    else:
        explain = draw(st.sampled_from([
            "", "#\n# explain: id\tselect_type\ttable\n# explain: 1\tSIMPLE\tt  \n#\n",
        ]))  # fmt: skip
        header = (
            f"# Thread_id: {draw(NUMBERS)}  Schema: {draw(st.sampled_from(['shop', '']))}"
            "  QC_hit: No\n"
            f"# Query_time: {qt}\n"
            f"# Rows_affected: {draw(NUMBERS)}  Bytes_sent: {draw(value)}\n"
            + _pairs_line(["Pages_accessed", "Pages_read", "Pages_prefetched", "Old_rows_read"],
                          [draw(value) for _ in range(4)])
            + f"# Pages_read_time: {draw(seconds)}  Engine_time: {draw(value)}\n"
            + _pairs_line(["Full_scan", "Full_join", "Tmp_table", "Tmp_table_on_disk"],
                          [draw(st.sampled_from(["Yes", "No"])) for _ in range(4)])
            + explain
        )  # fmt: skip
    user_host = "# User@Host: app[app] @ web1 [10.0.0.5]" + (
        "" if flavour == "mariadb" else "  Id:    42"
    )
    use = draw(st.sampled_from(["", "use shop;\n", "use `crm`;\n", "use  ;\n"]))
    admin = "# administrator command: Quit;\n"
    body = draw(st.sampled_from(["SELECT 1;\n", "SELECT a\n  FROM t WHERE b = 'é';\n", admin]))
    return f"{time}{user_host}\n{header}{use}SET timestamp=1704164645;\n{body}", usual


@settings(max_examples=300)
@given(st.lists(flavour_entries(), max_size=8), st.sampled_from([7, 64, 1 << 20]))
def test_c_reader_reads_every_flavour_as_python_does(
    entries: list[tuple[str, bool]], block_size: int
) -> None:
    data = "".join(text for text, _ in entries).encode()
    by_line, by_block = both_ways(data, block_size)
    assert by_block == by_line
    assert read_python_only(data, block_size) == by_line


@settings(
    max_examples=100,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(flavour_entries().filter(lambda entry: entry[1]), min_size=1, max_size=8))
def test_c_reader_reads_the_usual_entry_of_every_flavour(
    counting_reader: type[CountingReader], entries: list[tuple[str, bool]]
) -> None:
    CountingReader.events = 0
    data = "".join(text for text, _ in entries).encode()
    by_line, by_block = both_ways(data, 1 << 20)
    assert by_block == by_line
    assert CountingReader.events == len(entries)


# Times whose sums do not depend on the order they are added in (to 9 places).
SECONDS = st.builds("{}.{:06d}".format, st.integers(0, 100), st.integers(0, 999_999))


# The header lines of every flavour, and near misses, in any order.
FLAVOUR_LINES = (
    b"# Time: 240102  3:04:05\n", b"# Time: 240102 13:04:05.123\n", b"# Time: 240231  3:04:05\n",
    b"# User@Host: app[app] @  [127.0.0.1]\n", b"# Thread_id: 5  Schema: shop  QC_hit: No\n",
    b"# Schema:   QC_hit: No\n", b"# Schema: crm  Last_errno: 0  Killed: 0\n",
    b"# Rows_affected: 3  Bytes_sent: 11\n", b"# Rows_affected: x\n", b"# Foo:bar\n",
    b"# Key: \xc3\xa9\n", b"# Key: a\x0bb\n",
    b"#   InnoDB_IO_r_ops: 0  InnoDB_IO_r_wait: 0.000000\n",
    b"# No InnoDB statistics available for this query\n", b"# InnoDB_trx_id: 1A2B\n",
    b"# Query_time: 0.1  Lock_time: 0.0 Rows_sent: 0  Rows_examined: 0 Thread_id: 8"
    b" Start: 2024-01-02T03:04:05Z\n",
    b"# Query_time: 0.2  Lock_time: 0.0  Rows_sent: 1  Rows_examined: 1  Rows_affected: 0\n",
    b"# Pages_read_time: 5  Engine_time: 0.0247  X_wait: -1\n", b"# Lock_time: 1\n",
    b"# Log_slow_rate_type: query  Log_slow_rate_limit: 10\n",
    b"# Full_scan: Yes  Merge_passes: 1e3\n",
    b"# explain: 1\tSIMPLE\tt\tALL \n", b"#\n", b"# \n", b"#Foo: 1\n", b"# Warnings\n",
    b"use `shop`;\n", b"SET timestamp=1704164645;\n", b"SELECT 1;\n", b"FROM t;\n",
)  # fmt: skip


@settings(max_examples=500)
@given(
    st.lists(st.sampled_from(FLAVOUR_LINES + FAST_PATH_LINES), max_size=40),
    st.sampled_from([7, 64, 1 << 20]),
)
def test_block_reader_agrees_on_any_flavour_line_soup(lines: list[bytes], block_size: int) -> None:
    data = b"".join(lines)
    by_line, by_block = both_ways(data, block_size)
    assert by_block == by_line
    assert read_python_only(data, block_size) == by_line
