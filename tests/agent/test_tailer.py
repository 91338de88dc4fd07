"""The slow-log tailer on real files: entry boundaries, checkpoints, rotations, truncation.

The server is played by the test, writing entries the way mariadbd does (in several
writes) and rotating files the ways logrotate and FLUSH SLOW LOGS do; time is a fake clock.
Every test compares what the tailer handed on with what a one-shot parse of the same
bytes gives: the same events, in order, once each.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from quanta.analysis.slowlog import parse_slow_log
from quanta_agent import tailer as tailer_module
from quanta_agent.checkpoint import Checkpoint
from quanta_agent.config import BatchSettings, InstanceSettings, SlowLogSettings
from quanta_agent.events import wire_event
from quanta_agent.payload import to_json
from quanta_agent.policy import ExamplePolicy
from quanta_agent.tailer import SlowLogBatch, SlowLogTailer

IDLE_GRACE = 1.0
BANNER = (
    b"/usr/sbin/mariadbd, Version: 10.11.6-MariaDB-log (Debian 12). started with:\n"
    b"Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\n"
    b"Time\t\t    Id Command\tArgument\n"
)


def entry(n: int, *, db: str | None = None, time_line: bool = False, query: str = "") -> bytes:
    """One MariaDB slow-log entry for statement number ``n``."""
    text = ""
    if time_line:
        text += f"# Time: 240102  3:{n // 60 % 60:02d}:{n % 60:02d}\n"
    text += (
        f"# User@Host: app[app] @ web1 [10.0.0.5]\n"
        f"# Thread_id: {n}  Schema: {db or ''}  QC_hit: No\n"
        f"# Query_time: 0.{n:06d}  Lock_time: 0.000010  Rows_sent: 1  Rows_examined: {n}\n"
    )
    if db:
        text += f"use {db};\n"
    text += f"SET timestamp={1_704_164_645 + n};\n{query or f'SELECT {n} FROM t'};\n"
    return text.encode()


class FakeSource:
    """The log path as a server would report it; FLUSH re-creates the file with a banner."""

    follows_server = True

    def __init__(self, path: Path) -> None:
        self.path = path
        self.flushes = 0

    def locate(self) -> Path:
        return self.path

    def flush(self) -> None:
        self.flushes += 1
        with self.path.open("ab") as handle:
            handle.write(BANNER)


@dataclass
class Harness:
    """A tailer over ``path`` whose batches are recorded, with a fake clock."""

    path: Path
    max_events: int = 1000
    options: dict[str, Any] = field(default_factory=dict)
    examples: ExamplePolicy = ExamplePolicy.FULL
    batches: list[SlowLogBatch] = field(default_factory=list)
    now: float = 0.0

    def __post_init__(self) -> None:
        self.source = FakeSource(self.path)
        self.tailer = self.new_tailer(None)

    def new_tailer(self, resume_from: Checkpoint | None) -> SlowLogTailer:
        options = {"idle_grace": IDLE_GRACE, "refresh_interval": 1.0, **self.options}
        instance = InstanceSettings(
            name="db1",
            dsn="mysql://u@h/",
            sources=("slowlog",),
            slowlog=SlowLogSettings(**options),
            examples=self.examples,
        )
        self.instance = instance
        return SlowLogTailer(
            instance=instance,
            limits=BatchSettings(max_events=self.max_events, max_age=3600),
            source=self.source,
            sink=self.batches.append,
            resume_from=resume_from,
            clock=lambda: self.now,
        )

    def write(self, data: bytes, path: Path | None = None) -> None:
        with (path or self.path).open("ab") as handle:
            handle.write(data)

    def poll(self, advance: float = 0.0) -> None:
        self.now += advance
        self.tailer.poll()

    def settle(self) -> None:
        """Let the idle grace pass (twice: a file switch reads the new file once) and cut."""
        self.poll()
        self.poll(IDLE_GRACE + 0.1)
        self.poll(IDLE_GRACE + 0.1)
        self.tailer.flush()

    def crash_and_restart(self) -> None:
        """Drop the tailer without flushing; start a new one from the last checkpoint."""
        self.tailer.close()
        self.tailer = self.new_tailer(self.batches[-1].checkpoint if self.batches else None)

    @property
    def events(self) -> list[dict[str, Any]]:
        """The entries handed on, as the next stage (batch.wire: events) sends them."""
        max_length = self.instance.slowlog.max_query_length
        wires = [
            wire_event(
                entry.event,
                policy=self.examples,
                max_length=max_length,
                truncated=entry.truncated,
                fallback_ts=datetime.now(UTC),
            )
            for batch in self.batches
            for entry in batch.entries
        ]
        return [json.loads(to_json(wire)) for wire in wires]

    @property
    def queries(self) -> list[str]:
        return [event["query"] for event in self.events]


def parsed(*chunks: bytes) -> list[tuple[str, str | None]]:
    """(query, db) of each event of the concatenated chunks, parsed in one go."""
    lines = b"".join(chunks).splitlines(keepends=True)
    return [(e.query, e.db) for e in parse_slow_log(lines)]


def shipped(harness: Harness) -> list[tuple[str, str | None]]:
    return [(e["query"], e["db"]) for e in harness.events]


@pytest.fixture
def log_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_an_entry_is_held_until_the_next_header_or_the_idle_grace(log_dir: Path) -> None:
    h = Harness(log_dir / "slow.log", options={"from_start": True})
    first, second = entry(1, db="shop"), entry(2)
    h.write(first + second[:60])  # the second entry is half written
    h.poll()
    h.tailer.flush()
    assert h.queries == []  # the first may still be followed by a statement line
    h.write(second[60:])
    h.poll()
    h.tailer.flush()
    assert h.queries == ["SELECT 1 FROM t"]  # the second's header ended the first
    h.poll(IDLE_GRACE - 0.1)
    h.tailer.flush()
    assert h.queries == ["SELECT 1 FROM t"]
    h.poll(0.2)
    h.tailer.flush()
    assert shipped(h) == parsed(first + second)
    assert shipped(h) == [("SELECT 1 FROM t", "shop"), ("SELECT 2 FROM t", None)]
    assert h.batches[-1].checkpoint.offset == len(first + second)


def test_starts_at_the_end_by_default_and_from_the_start_when_asked(log_dir: Path) -> None:
    path = log_dir / "slow.log"
    path.write_bytes(entry(1) + entry(2))
    h = Harness(path)
    h.poll()
    h.write(entry(3))
    h.settle()
    assert h.queries == ["SELECT 3 FROM t"]
    history = Harness(log_dir / "slow.log", options={"from_start": True})
    history.settle()
    assert history.queries == ["SELECT 1 FROM t", "SELECT 2 FROM t", "SELECT 3 FROM t"]


def test_batches_are_cut_by_count_with_ids_from_the_file_range(log_dir: Path) -> None:
    h = Harness(log_dir / "slow.log", max_events=2, options={"from_start": True})
    h.write(b"".join(entry(n) for n in range(1, 6)))
    h.settle()
    sizes = [len(b.entries) for b in h.batches if b.entries]
    assert sizes == [2, 2, 1]
    again = Harness(log_dir / "slow.log", max_events=2, options={"from_start": True})
    again.settle()
    assert [b.batch_id for b in again.batches] == [b.batch_id for b in h.batches]
    assert len({b.batch_id for b in h.batches if b.entries}) == 3


@pytest.mark.parametrize("seed", range(8))
def test_restarts_at_any_moment_ship_every_entry_once(log_dir: Path, seed: int) -> None:
    rng = random.Random(seed)
    data = b"".join(
        entry(n, db=f"db{n // 7}" if n % 7 == 0 else None, time_line=n % 5 == 0)
        for n in range(1, 120)
    )
    h = Harness(log_dir / "slow.log", max_events=rng.randint(1, 9), options={"from_start": True})
    written = 0
    while written < len(data):
        step = rng.randint(1, 700)
        h.write(data[written : written + step])
        written += step
        h.poll()
        if rng.random() < 0.3:
            h.tailer.flush()
        if rng.random() < 0.1:
            h.crash_and_restart()
    h.settle()
    assert shipped(h) == parsed(data)


def test_a_backlog_is_read_a_slice_per_poll(log_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tailer_module, "MAX_SCAN_BYTES", 1000)
    longer_than_a_slice = "SELECT '" + "y" * 2500 + "'"
    data = b"".join(entry(n) for n in range(1, 20))
    data += entry(20, query=longer_than_a_slice) + entry(21)
    h = Harness(log_dir / "slow.log", max_events=1, options={"from_start": True})
    h.write(data)
    polls = 0
    while h.tailer.position[1] < len(data) and polls < 100:
        h.poll(IDLE_GRACE + 0.1)
        polls += 1
    assert polls >= len(data) // 1000
    assert shipped(h) == parsed(data)


def test_restart_resumes_with_the_database_and_time_of_earlier_entries(log_dir: Path) -> None:
    h = Harness(log_dir / "slow.log", options={"from_start": True})
    h.write(entry(1, db="shop", time_line=True))
    h.settle()
    h.crash_and_restart()
    h.write(b"# User@Host: app[app] @ web1 []\n# Query_time: 0.5  Lock_time: 0.0\nSELECT 2;\n")
    h.settle()
    assert [(e["query"], e["db"], e["ts"]) for e in h.events] == [
        ("SELECT 1 FROM t", "shop", "2024-01-02T03:04:06+00:00"),
        ("SELECT 2", "shop", "2024-01-02T03:00:01+00:00"),  # from the carried '# Time:'
    ]


def test_rotation_by_rename_drains_the_old_file_first(log_dir: Path) -> None:
    path = log_dir / "slow.log"
    h = Harness(path, options={"from_start": True})
    h.write(entry(1) + entry(2))
    h.poll()
    path.rename(log_dir / "slow.log.1")
    h.write(entry(3), log_dir / "slow.log.1")  # the server writes on until it reopens
    h.poll()
    path.touch()  # logrotate's 'create': an empty file the server has not opened yet
    h.poll()
    h.write(entry(4)[:50], log_dir / "slow.log.1")  # a last entry, in two writes
    h.write(entry(4)[50:], log_dir / "slow.log.1")
    h.write(BANNER + entry(5))  # FLUSH SLOW LOGS: the server moved to the new file
    h.poll()
    h.settle()
    assert h.queries == [f"SELECT {n} FROM t" for n in (1, 2, 3, 4, 5)]
    assert h.tailer.position == (path, len(BANNER + entry(5)))


def test_a_file_rotated_away_between_two_polls_is_still_read(log_dir: Path) -> None:
    path = log_dir / "slow.log"
    old = log_dir / "slow.log.0"
    old.write_bytes(BANNER + entry(0))  # rotated before the agent started: not read again
    h = Harness(path, options={"from_start": True})
    h.write(entry(1))
    h.poll()
    for n in (2, 3):  # two rotations (rename + FLUSH SLOW LOGS) before the next poll
        path.rename(log_dir / f"slow.log.{n}")
        h.write(BANNER + entry(n))
    h.write(entry(4))
    h.poll()
    h.settle()
    assert h.queries == [f"SELECT {n} FROM t" for n in (1, 2, 3, 4)]
    assert h.tailer.position == (path, len(BANNER + entry(3) + entry(4)))


def test_deleted_and_recreated_file(log_dir: Path) -> None:
    path = log_dir / "slow.log"
    h = Harness(path, options={"from_start": True})
    h.write(entry(1))
    h.poll()
    with path.open("ab") as still_open:  # the server's descriptor
        path.unlink()
        still_open.write(entry(2))
        still_open.flush()
        h.poll()
        h.write(BANNER + entry(3))
    h.settle()
    assert h.queries == ["SELECT 1 FROM t", "SELECT 2 FROM t", "SELECT 3 FROM t"]


def test_copytruncate_reads_the_truncated_file_from_the_start(log_dir: Path) -> None:
    path = log_dir / "slow.log"
    h = Harness(path, options={"from_start": True})
    h.write(entry(1) + entry(2))
    h.settle()
    shutil.copyfile(path, log_dir / "slow.log.1")
    os.truncate(path, 0)
    h.poll()
    h.write(entry(3))
    h.settle()
    # Truncated and grown past the old size between two looks: told by its first bytes.
    os.truncate(path, 0)
    h.write(entry(4) + entry(5) + entry(6))
    h.settle()
    assert h.queries == [f"SELECT {n} FROM t" for n in (1, 2, 3, 4, 5, 6)]


def test_restart_finds_a_file_rotated_while_the_agent_was_down(log_dir: Path) -> None:
    path = log_dir / "slow.log"
    h = Harness(path, options={"from_start": True})
    h.write(entry(1))
    h.settle()
    h.write(entry(2))
    h.tailer.close()
    path.rename(log_dir / "slow.log.1")
    h.write(BANNER + entry(3))
    h.crash_and_restart()
    h.settle()
    assert h.queries == ["SELECT 1 FROM t", "SELECT 2 FROM t", "SELECT 3 FROM t"]


def test_restart_finds_the_copy_of_a_file_truncated_while_the_agent_was_down(
    log_dir: Path,
) -> None:
    path = log_dir / "slow.log"
    h = Harness(path, options={"from_start": True})
    h.write(b"".join(entry(n) for n in range(1, 30)))  # more than the identity's 4 KB
    h.settle()
    h.write(entry(30))
    h.tailer.close()
    shutil.copyfile(path, log_dir / "slow.log.1")
    os.truncate(path, 0)
    h.write(entry(31))
    h.crash_and_restart()
    h.settle()
    assert h.queries == [f"SELECT {n} FROM t" for n in range(1, 32)]


def test_a_re_created_file_is_not_taken_for_the_checkpointed_one(log_dir: Path) -> None:
    path = log_dir / "slow.log"
    h = Harness(path, options={"from_start": True})
    h.write(BANNER + entry(1) + entry(2))
    h.settle()
    h.tailer.close()
    path.unlink()
    h.write(BANNER + entry(3))  # may reuse the inode: the first bytes differ
    h.crash_and_restart()
    h.settle()
    assert h.queries == ["SELECT 1 FROM t", "SELECT 2 FROM t", "SELECT 3 FROM t"]


def test_agent_rotates_the_log_above_the_configured_size(log_dir: Path) -> None:
    path = log_dir / "slow.log"
    h = Harness(path, options={"from_start": True, "rotate_above_mb": 0.001})  # ~1 KB
    h.write(b"".join(entry(n) for n in range(1, 9)))
    h.poll()
    assert h.source.flushes == 1
    assert (log_dir / "slow.log.old").stat().st_size > 1000
    h.write(entry(9))
    h.settle()
    assert h.queries == [f"SELECT {n} FROM t" for n in range(1, 10)]
    assert h.tailer.position[0] == path


def test_a_changed_log_path_is_followed_from_the_servers_banner(log_dir: Path) -> None:
    old, new = log_dir / "slow.log", log_dir / "other.log"
    new.write_bytes(BANNER + entry(90) + entry(91))  # written long ago, already shipped
    h = Harness(old, options={"from_start": True})
    h.write(entry(1))
    h.poll()
    h.source.path = new  # SET GLOBAL slow_query_log_file = '.../other.log'
    h.write(entry(2))
    h.write(BANNER + entry(3), new)
    h.poll(1.5)
    h.settle()
    assert h.queries == ["SELECT 1 FROM t", "SELECT 2 FROM t", "SELECT 3 FROM t"]


def test_huge_statements_are_cut_and_marked_truncated(log_dir: Path) -> None:
    h = Harness(log_dir / "slow.log", options={"from_start": True, "max_query_length": 1000})
    one_line = "SELECT '" + "x" * 3_000_000 + "'"
    many_lines = "INSERT INTO t VALUES\n" + ",\n".join(f"({n})" for n in range(200_000))
    h.write(entry(1, query=one_line) + entry(2, query=many_lines) + entry(3))
    h.settle()
    first, second, third = h.events
    assert (len(first["query"]), first["truncated"]) == (1000, True)
    assert first["query"].startswith("SELECT 'xxx")
    assert (len(second["query"]), second["truncated"]) == (1000, True)
    assert second["query"].startswith("INSERT INTO t VALUES\n(0),\n(1),")
    assert third["query"] == "SELECT 3 FROM t"
    assert "truncated" not in third


def test_masked_examples_send_the_fingerprint(log_dir: Path) -> None:
    h = Harness(log_dir / "slow.log", options={"from_start": True}, examples=ExamplePolicy.MASKED)
    h.write(entry(1, query="SELECT * FROM users WHERE email = 'a@b.c' AND id IN (1, 2)"))
    h.settle()
    assert h.queries == ["select * from users where email=? and id in(?+)"]
