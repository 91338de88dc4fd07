"""How many database servers one Quanta install serves: N simulated agents against the real
server, N raised until ingest lag stops being bounded.

Starts a throw-away PostgreSQL and Redis and `quanta run` on them (API, a worker with
``--workers`` pool processes, beat), as bench/ingest_pipeline.py does. Each simulated agent
stands for database servers running ``--rate`` statements a second of a realistic workload
(bench/_slowlog_corpus.py: ~235 statement shapes, Zipf-like popularity, six kinds of
clients). One minute of that stream (rate x 60 statements) is folded once by the real agent
code (:class:`quanta_agent.batcher.MinuteBatcher`, as ``quanta-agent run`` does) and then
shipped once a minute per server, re-dated to that server's minute, with its own batch id.
In ``--mode events`` the same minute is shipped as ``run`` ships it with ``batch.wire:
events`` (as earlier agents did): event batches of 5000 statements (what ``max_age``, 5 s,
cuts at 1,000 statements a second), twelve a minute.

Time is compressed: a minute lasts ``--minute-seconds`` of real time, so one simulated
agent sends what ``60 / minute_seconds`` servers send; ``servers`` in the results counts
those servers. Each level runs ``--minutes`` minutes; its lag is, per batch, the time from
the POST until the worker committed it (``processed_at``: from then on reads count it). The
levels are ``--levels`` (servers: 100, 250, 500, 750, 1000), in turn, until one is not
bounded: its p95 lag over ``--lag-bound`` seconds (120), the batches of its last minutes
waiting longer than those of its first (a backlog building up), beat's roll-up of the
level's minutes into hours, days and totals not done within the bound past its grace
(``QUANTA_ROLLUP_GRACE_SECONDS``) after the level's last batch, or the server's CPU for the
level more than this machine's cores can give over the time it sent for (``cores_needed``:
a level lasts a few real minutes, so a server short of CPU can still work its backlog off
within the lag bound). The last bounded level is the result.

Server CPU (API, worker pool, beat, PostgreSQL, from /proc) is counted until the level's
roll-up is done, so ``cpu_per_bucket_us`` includes it. A level's minutes are dated in an
hour that has ended (six hours ago, one hour later each level): the roll-up takes an
instance's hour ``QUANTA_ROLLUP_GRACE_SECONDS`` after its last batch arrived, up to 500
writes a round, so each hour row is written about once a level, as a real hour is once it
ends; a level's day rows are rewritten each level, where a real day row is once an hour for
sixty minutes of data (an upper bound of the roll-up's share).

The machine is shared and this process (folding aside, it only gzips and POSTs) runs on the
same two cores as the server: the load average is printed before the run and per level.

Usage: .venv/bin/python bench/capacity.py [--quick] [--mode buckets|events] [--rate R]
[--levels 100,250,500]
Last line: ``RESULT servers=N statements_per_s=S lag_p95_s=L cpu_per_bucket_us=C``.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
import psycopg

from bench._slowlog_corpus import cached_slow_log
from bench.ingest_pipeline import quanta_run, server_cpu
from quanta.analysis.slowlog import SlowLogEvent, parse_slow_log
from quanta.analysis.tags import DEFAULT_TAG_KEYS
from quanta.core.config import Settings
from quanta_agent.batcher import MINUTE_MAX_BYTES, MinuteBatcher
from quanta_agent.checkpoint import Checkpoint, FileIdentity
from quanta_agent.config import BatchSettings
from quanta_agent.events import wire_event
from quanta_agent.payload import to_json
from quanta_agent.policy import MAX_QUERY_LENGTH, ExamplePolicy
from quanta_agent.tailer import SlowLogBatch, SlowLogEntry
from tests.fixtures.servers import started_postgres, started_redis

RATE = 1000
SEED = 42
WORKERS = 2
EVENTS_PER_BATCH = 5000
# The minute every template is folded in; re-dated per send by replacing its text.
TEMPLATE_MINUTE = datetime(2001, 2, 3, 4, 5, tzinfo=UTC)
TEMPLATE_PREFIX = TEMPLATE_MINUTE.isoformat()[:16]  # "2001-02-03T04:05"
PLACEHOLDER_ID = "B" * 32
LAG_BOUND_SECONDS = 120.0
LEVELS = (100, 250, 500, 750, 1000)  # servers
GZIP_LEVEL = 1  # the agent's
SENDERS = 16


@dataclass
class Template:
    """One server's minute on the wire: JSON bodies with a placeholder minute and id."""

    bodies: list[str]
    buckets: int  # per minute
    statements: int  # per minute


