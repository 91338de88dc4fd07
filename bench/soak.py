"""Soak: several agents ship at a high rate for minutes; queue lag and memory must stay flat.

Starts a throw-away PostgreSQL and Redis and `quanta run` on them (API, a worker with
``--workers`` pool processes, beat). Then ``--agents`` `quanta-agent run` processes each
tail a slow log of their own that a writer thread appends to at ``--rate`` events/s (the
shapes of a small shop application, fresh literals and timestamps, so nothing is a
duplicate). Every ``--interval`` seconds it samples:

* events/s committed (events of batches marked done, from ``ingest_batches``);
* queue lag: the age of the oldest batch still queued, and how many are queued;
* the RSS of every process: the `quanta run` tree (API, worker and its pool, beat) and the
  agents, from /proc.

After ``--duration`` seconds the writers stop; it waits for the pipeline to drain and checks
that the store counted exactly the events written. Memory is "flat" when no process grew by
more than 20% between the end of the first minute and the end.

Usage: .venv/bin/python bench/soak.py [--duration 180] [--agents 4] [--rate 500]
Last line: ``RESULT events_per_s=X max_lag_s=Y max_rss_mb=Z``.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg
import yaml

from bench.ingest_pipeline import quanta_run
from tests.fixtures.servers import started_postgres, started_redis

VENV_BIN = Path(sys.executable).parent
DURATION = 180.0
AGENTS = 4
RATE = 500.0  # events per second per agent
WORKERS = 2
INTERVAL = 5.0
DRAIN_TIMEOUT = 300.0
WRITE_TICK = 0.1
WARMUP = 60.0  # seconds before the memory baseline (imports, caches, pools fill up)
FLAT_GROWTH = 0.20
MB = 1024 * 1024
SHAPES = (
    "SELECT * FROM orders WHERE id = {n}",
    "SELECT * FROM orders WHERE customer_id = {n} ORDER BY created DESC LIMIT 10",
    "SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id = {n}",
    "UPDATE orders SET status = 'paid' WHERE id = {n}",
    "INSERT INTO order_items (order_id, sku, qty) VALUES ({n}, 'sku-{m}', {k})",
    "SELECT sku, qty FROM stock WHERE sku IN ('a{n}', 'b{m}', 'c{k}')",
    "DELETE FROM carts WHERE session_id = 's{n}'",
    "SELECT COUNT(*) FROM orders WHERE status = 'new' AND created > '2026-01-{k:02d}'",
    "SELECT name, email FROM customers WHERE email = 'user{n}@example.com'",
    "UPDATE stock SET qty = qty - {k} WHERE sku = 'sku-{m}'",
)


class Writer(threading.Thread):
    """Appends slow-log entries to one file at a steady rate, as a busy server does."""

    def __init__(self, path: Path, rate: float, seed: int) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.rate = rate
        self.rng = random.Random(seed)
        self.written = 0
        self.stop = threading.Event()
        path.write_text("/usr/sbin/mariadbd, Version: 11.4.2-MariaDB-log. started with:\n")

    def run(self) -> None:
        started = time.monotonic()
        with self.path.open("a") as log:
            while not self.stop.is_set():
                due = int((time.monotonic() - started) * self.rate) - self.written
                for _ in range(max(0, due)):
                    log.write(self._entry())
                    self.written += 1
                log.flush()
                self.stop.wait(WRITE_TICK)

    def _entry(self) -> str:
        rng = self.rng
        sql = rng.choice(SHAPES).format(
            n=rng.randrange(1_000_000), m=rng.randrange(1000), k=rng.randrange(1, 28)
        )
        now = datetime.now(UTC)
        return (
            f"# Time: {now.strftime('%Y-%m-%dT%H:%M:%S.%fZ')}\n"
            "# User@Host: app[app] @  [10.0.0.7]  Id:    42\n"
            f"# Query_time: {rng.lognormvariate(-6, 1):.6f}  Lock_time: 0.000010 "
            f"Rows_sent: 1  Rows_examined: {rng.randrange(1, 500)}\n"
            f"use shop;\nSET timestamp={int(now.timestamp())};\n{sql};\n"
        )


@dataclass
class Samples:
    """What was measured, per sample."""

    committed: list[tuple[float, int]] = field(default_factory=list)
    lag: list[float] = field(default_factory=list)
    rss: dict[str, list[tuple[float, float]]] = field(default_factory=dict)


def process_tree(pid: int) -> list[int]:
    """``pid`` and all its descendants, from /proc."""
    result, todo = [], [pid]
    while todo:
        current = todo.pop()
        result.append(current)
        with contextlib.suppress(FileNotFoundError):
            for task in Path(f"/proc/{current}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
    return result


def rss_mb(pid: int) -> float | None:
    """Resident set size of one process (psutil when installed, else /proc)."""
    try:
        import psutil

        return float(psutil.Process(pid).memory_info().rss) / MB
    except ImportError:
        pass
    except Exception:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except FileNotFoundError:
        return None
    return None


def label(pid: int) -> str:
    """A readable name for a process: its command line, shortened."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except FileNotFoundError:
        return str(pid)
    words = [Path(a.decode()).name for a in argv if a][:6]
    return f"{pid}:{' '.join(words)}"[:70]


