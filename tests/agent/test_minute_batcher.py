"""The live agent's minute buckets: the tailer folds per minute, a minute is spooled once it
closes (or at the size bound), and the checkpoint never passes an unspooled statement.

The log is written by the test as mariadbd writes it; wall time is a fake clock. Every test
compares the statements counted in the spooled buckets, per query class and minute, with a
one-shot parse of the same bytes: each statement counted once, whatever the crashes.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from quanta.analysis.fingerprint import fingerprint
from quanta.analysis.slowlog import parse_slow_log
from quanta_agent.batcher import MinuteBatcher
from quanta_agent.checkpoint import Checkpoint
from quanta_agent.config import BatchSettings, InstanceSettings, SlowLogSettings
from quanta_agent.policy import ExamplePolicy
from quanta_agent.tailer import SlowLogTailer
from tests.agent.test_tailer import IDLE_GRACE, FakeSource, entry

# entry(n) is logged at 2024-01-02 03:04:05 + n seconds.
T0 = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC).timestamp()
GRACE = 5.0


class Agent:
    """A folding tailer and its minute batcher over ``path``, spooling into a list."""

    def __init__(
        self,
        path: Path,
        *,
        max_statements: int = 1_000_000,
        tag_keys: frozenset[str] | None = None,
    ) -> None:
        self.path = path
        self.max_statements = max_statements
        self.tag_keys = tag_keys
        self.spooled: list[tuple[dict[str, Any], Checkpoint]] = []
        self.positions: list[Checkpoint] = []
        self.now = 0.0  # monotonic, for the tailer
        self.wall = T0  # wall time, for the minutes
        self.start(None)

    def start(self, resume_from: Checkpoint | None) -> None:
        instance = InstanceSettings(
            name="db1", dsn="mysql://u@h/", sources=("slowlog",),
            slowlog=SlowLogSettings(idle_grace=IDLE_GRACE, refresh_interval=1.0, from_start=True),
        )  # fmt: skip
        self.minutes = MinuteBatcher(
            instance="db1", policy=ExamplePolicy.FULL, max_length=1000, grace=GRACE,
            max_statements=self.max_statements, max_bytes=10**9, spool=self.spool,
            save_position=self.positions.append, wall_clock=lambda: self.wall,
            tag_keys=self.tag_keys,
        )  # fmt: skip
        self.tailer = SlowLogTailer(
            instance=instance, limits=BatchSettings(max_events=7, max_age=IDLE_GRACE),
            source=FakeSource(self.path), sink=self.minutes.take, resume_from=resume_from,
            clock=lambda: self.now, minute_batches=True,
        )  # fmt: skip

    def spool(self, batch_id: str, body: bytes, statements: int, checkpoint: Checkpoint) -> None:
        content = json.loads(gzip.decompress(body))
        assert content["batch_id"] == batch_id
        assert sum(content["buckets"]["count"]) == statements
        self.spooled.append((content, checkpoint))

    def write(self, *numbers: int, query: str = "") -> None:
        with self.path.open("ab") as handle:
            for n in numbers:
                handle.write(entry(n, query=query))

    def poll(self, wall: float) -> None:
        """Let the idle grace pass, read, and look at the clock at wall time ``wall``."""
        self.wall = wall
        for _ in range(3):  # grows, then idle (last entry complete), then due
            self.now += IDLE_GRACE + 0.1
            self.tailer.poll()
        self.minutes.tick()

    def crash_and_restart(self) -> None:
        """Drop everything in memory; start again from the last saved checkpoint."""
        self.tailer.close()
        saved = [c for _, c in self.spooled] + self.positions
        self.start(max(saved, key=lambda c: c.offset) if saved else None)

    def counted(self) -> Counter[tuple[str, str]]:
        """Statements per (fingerprint, minute) in the spooled buckets."""
        totals: Counter[tuple[str, str]] = Counter()
        for content, _ in self.spooled:
            buckets = content["buckets"]
            for query, start, count in zip(
                buckets["query"], buckets["start"], buckets["count"], strict=True
            ):
                totals[content["queries"][query]["fingerprint"], start] += count
        return totals

    def expected(self) -> Counter[tuple[str, str]]:
        """Statements per (fingerprint, minute) of a one-shot parse of the log."""
        with self.path.open("rb") as handle:
            events = list(parse_slow_log(handle))
        return Counter(
            (fingerprint(e.query), e.ts.replace(second=0).isoformat()) for e in events if e.ts
        )


def test_a_minute_is_spooled_once_it_closed_and_its_grace_passed(tmp_path: Path) -> None:
    agent = Agent(tmp_path / "slow.log")
    agent.write(*range(0, 120))  # 03:04:05 to 03:06:04
    agent.poll(T0 + 60)  # 03:05:05: 03:04 ended 5 s ago, its grace has just passed
    assert [sorted(set(c["buckets"]["start"])) for c, _ in agent.spooled] == [
        ["2024-01-02T03:04:00+00:00"]
    ]
    assert sum(agent.spooled[0][0]["buckets"]["count"]) == 55
    agent.poll(T0 + 121)  # 03:06:06: 03:05 closed, its grace passed; 03:06 is open
    assert len(agent.spooled) == 2
    agent.tailer.flush()
    agent.minutes.flush()  # stopping: the open minute goes too
    assert len(agent.spooled) == 3
    assert agent.counted() == agent.expected()
    assert agent.spooled[-1][1].offset == agent.path.stat().st_size


def test_the_checkpoint_never_passes_an_unspooled_statement(tmp_path: Path) -> None:
    agent = Agent(tmp_path / "slow.log")
    agent.write(*range(0, 50))
    agent.poll(T0 + 10)  # read, but 03:04 is open: nothing spooled, nothing checkpointed
    assert agent.spooled == []
    assert all(c.offset == 0 for c in agent.positions)
    assert agent.minutes.statements == 50


def test_crashes_at_any_point_count_each_statement_once(tmp_path: Path) -> None:
    agent = Agent(tmp_path / "slow.log")
    second = 0
    for step in range(8):
        agent.write(*range(second, second + 37))
        second += 37
        agent.poll(T0 + second - 20)
        if step % 3 == 1:
            agent.crash_and_restart()  # what was folded but not spooled is read again
    agent.poll(T0 + second + 120)
    assert agent.counted() == agent.expected()
    assert sum(agent.counted().values()) == second


def test_the_size_bound_ships_partial_buckets_that_add_up(tmp_path: Path) -> None:
    agent = Agent(tmp_path / "slow.log", max_statements=10)
    agent.write(*range(0, 40))
    agent.poll(T0 + 45)  # 03:04 still open, but full every 10 statements
    assert len(agent.spooled) >= 3
    agent.poll(T0 + 200)
    assert agent.counted() == agent.expected()
    minute = "2024-01-02T03:04:00+00:00"
    assert sum(1 for c, _ in agent.spooled if minute in c["buckets"]["start"]) >= 3


def test_late_entries_of_a_closed_minute_go_with_the_next(tmp_path: Path) -> None:
    agent = Agent(tmp_path / "slow.log")
    agent.write(*range(50, 60))  # 03:04:55 to 03:05:04
    agent.write(52, 53)  # logged late: statements of 03:04 after 03:05 began
    agent.poll(T0 + 200)
    assert agent.counted() == agent.expected()
    starts = [sorted(set(c["buckets"]["start"])) for c, _ in agent.spooled]
    assert starts == [
        ["2024-01-02T03:04:00+00:00"],
        ["2024-01-02T03:04:00+00:00", "2024-01-02T03:05:00+00:00"],
    ]


def test_credentials_are_redacted_and_examples_picked(tmp_path: Path) -> None:
    agent = Agent(tmp_path / "slow.log")
    agent.write(1, query="CREATE USER 'u'@'%' IDENTIFIED BY 's3cr3t'")
    agent.write(*range(2, 30))
    agent.poll(T0 + 200)
    content = agent.spooled[0][0]
    assert "s3cr3t" not in json.dumps(content)
    assert any("IDENTIFIED BY" in q["sample"] for q in content["queries"])
    picks = content["picks"]
    assert sorted(p["seen"] for p in picks) == [1, 28]  # slowest and sampled, per bucket
    slowest = next(p for p in picks if p["seen"] == 28)["slowest"]
    assert slowest["query"] == "SELECT 29 FROM t"  # Query_time 0.000029, the largest


def test_a_log_dated_ahead_of_the_agent_is_not_held_back(tmp_path: Path) -> None:
    agent = Agent(tmp_path / "slow.log")
    agent.write(*range(0, 10))
    agent.poll(T0 - 3600)  # the agent's clock an hour behind the log's
    assert agent.spooled == []
    agent.poll(T0 - 3600 + 60 + GRACE)  # held a minute and the grace: shipped anyway
    assert agent.counted() == agent.expected()


def test_statements_are_folded_by_the_kept_tag_keys_only(tmp_path: Path) -> None:
    # sqlcommenter writes a per-request traceparent on every statement: folded by it, each
    # statement is a bucket of its own (issue 40: the capacity bench's minute, 9,465 buckets).
    def tagged(n: int) -> str:
        return f"SELECT {n} /*route='%2Fcart',traceparent='00-{n:032x}-{n:016x}-01'*/"

    buckets: dict[bool, list[tuple[str, int]]] = {}
    for keys in (frozenset({"route", "team"}), None):
        agent = Agent(tmp_path / f"slow-{keys is None}.log", tag_keys=keys)
        for n in range(6):
            agent.write(n, query=tagged(n))
        agent.poll(T0 + 60)
        ((content, _),) = agent.spooled
        folded = content["buckets"]
        buckets[keys is None] = list(zip(folded["tags"], folded["count"], strict=True))
    assert buckets[False] == [("route=/cart", 6)]
    assert len(buckets[True]) == 6
    assert all(tags.startswith("route=/cart,traceparent=00-") for tags, _ in buckets[True])