@dataclass
class Level:
    """What one level of load gave."""

    agents: int
    servers: int
    lags: list[float] = field(default_factory=list)
    early: list[float] = field(default_factory=list)
    late: list[float] = field(default_factory=list)
    rollup_seconds: float = 0.0  # from the level's last batch until its roll-up was done
    cpu_seconds: float = 0.0
    cpu_parts: dict[str, float] = field(default_factory=dict)
    buckets: int = 0
    statements: int = 0
    refused: int = 0

    @property
    def rollup_lag(self) -> float:
        """How long the roll-up of the level's minutes took past its grace (what
        quanta_store_rollup_lag_seconds shows)."""
        return max(0.0, self.rollup_seconds - Settings().rollup_grace_seconds)

    @property
    def p95(self) -> float:
        """The 95th percentile of the lags, in seconds."""
        return _p95(self.lags)

    def cores_needed(self, seconds: float) -> float:
        """The server's CPU (roll-up included) per second of a level that sent for
        ``seconds``: the cores it takes to keep up with this load for good."""
        return self.cpu_seconds / seconds

    def bounded(self, bound: float, seconds: float) -> bool:
        """Whether the server kept up: p95 lag under the bound, no backlog growing, the
        roll-up done within the bound, and the CPU the level took fits in this machine's
        cores over the ``seconds`` it sent for. A level lasts a few real minutes: a server
        short of CPU works its backlog off past the last batch within the lag bound, which
        lag alone counted as kept up (issue 40: 500 servers "bounded" needed 5.9 cores)."""
        if not self.lags or self.refused or self.p95 > bound or self.rollup_lag > bound:
            return False
        if self.cores_needed(seconds) > (os.cpu_count() or 1):
            return False
        return _p95(self.late) <= 2 * _p95(self.early) + 1.0


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) >= 2 else max(values, default=0)


def one_minute(rate: int, seed: int) -> list[SlowLogEvent]:
    """``rate`` x 60 statements of the corpus, dated evenly over TEMPLATE_MINUTE."""
    count = rate * 60
    log = cached_slow_log(count, seed)
    with log.open("rb") as handle:
        events = list(parse_slow_log(handle))
    for n, event in enumerate(events):
        event.ts = TEMPLATE_MINUTE + timedelta(seconds=60 * n / len(events))
    return events


def bucket_template(events: list[SlowLogEvent]) -> Template:
    """The minute folded and encoded by the live agent's own code."""
    bodies: list[bytes] = []
    limits = BatchSettings()  # the agent's defaults: the size bound may cut a minute in parts
    batcher = MinuteBatcher(
        instance="{instance}", policy=ExamplePolicy.FULL, max_length=MAX_QUERY_LENGTH,
        grace=limits.minute_grace, max_statements=limits.max_events,
        max_bytes=MINUTE_MAX_BYTES, spool=lambda _id, body, _n, _c: bodies.append(body),
        save_position=lambda _c: None, tag_keys=frozenset(DEFAULT_TAG_KEYS),
    )  # fmt: skip
    checkpoint = Checkpoint("", FileIdentity(0, 0, 0, ""), 0, time_line=None, db=None, seq=0)
    started = time.process_time()
    for n in range(0, len(events), EVENTS_PER_BATCH):  # as the tailer hands them over
        entries = tuple(SlowLogEntry(event, False) for event in events[n : n + EVENTS_PER_BATCH])
        batcher.take(SlowLogBatch(PLACEHOLDER_ID, entries, checkpoint))
    batcher.flush()
    folded_us = (time.process_time() - started) * 1e6 / len(events)
    contents = [json.loads(gzip.decompress(body)) for body in bodies]
    for content in contents:
        content["batch_id"] = PLACEHOLDER_ID
    buckets = sum(len(content["buckets"]["count"]) for content in contents)
    print(f"agent: folded {len(events):,} statements at {folded_us:.1f} us CPU each into "
          f"{len(contents)} batch(es), {buckets} buckets of "
          f"{max(len(c['queries']) for c in contents)} query classes")  # fmt: skip
    return Template([json.dumps(c) for c in contents], buckets, len(events))


def events_template(events: list[SlowLogEvent]) -> Template:
    """The minute as ``run`` shipped it before: event batches of EVENTS_PER_BATCH."""
    bodies = []
    for n in range(0, len(events), EVENTS_PER_BATCH):
        wire = [
            wire_event(e, policy=ExamplePolicy.FULL, max_length=MAX_QUERY_LENGTH,
                       truncated=False, fallback_ts=TEMPLATE_MINUTE)
            for e in events[n : n + EVENTS_PER_BATCH]
        ]  # fmt: skip
        body = {"batch_id": PLACEHOLDER_ID, "instance": "{instance}", "source": "slowlog"}
        bodies.append(json.dumps({**body, "events": [json.loads(to_json(w)) for w in wire]}))
    return Template(bodies, 0, len(events))