def store_state(conn: psycopg.Connection[tuple[object, ...]]) -> tuple[int, int, float]:
    """(events of processed batches, batches queued, age in s of the oldest queued one)."""
    row = conn.execute(
        "SELECT (SELECT coalesce(sum(event_count), 0) FROM ingest_batches WHERE status = 'done'),"
        " count(*), min(received_at) FROM ingest_batches WHERE status = 'queued'"
    ).fetchone()
    assert row is not None
    done, queued, oldest = int(row[0]), int(row[1]), row[2]  # type: ignore[call-overload]
    age = 0.0
    if isinstance(oldest, datetime):
        age = max(0.0, (datetime.now(UTC).replace(tzinfo=None) - oldest).total_seconds())
    return done, queued, age


def start_agent(base: Path, name: str, url: str, token: str, log: Path) -> subprocess.Popen[bytes]:
    config = {
        "server": url,
        "token": token,
        "spool_dir": str(base / "spool"),
        "batch": {"max_events": 2000, "max_age": 1.0},
        "instances": {
            name: {"sources": ["slowlog"], "slowlog": {"path": str(log), "from_start": True}}
        },
    }
    path = base / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    with (base / f"{name}.log").open("ab") as out:
        return subprocess.Popen(
            [str(VENV_BIN / "quanta-agent"), "run", "--config", str(path)],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip


def sample(
    samples: Samples, conn: psycopg.Connection[tuple[object, ...]], pids: list[int], t: float
) -> str:
    done, queued, age = store_state(conn)
    samples.committed.append((t, done))
    samples.lag.append(age)
    total_rss = 0.0
    for pid in pids:
        rss = rss_mb(pid)
        if rss is not None:
            samples.rss.setdefault(label(pid), []).append((t, rss))
            total_rss += rss
    rate = 0.0
    if len(samples.committed) > 1:
        (t0, n0), (t1, n1) = samples.committed[-2], samples.committed[-1]
        rate = (n1 - n0) / max(t1 - t0, 1e-9)
    return (
        f"t={t:6.1f}s committed={done:>9} rate={rate:8.0f} ev/s queued={queued:>4} "
        f"lag={age:6.2f}s rss_total={total_rss:7.1f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=DURATION, help="seconds of load")
    parser.add_argument("--agents", type=int, default=AGENTS)
    parser.add_argument("--rate", type=float, default=RATE, help="events/s per agent")
    parser.add_argument("--workers", type=int, default=WORKERS, help="worker pool processes")
    parser.add_argument("--interval", type=float, default=INTERVAL, help="seconds per sample")
    args = parser.parse_args()

    with contextlib.ExitStack() as stack:
        base = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="quanta-soak-")))
        postgres = stack.enter_context(started_postgres())
        redis = stack.enter_context(started_redis())
        url = postgres.create_database("soak")
        server, token, run_pid = stack.enter_context(
            quanta_run(base / "data", url, redis.url, args.workers)
        )
        conn = stack.enter_context(
            psycopg.connect(url.replace("postgresql+psycopg", "postgresql"), autocommit=True)
        )
        writers = [Writer(base / f"slow-{n}.log", args.rate, seed=n) for n in range(args.agents)]
        agents = [
            start_agent(base, f"agent{n}", server, token, w.path) for n, w in enumerate(writers)
        ]
        stack.callback(_stop_agents, agents)
        print(f"soak: {args.agents} agents x {args.rate:.0f} ev/s for {args.duration:.0f} s, "
              f"{args.workers} worker processes, PostgreSQL + Redis", flush=True)  # fmt: skip
        for writer in writers:
            writer.start()
        samples = Samples()
        started = time.monotonic()
        pids = [*process_tree(run_pid), *(a.pid for a in agents)]
        while (elapsed := time.monotonic() - started) < args.duration:
            print(sample(samples, conn, pids, elapsed), flush=True)
            time.sleep(args.interval)
        for writer in writers:
            writer.stop.set()
            writer.join()
        written = sum(w.written for w in writers)
        load_seconds = time.monotonic() - started
        deadline = time.monotonic() + DRAIN_TIMEOUT
        while store_state(conn)[0] < written and time.monotonic() < deadline:
            print(sample(samples, conn, pids, time.monotonic() - started) + " (draining)")
            time.sleep(args.interval)
        done, queued, _age = store_state(conn)
        drained = time.monotonic() - started
        report(samples, written, done, queued, load_seconds, drained)


