"""`quanta-agent run` end to end: a real MariaDB, the agent as a process, a real receiver.

Each scenario runs statements on a MariaDB of its own that logs every statement, does to
the slow log what operators do (logrotate by rename or copytruncate, FLUSH SLOW LOGS,
deleting the file), or to the agent (SIGKILL, SIGTERM), or to the Quanta server (down,
busy), and then checks that the receiver got exactly the entries of the log files: the
same events in the same order, none missing and none twice (a batch sent again keeps its
batch_id and is counted once, as the server does), among them each statement the test
ran, once.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import quanta_agent
from quanta.analysis import native
from tests.agent.harness import (
    AgentProcess,
    Receiver,
    expected_bucket_counts,
    expected_events,
    wait_for,
    write_config,
)
from tests.fixtures.servers import MariaDBServer, OwnMariaDB, free_port, started_mariadb

pytestmark = pytest.mark.services

IDLE_GRACE = 0.3
RESTARTS = 3
# Between a workload's rounds of 10 statements: a few hundred statements a second, which the
# agent, killed and restarted meanwhile, ships in seconds. Unpaced, a round takes ~3 ms and
# the log grows by thousands of entries a second.
WORKLOAD_PAUSE = 0.03


@pytest.fixture
def mariadb() -> Iterator[OwnMariaDB]:
    with started_mariadb() as own:
        yield own


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.down()


class Scenario:
    """One MariaDB, one receiver, one agent configuration; statements run and tracked."""

    def __init__(self, tmp_path: Path, own: OwnMariaDB, receiver: Receiver) -> None:
        self.tmp_path = tmp_path
        self.server: MariaDBServer = own.server
        self.receiver = receiver
        self.slow_log = own.server.slow_log_path
        self.spool_dir = tmp_path / "spool"
        self.executed: list[str] = []
        self.agent: AgentProcess | None = None

    def config(self, **changes: Any) -> dict[str, Any]:
        slowlog = {
            "from_start": True,
            "check_interval": 0.05,
            "idle_grace": IDLE_GRACE,
            "refresh_interval": 3600,
            **changes.pop("slowlog", {}),
        }
        instance = {
            "dsn": f"mysql://root@127.0.0.1:{self.server.port}/",
            "sources": ["slowlog"],
            "slowlog": slowlog,
            **changes.pop("instance", {}),
        }
        return {
            "server": self.receiver.url,
            "token": "tok",
            "spool_dir": str(self.spool_dir),
            "shutdown_timeout": 5,
            # The events wire: these scenarios compare every event, text and order; the
            # bucket wire is checked by statement counts (test_buckets_*).
            "batch": {
                "max_events": 7,
                "max_age": 0.2,
                "wire": "events",
                **changes.pop("batch", {}),
            },
            "instances": {"db1": instance},
            **changes,
        }

    def start_agent(self, **changes: Any) -> AgentProcess:
        path = write_config(self.tmp_path / "agent.yaml", self.config(**changes))
        self.agent = AgentProcess(path, self.tmp_path / "agent.log")
        self.agent.start()
        return self.agent

    def run(self, tag: str, count: int) -> None:
        """Run ``count`` distinct statements tagged ``tag`` on their own connection."""
        with contextlib.closing(self.server.connect("test")) as conn, conn.cursor() as cursor:
            for i in range(count):
                cursor.execute(f"SELECT '{tag}-{i}'")
                self.executed.append(f"SELECT '{tag}-{i}'")

    def sql(self, statement: str) -> None:
        with contextlib.closing(self.server.connect("test")) as conn, conn.cursor() as cursor:
            cursor.execute(statement)

    def received_tagged(self) -> list[str]:
        return [e["query"] for e in self.receiver.events() if e["query"] in self.executed_set]

    @property
    def executed_set(self) -> set[str]:
        return set(self.executed)

    def assert_exactly_once(self, *logs: Path) -> None:
        """The receiver has every entry of ``logs``, in order, once; and each statement run."""
        pair: list[list[dict[str, Any]]] = [[], []]

        def delivered() -> bool:
            pair[:] = [self.receiver.events(), expected_events(*logs)]
            return pair[0] == pair[1]

        wait_for(delivered)
        received, expected = pair
        assert len(received) == len(expected)
        assert received == expected
        assert self.received_tagged() == self.executed
        assert self.receiver.resent_batches_are_identical()

    def close(self) -> None:
        if self.agent is not None:
            self.agent.close()


@pytest.fixture
def scenario(tmp_path: Path, mariadb: OwnMariaDB, receiver: Receiver) -> Iterator[Scenario]:
    case = Scenario(tmp_path, mariadb, receiver)
    yield case
    case.close()


def test_rotation_by_rename(scenario: Scenario) -> None:
    slow, rotated = scenario.slow_log, scenario.slow_log.with_name("slow.log.1")
    scenario.start_agent()
    scenario.run("before", 20)
    assert wait_for(lambda: len(scenario.received_tagged()) == 20)
    slow.rename(rotated)  # logrotate: rename, create, then the postrotate FLUSH
    slow.touch()
    scenario.run("renamed", 15)  # still written to the renamed file
    scenario.sql("FLUSH NO_WRITE_TO_BINLOG SLOW LOGS")
    scenario.run("after", 15)
    scenario.assert_exactly_once(rotated, slow)
    assert scenario.agent is not None
    assert scenario.agent.terminate() == 0
    # The start-up line says which C extensions the agent runs (the same as this process).
    assert f"shipping to {scenario.receiver.url}; {native.summary()}" in scenario.agent.log()


def test_copytruncate(scenario: Scenario) -> None:
    slow, copy = scenario.slow_log, scenario.slow_log.with_name("slow.log.1")
    scenario.start_agent()
    scenario.run("before", 25)
    scenario.assert_exactly_once(slow)
    shutil.copyfile(slow, copy)
    os.truncate(slow, 0)
    scenario.run("after", 25)
    scenario.assert_exactly_once(copy, slow)


def test_flush_slow_logs_and_a_deleted_log(scenario: Scenario) -> None:
    slow = scenario.slow_log
    kept = slow.with_name("deleted-but-kept")  # a second name, to read it afterwards
    scenario.start_agent()
    scenario.run("one", 10)
    assert wait_for(lambda: len(scenario.received_tagged()) == 10)
    scenario.sql("FLUSH NO_WRITE_TO_BINLOG SLOW LOGS")  # reopens the same file
    scenario.run("two", 10)
    os.link(slow, kept)
    slow.unlink()  # gone from its path; the server writes on into it
    scenario.run("three", 10)
    scenario.sql("FLUSH NO_WRITE_TO_BINLOG SLOW LOGS")  # creates a new file
    scenario.run("four", 10)
    scenario.assert_exactly_once(kept, slow)


def test_agent_killed_and_restarted_repeatedly(scenario: Scenario) -> None:
    agent = scenario.start_agent(batch={"max_events": 3, "max_age": 0.05})
    stop = threading.Event()

    def workload() -> None:
        round_ = 0
        while not stop.is_set():
            scenario.run(f"load{round_}", 10)
            round_ += 1
            stop.wait(WORKLOAD_PAUSE)

    worker = threading.Thread(target=workload)
    worker.start()
    rng = random.Random(7)
    try:
        for _ in range(RESTARTS):
            time.sleep(rng.uniform(0.1, 0.6))  # batches are cut every few entries meanwhile
            agent.kill()
            time.sleep(rng.uniform(0.0, 0.3))
            agent.start()
    finally:
        stop.set()
        worker.join()
    assert len(scenario.executed) >= 30
    scenario.assert_exactly_once(scenario.slow_log)
    assert agent.log().count("resuming") == RESTARTS
    assert len(scenario.receiver.posts) >= len(scenario.receiver.unique)


def test_buckets_agent_killed_and_restarted_under_load_with_a_rotation(
    scenario: Scenario,
) -> None:
    """The bucket wire: SIGKILLs under load and a rotation by rename; every statement of the
    logs is counted once in its (query class, minute) bucket, whatever was lost in memory."""
    agent = scenario.start_agent(
        batch={"max_events": 25, "max_age": 0.05, "wire": "buckets", "minute_grace": 0}
    )
    stop = threading.Event()

    def workload() -> None:
        round_ = 0
        while not stop.is_set():
            scenario.run(f"load{round_}", 10)
            round_ += 1
            stop.wait(WORKLOAD_PAUSE)

    slow, rotated = scenario.slow_log, scenario.slow_log.with_name("slow.log.1")
    worker = threading.Thread(target=workload)
    worker.start()
    rng = random.Random(11)
    try:
        for restart in range(RESTARTS):
            time.sleep(rng.uniform(0.2, 0.8))
            agent.kill()
            if restart == 1:  # logrotate while the agent is down
                slow.rename(rotated)
                scenario.sql("FLUSH NO_WRITE_TO_BINLOG SLOW LOGS")
            time.sleep(rng.uniform(0.0, 0.3))
            agent.start()
    finally:
        stop.set()
        worker.join()
    agent.wait_read_to_end(slow)  # SIGTERM stops reading
    assert agent.terminate() == 0  # ships the minute still open
    expected = expected_bucket_counts(rotated, slow)
    assert scenario.receiver.bucket_counts() == expected
    assert sum(expected.values()) >= len(scenario.executed) >= 30
    assert scenario.receiver.resent_batches_are_identical()


def test_server_unreachable_then_busy_then_back(scenario: Scenario) -> None:
    receiver = scenario.receiver
    scenario.start_agent()
    scenario.run("up", 10)
    assert wait_for(lambda: len(scenario.received_tagged()) == 10)
    receiver.down()
    scenario.run("down", 30)
    spool = scenario.spool_dir / "db1"
    assert wait_for(lambda: len(list(spool.glob("*.batch"))) >= 3)
    receiver.up()
    receiver.busy = True  # 503
    scenario.run("busy", 10)
    time.sleep(1.0)
    assert len(scenario.received_tagged()) == 10
    receiver.busy = False
    scenario.assert_exactly_once(scenario.slow_log)
    assert wait_for(lambda: not list(spool.glob("*.batch")))


def test_sigterm_ships_what_was_read_and_saves_the_checkpoint(scenario: Scenario) -> None:
    agent = scenario.start_agent(batch={"max_events": 10_000, "max_age": 3600})
    scenario.run("first", 30)
    time.sleep(IDLE_GRACE * 4)  # read, but no batch is due yet
    assert scenario.receiver.events() == []
    assert agent.terminate() == 0
    expected = expected_events(scenario.slow_log)
    received = scenario.receiver.events()
    assert received == expected[: len(received)]
    assert scenario.received_tagged() == scenario.executed
    scenario.start_agent(batch={"max_events": 10_000, "max_age": 0.2})
    scenario.run("second", 5)
    scenario.assert_exactly_once(scenario.slow_log)


def test_full_spool_drops_the_oldest_batches_and_says_so(scenario: Scenario) -> None:
    receiver = scenario.receiver
    receiver.down()
    agent = scenario.start_agent(spool_max_mb=0.01, batch={"max_events": 5, "max_bytes": 2000})
    scenario.run("flood", 200)
    assert wait_for(lambda: "SPOOL FULL" in agent.log())
    # Every batch spooled (or dropped) before the receiver is back: drops happen only while
    # the first batch waits to be sent, so the newest batches arrive after it, none between.
    agent.wait_read_to_end(scenario.slow_log)
    receiver.up()
    spool = scenario.spool_dir / "db1"
    assert wait_for(lambda: not list(spool.glob("*.batch")))
    assert agent.terminate() == 0
    summary = re.findall(r"dropped (\d+) batches \((\d+) events\)", agent.log())
    dropped_events = int(summary[-1][1])
    received, expected = receiver.events(), expected_events(scenario.slow_log)
    assert dropped_events > 0
    assert len(received) == len(expected) - dropped_events
    # Whole batches were dropped, the oldest ones (except the one being sent at the time).
    head = next(i for i, (a, b) in enumerate(zip(received, expected, strict=False)) if a != b)
    assert received[head:] == expected[len(expected) - (len(received) - head) :]


def test_agent_rotates_the_log_itself(scenario: Scenario) -> None:
    slow, old = scenario.slow_log, scenario.slow_log.with_name("slow.log.old")
    scenario.start_agent(slowlog={"rotate_above_mb": 0.02})
    scenario.run("big", 80)  # about 30 KB of log
    assert wait_for(lambda: old.exists() and slow.exists())
    scenario.assert_exactly_once(old, slow)
    scenario.run("small", 10)
    scenario.assert_exactly_once(old, slow)


def test_a_changed_slow_query_log_file_is_followed(scenario: Scenario) -> None:
    slow, other = scenario.slow_log, scenario.slow_log.with_name("other.log")
    scenario.start_agent(slowlog={"refresh_interval": 1.0, "idle_grace": 0.2})
    scenario.run("first", 10)
    assert wait_for(lambda: len(scenario.received_tagged()) == 10)
    scenario.sql(f"SET GLOBAL slow_query_log_file = '{other}'")
    scenario.run("second", 10)
    scenario.assert_exactly_once(slow, other)


def test_collectors_ship_through_the_same_spool(scenario: Scenario) -> None:
    receiver = scenario.receiver
    scenario.start_agent(instance={"sources": ["slowlog", "perfschema"], "poll_interval": 0.3})
    assert wait_for(lambda: len(receiver.batches("perfschema")) >= 1)  # the baseline is taken
    scenario.run("polled", 12)

    def counted() -> int:
        return sum(
            digest["count_star"]
            for batch in receiver.batches("perfschema")
            for digest in batch["digests"]
            if digest["digest_text"] == "SELECT ? "
        )

    assert wait_for(lambda: counted() >= 12)
    time.sleep(1.0)  # a few more polls: nothing counted twice
    assert counted() == 12
    batches = receiver.batches("perfschema")
    assert {(b["instance"], b["batch_id"][:11]) for b in batches} == {("db1", "perfschema-")}
    assert len({b["batch_id"] for b in batches}) == len(batches)


def test_no_password_leaves_the_host(scenario: Scenario) -> None:
    # MariaDB writes these to its slow log as they were typed, password and all.
    scenario.start_agent()
    scenario.sql("CREATE USER 'quanta_probe'@'localhost' IDENTIFIED BY 'sekret-1'")
    scenario.sql("SET PASSWORD FOR 'quanta_probe'@'localhost' = PASSWORD('sekret-2')")
    scenario.sql("ALTER USER 'quanta_probe'@'localhost' IDENTIFIED BY 'sekret-3'")
    # The server answers before it writes the slow-log entry: wait for the entry.
    assert wait_for(lambda: "sekret-3" in scenario.slow_log.read_text(errors="replace"))

    def shipped() -> list[str]:
        return [e["query"] for e in scenario.receiver.events() if "quanta_probe" in e["query"]]

    assert wait_for(lambda: len(shipped()) == 3)
    assert shipped() == [
        "CREATE USER 'quanta_probe'@'localhost' IDENTIFIED BY '<redacted>'",
        "SET PASSWORD FOR 'quanta_probe'@'localhost' = PASSWORD('<redacted>')",
        "ALTER USER 'quanta_probe'@'localhost' IDENTIFIED BY '<redacted>'",
    ]
    assert "sekret" not in json.dumps(scenario.receiver.posts)
    spooled = b"".join(p.read_bytes() for p in scenario.spool_dir.rglob("*") if p.is_file())
    assert b"sekret" not in spooled


def test_status_reports_and_progress_lines_say_how_each_source_is(scenario: Scenario) -> None:
    receiver = scenario.receiver
    agent = scenario.start_agent(
        status_interval=1,
        progress_log_interval=1,
        instance={
            "sources": ["slowlog", "perfschema"],
            "poll_interval": 0.3,
            "labels": {"environment": "prod"},  # sent with every report (issue 45)
        },
    )
    for source in ("slowlog", "perfschema"):
        assert wait_for(lambda s=source: any(r["read_at"] for r in receiver.reports_of(s)))
    first = next(r for r in receiver.reports_of("slowlog") if r["read_at"])
    assert (first["version"], first["host"]) == (quanta_agent.__version__, socket.gethostname())
    assert (first["interval"], first["read_failing"], first["dropped"]) == (1, False, 0)
    assert first["labels"] == {"environment": "prod"}
    # Nothing reaches the server for a while: batches wait in the spool, and the first
    # reports once it is back say how many, and why.
    receiver.down()
    scenario.run("down", 20)
    spool = scenario.spool_dir / "db1"
    assert wait_for(lambda: len(list(spool.glob("*.batch"))) >= 2)
    seen = len(receiver.reports_of("slowlog"))
    receiver.up()
    assert wait_for(lambda: len(receiver.reports_of("slowlog")) > seen)
    back = receiver.reports_of("slowlog")[seen]
    assert back["last_error"].startswith("sending to the server: "), back
    assert back["last_error_at"] is not None
    # (The collector's own polls keep the slow log growing: the statements run, not the
    # whole log, are what must arrive.)
    assert wait_for(lambda: scenario.received_tagged() == scenario.executed)
    # One progress line per instance at INFO, with what was shipped and the spool.
    assert wait_for(lambda: re.search(r"INFO .*db1: shipped [1-9]\d* batches", agent.log()))
    assert re.search(r"db1: shipped \d+ batches \(\d+ statements/rows\) in the last "
                     r"1 s; spool: \d+ batches", agent.log())  # fmt: skip


def test_a_source_that_cannot_be_read_is_reported_failing_and_old_servers_get_none(
    scenario: Scenario,
) -> None:
    receiver = scenario.receiver
    # The slow log is read from its file; performance_schema needs the server, which the
    # DSN misses (a port nothing listens on).
    instance = {
        "sources": ["slowlog", "perfschema"],
        "poll_interval": 0.3,
        "dsn": f"mysql://root@127.0.0.1:{free_port()}/",
    }
    agent = scenario.start_agent(
        status_interval=1, instance=instance, slowlog={"path": str(scenario.slow_log)}
    )
    assert wait_for(lambda: any(r["read_failing"] for r in receiver.reports_of("perfschema")))
    failing = next(r for r in receiver.reports_of("perfschema") if r["read_failing"])
    assert failing["read_at"] is None
    assert failing["last_error"].startswith("reading perfschema: "), failing
    assert wait_for(lambda: any(r["read_at"] for r in receiver.reports_of("slowlog")))
    assert not any(r["read_failing"] for r in receiver.reports_of("slowlog"))
    agent.terminate()

    # A server older than status reports refuses them (422): the agent says so once and
    # stops sending them; its data batches go on as before.
    receiver.takes_reports = False
    agent = scenario.start_agent(status_interval=1)
    scenario.run("old-server", 5)
    scenario.assert_exactly_once(scenario.slow_log)
    time.sleep(2.5)  # three report intervals
    assert agent.log().count("the server does not take agent status reports") == 1