class Fleet:
    """Simulated agents POSTing their minutes on schedule; records when each batch left."""

    def __init__(self, url: str, token: str, template: Template) -> None:
        self._template = template
        self._client = httpx.Client(
            base_url=url, timeout=120,
            headers={"Authorization": f"Bearer {token}", "Content-Encoding": "gzip",
                     "Content-Type": "application/json"},
            limits=httpx.Limits(max_connections=SENDERS),
        )  # fmt: skip
        self.sent: dict[str, float] = {}  # batch id -> wall time of the POST
        self.refused = 0
        self._lock = threading.Lock()

    def send(self, agent: int, minute: int, part: int, level: int) -> None:
        """POST one body of ``agent``'s ``minute``, re-dated and with its own batch id.

        Each level sends into hours of its own (six hours ago, the next hour each level), as
        servers do: a level's minutes do not add to the hours an earlier level rolled up.
        """
        hours_ago = max(1, 6 - level)
        when = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
        prefix = (when - timedelta(hours=hours_ago, minutes=-minute)).isoformat()[:16]
        batch_id = hashlib.sha256(f"{level}-{agent}-{minute}-{part}".encode()).hexdigest()[:32]
        text = self._template.bodies[part].replace(PLACEHOLDER_ID, batch_id)
        text = text.replace("{instance}", f"db{agent:04d}").replace(TEMPLATE_PREFIX, prefix)
        body = gzip.compress(text.encode(), GZIP_LEVEL)
        for attempt in range(20):
            sent = time.time()
            response = self._client.post("/api/v1/ingest", content=body)
            if response.status_code in (200, 202):
                with self._lock:
                    self.sent[batch_id] = sent
                return
            if response.status_code not in (429, 503):
                break
            time.sleep(min(0.5 * 2**attempt, 5))
        with self._lock:
            self.refused += 1
        print(f"refused: {response.status_code} {response.text[:200]}", file=sys.stderr)

    def close(self) -> None:
        """Release the connections."""
        self._client.close()