def _stop_agents(agents: list[subprocess.Popen[bytes]]) -> None:
    for agent in agents:
        agent.terminate()
    for agent in agents:
        try:
            agent.wait(30)
        except subprocess.TimeoutExpired:
            agent.kill()


def report(
    samples: Samples, written: int, done: int, queued: int, load_s: float, drained_s: float
) -> None:
    print(f"\nwritten {written} events in {load_s:.0f} s; counted {done} "
          f"({'exact' if done == written else 'MISMATCH'}); {queued} batches still queued; "
          f"drained {drained_s - load_s:.1f} s after the load stopped")  # fmt: skip
    rates = [
        (n1 - n0) / (t1 - t0)
        for (t0, n0), (t1, n1) in zip(samples.committed, samples.committed[1:], strict=False)
        if t1 > t0
    ]
    steady = sorted(rates[1:]) or [0.0]
    print(f"committed rate: median {steady[len(steady) // 2]:.0f} ev/s, min {steady[0]:.0f}, "
          f"max {steady[-1]:.0f}")  # fmt: skip
    max_rss = 0.0
    grew = []
    print(f"{'process':<72} {'first':>7} {'@1min':>7} {'last':>7} {'max':>7} MB")
    for name, series in sorted(samples.rss.items()):
        values = [v for _t, v in series]
        baseline = next((v for t, v in series if t >= WARMUP), values[0])
        max_rss = max(max_rss, *values)
        print(f"{name:<72} {values[0]:7.1f} {baseline:7.1f} {values[-1]:7.1f} {max(values):7.1f}")
        if values[-1] > baseline * (1 + FLAT_GROWTH):
            grew.append(name)
    print("memory: " + ("flat" if not grew else "GREW in " + ", ".join(grew)))
    events_per_s = done / load_s if load_s else 0.0
    max_lag = max(samples.lag, default=0.0)
    print(
        f"RESULT events_per_s={events_per_s:.0f} max_lag_s={max_lag:.1f} max_rss_mb={max_rss:.0f}"
    )


if __name__ == "__main__":
    main()