def run_level(
    fleet: Fleet, agents: int, args: argparse.Namespace, conn: psycopg.Connection[Any],
    quanta_pid: int, pg_datadir: Path, level_no: int,
) -> Level:  # fmt: skip
    """Run ``agents`` agents for ``args.minutes`` minutes; measure lag and server CPU."""
    template = fleet._template
    parts = len(template.bodies)
    level = Level(agents, agents * round(60 / args.minute_seconds))
    fleet.sent.clear()
    fleet.refused = 0
    cpu_before = server_cpu(quanta_pid, pg_datadir)
    start = time.monotonic() + 0.5
    schedule = []
    for minute in range(args.minutes):
        for agent in range(agents):
            for part in range(parts):
                # Batches leave evenly over the minute (event batches, or the parts of a
                # minute cut by the size bound), the last when the minute closes, with a
                # little jitter between agents (grace and clocks differ).
                offset = (part + 1) / parts + (agent / agents) * 0.1
                at = start + (minute + offset) * args.minute_seconds
                schedule.append((at, agent, minute, part))
    schedule.sort()
    minute_of: dict[str, int] = {}
    with ThreadPoolExecutor(SENDERS) as pool:
        for at, agent, minute, part in schedule:
            delay = at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            pool.submit(fleet.send, agent, minute, part, level_no)
            key = hashlib.sha256(f"{level_no}-{agent}-{minute}-{part}".encode()).hexdigest()[:32]
            minute_of[key] = minute
    deadline = time.monotonic() + max(120.0, 4 * args.lag_bound)
    while time.monotonic() < deadline and _pending(conn) > 0:
        time.sleep(0.25)
    last_batch = time.monotonic()
    while time.monotonic() < deadline and _rollup_pending(conn) > 0:
        time.sleep(0.25)
    level.rollup_seconds = time.monotonic() - last_batch
    if _rollup_pending(conn):
        level.rollup_seconds = float("inf")
    cpu_after = server_cpu(quanta_pid, pg_datadir)
    level.cpu_parts = {name: cpu_after[name] - cpu_before[name] for name in cpu_before}
    level.cpu_seconds = sum(level.cpu_parts.values())
    level.refused = fleet.refused + _pending(conn)
    done = dict(
        conn.execute(
            "SELECT batch_id, processed_at FROM ingest_batches WHERE batch_id = ANY(%s) "
            "AND status = 'done'", (list(fleet.sent),),
        ).fetchall()
    )  # fmt: skip
    third = max(1, args.minutes // 3)
    for batch_id, sent in fleet.sent.items():
        processed = done.get(batch_id)
        if processed is None:
            level.refused += 1
            continue
        lag = processed.timestamp() - sent
        level.lags.append(lag)
        minute = minute_of[batch_id]
        if minute < third:
            level.early.append(lag)
        elif minute >= args.minutes - third:
            level.late.append(lag)
    level.buckets = template.buckets * len(done) // parts
    level.statements = template.statements * len(done) // parts
    return level


def _rollup_pending(conn: psycopg.Connection[Any]) -> int:
    """Writes whose minutes beat has not rolled up yet."""
    row = conn.execute("SELECT count(*) FROM rollup_pending").fetchone()
    assert row is not None
    return int(row[0])


def _pending(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT count(*) FROM ingest_batches WHERE status <> 'done'").fetchone()
    assert row is not None
    return int(row[0])


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short levels, coarse steps")
    parser.add_argument("--mode", choices=("buckets", "events"), default="buckets")
    parser.add_argument("--rate", type=int, default=RATE, help="statements/s per server")
    parser.add_argument("--workers", type=int, default=WORKERS)
    parser.add_argument("--minute-seconds", type=float, default=None,
                        help="real seconds a simulated minute lasts")  # fmt: skip
    parser.add_argument("--minutes", type=int, default=None, help="minutes per level")
    parser.add_argument(
        "--levels",
        type=lambda text: [int(n) for n in text.split(",")],
        default=list(LEVELS),
        help="servers at each level, comma-separated (each a multiple of the servers an "
        "agent stands for)",
    )
    parser.add_argument("--lag-bound", type=float, default=LAG_BOUND_SECONDS)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    if args.minute_seconds is None:
        # Events: one agent is already a server's worth of work for the server; buckets:
        # one agent stands for 20 (quick) or 10 servers.
        fast = {"buckets": (3.0, 6.0), "events": (30.0, 60.0)}[args.mode]
        args.minute_seconds = fast[0] if args.quick else fast[1]
    if args.minutes is None:
        args.minutes = (6 if args.quick else 12) if args.mode == "buckets" else 3
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the levels; print one line per level and the RESULT line."""
    args = parse_args(argv)
    # Killed (SIGTERM), exit through the context managers: without them the throw-away
    # PostgreSQL's backends went on with the roll-up, orphaned, on a core for an hour.
    signal.signal(signal.SIGTERM, lambda _signum, _frame: sys.exit(143))
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    events = one_minute(args.rate, args.seed)
    template = bucket_template(events) if args.mode == "buckets" else events_template(events)
    best: Level | None = None
    with (
        tempfile.TemporaryDirectory(prefix="quanta-capacity-") as work,
        started_postgres() as pg,
        started_redis() as redis,
    ):
        database_url = pg.create_database("bench")
        with (
            quanta_run(Path(work) / "data", database_url, redis.url, args.workers) as (
                url, token, quanta_pid,
            ),
            pg.connect("bench") as conn,
        ):  # fmt: skip
            conn.autocommit = True
            fleet = Fleet(url, token, template)
            per_agent = round(60 / args.minute_seconds)
            for level_no, servers in enumerate(args.levels):
                agents = max(1, servers // per_agent)
                level = run_level(fleet, agents, args, conn, quanta_pid, pg.datadir, level_no)
                buckets = max(level.buckets, 1)
                seconds = args.minutes * args.minute_seconds
                ok = level.bounded(args.lag_bound, seconds)
                print(
                    f"agents={agents} servers={level.servers} "
                    f"statements_per_s={level.servers * args.rate} batches={len(level.lags)} "
                    f"lag_p50_s={statistics.median(level.lags or [0]):.2f} "
                    f"lag_p95_s={level.p95:.2f} early_p95={_p95(level.early):.2f} "
                    f"late_p95={_p95(level.late):.2f} refused={level.refused} "
                    f"rollup_done_s={level.rollup_seconds:.1f} rollup_lag_s={level.rollup_lag:.1f} "
                    f"server_cpu_s={level.cpu_seconds:.1f} ("
                    + ",".join(f"{k}={v:.1f}" for k, v in level.cpu_parts.items())
                    + ") "
                    f"cpu_per_bucket_us={level.cpu_seconds * 1e6 / buckets:.0f} "
                    f"cpu_per_statement_us="
                    f"{level.cpu_seconds * 1e6 / max(level.statements, 1):.1f} "
                    f"cores_needed={level.cores_needed(seconds):.2f} "
                    f"load={os.getloadavg()[0]:.2f} {'bounded' if ok else 'NOT bounded'}",
                    flush=True,
                )
                if not ok:
                    break
                best = level
            fleet.close()
    if best is None:
        print("RESULT servers=0 statements_per_s=0 lag_p95_s=nan cpu_per_bucket_us=nan")
        return 1
    # Events mode ships no buckets: its cost is per statement (printed per level).
    cpu = best.cpu_seconds * 1e6 / best.buckets if best.buckets else float("nan")
    print(f"RESULT servers={best.servers} statements_per_s={best.servers * args.rate} "
          f"lag_p95_s={best.p95:.2f} cpu_per_bucket_us={cpu:.0f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
