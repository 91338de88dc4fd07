"""A flood of query classes: what 200,000 distinct statement shapes from one instance cost.

Any database user can make every statement a new query class (a table, alias or column name
per statement; failed statements are slow-logged too). For each of two stores, this starts
``quanta run`` as ``make run`` does (embedded SQLite store and broker, API, worker, beat) in
a throw-away data directory, creates an ingest token bound to one instance, and POSTs
``--batches`` slow-log batches of ``--events`` events ``SELECT c, d FROM tenant_<n>_orders
WHERE id = <n>`` (a new shape each) plus a few ordinary statements per batch, as the review
of issue 39 did; then it waits until the worker has processed every batch. The two stores,
one after the other on the same input: "uncapped" (QUANTA_MAX_CLASSES_PER_INSTANCE and
QUANTA_MAX_NEW_CLASSES_PER_HOUR out of reach: the store without the caps) and "capped" (the
configured caps, or ``--cap N`` classes). For each it reports:

* how long processing took, the query classes stored and those stored for the instance;
* the store's growth (the SQLite file with its WAL) and the resident memory (RSS) of the API
  and of the worker (its pool processes included), before and after;
* the latency of ``GET /api/v1/queries`` (the overview, default range and sort) and
  ``GET /api/v1/filters``, before and after (median of ``--runs`` after a warm-up call);
* whether the events counted add up to the events sent (the cap folds classes, never counts).

Usage: .venv/bin/python bench/class_flood.py [--batches 10] [--events 20000] [--cap N]
[--capped-only]
Last line: ``RESULT classes=N seconds=S store_growth_mb=G api_rss_mb=A worker_rss_mb=W
queries_ms=Q filters_ms=F totals=equal|DIFFER`` (the capped store), then the same figures
of the uncapped one prefixed ``uncapped_``.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx

from tests.fixtures.servers import free_port

BATCHES = 10
EVENTS = 20_000
RUNS = 5
ORDINARY = (
    "SELECT * FROM shop.orders WHERE id = 42",
    "UPDATE shop.orders SET status = 'paid' WHERE id = 42",
    "SELECT count(*) FROM shop.customers WHERE country = 'FR'",
)
START_TIMEOUT = 120.0
FINISH_TIMEOUT = 3600.0
ADMIN_TOKEN = "qnt_bench_class_flood_admin_token_0000000000"
VENV_BIN = Path(sys.executable).parent
MB = 1024 * 1024


@contextlib.contextmanager
def quanta_run(data_dir: Path, cap: int | None) -> Iterator[tuple[str, int]]:
    """`quanta run` on the embedded SQLite store and broker; yields (URL, pid)."""
    port = free_port()
    env = {
        **os.environ,
        "QUANTA_DATA_DIR": str(data_dir),
        "QUANTA_PORT": str(port),
        "QUANTA_ENV": "test",
        "QUANTA_ADMIN_TOKEN": ADMIN_TOKEN,
        "PYTHONUNBUFFERED": "1",
    }
    for name in ("QUANTA_DATABASE_URL", "QUANTA_REDIS_URL"):
        env.pop(name, None)
    if cap == 0:  # out of reach: the store as it was without the caps
        env["QUANTA_MAX_CLASSES_PER_INSTANCE"] = str(10**9)
        env["QUANTA_MAX_NEW_CLASSES_PER_HOUR"] = str(10**9)
    elif cap is not None:
        env["QUANTA_MAX_CLASSES_PER_INSTANCE"] = str(cap)
    log_path = data_dir.parent / "quanta-run.log"
    with log_path.open("w") as log_file:
        process = subprocess.Popen(
            [str(VENV_BIN / "quanta"), "run"],
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while "Quanta is running" not in log_path.read_text():
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("quanta run did not start:\n" + log_path.read_text()[-4000:])
                time.sleep(0.25)
            yield url, process.pid
        finally:
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def _tree(pid: int) -> list[int]:
    pids, index = [pid], 0
    while index < len(pids):
        for children in Path(f"/proc/{pids[index]}/task").glob("*/children"):
            with contextlib.suppress(FileNotFoundError):
                pids += [int(child) for child in children.read_text().split()]
        index += 1
    return pids


def _rss_mb(pid: int) -> float:
    with contextlib.suppress(FileNotFoundError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def rss_by_role(quanta_pid: int) -> dict[str, float]:
    """RSS (MB) of the API, the worker with its pool, and beat."""
    parts = {"api": 0.0, "worker": 0.0, "beat": 0.0}
    for pid in _tree(quanta_pid)[1:]:
        with contextlib.suppress(FileNotFoundError):
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if b"uvicorn" in argv:
                parts["api"] += _rss_mb(pid)
            elif b"worker" in argv:
                parts["worker"] += _rss_mb(pid)
            elif b"beat" in argv:
                parts["beat"] += _rss_mb(pid)
    return parts


def store_mb(data_dir: Path) -> float:
    return sum(p.stat().st_size for p in data_dir.glob("quanta.db*")) / MB


def latency_ms(client: httpx.Client, path: str, runs: int) -> float:
    """Median wall-clock milliseconds of ``runs`` GETs after one warm-up."""
    client.get(path).raise_for_status()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        client.get(path).raise_for_status()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def batch_body(number: int, events: int, first: int, ts: str) -> bytes:
    rows = [
        {
            "ts": ts,
            "query": f"SELECT c, d FROM tenant_{n}_orders WHERE id = {n}",
            "query_time": 0.001,
            "rows_examined": 1,
            "db": "shop",
            "user": "app",
        }
        for n in range(first, first + events)
    ]
    rows += [
        {"ts": ts, "query": sql, "query_time": 0.002, "rows_examined": 10, "db": "shop"}
        for sql in ORDINARY
    ]
    body = {"batch_id": f"flood-{number}", "instance": "db1", "source": "slowlog", "events": rows}
    return gzip.compress(json.dumps(body).encode(), compresslevel=1)


def measure(client: httpx.Client, data_dir: Path, pid: int, runs: int) -> dict[str, float]:
    rss = rss_by_role(pid)
    return {
        "store_mb": store_mb(data_dir),
        "api_rss_mb": rss["api"],
        "worker_rss_mb": rss["worker"],
        "beat_rss_mb": rss["beat"],
        "queries_ms": latency_ms(client, "/api/v1/queries", runs),
        "filters_ms": latency_ms(client, "/api/v1/filters", runs),
    }


def store_counts(data_dir: Path) -> tuple[int, int, int]:
    """(classes, classes of db1, events in minute buckets), read straight from the file."""
    with contextlib.closing(
        sqlite3.connect(f"file:{data_dir / 'quanta.db'}?mode=ro", uri=True)
    ) as db:
        classes = db.execute("SELECT count(*) FROM query_classes").fetchone()[0]
        of_db1 = db.execute(
            "SELECT count(*) FROM query_instances qi JOIN instances i ON i.id = qi.instance_id "
            "WHERE i.name = 'db1'"
        ).fetchone()[0]
        events = db.execute("SELECT coalesce(sum(count), 0) FROM query_buckets_minute").fetchone()[
            0
        ]
    return int(classes), int(of_db1), int(events)


@dataclass(frozen=True)
class Flood:
    """What one flood did to one store."""

    label: str
    classes: int
    of_db1: int
    counted: int
    sent: int
    seconds: float
    before: dict[str, float]
    after: dict[str, float]

    @property
    def totals(self) -> str:
        return "equal" if self.counted == self.sent else "DIFFER"

    @property
    def store_growth_mb(self) -> float:
        return self.after["store_mb"] - self.before["store_mb"]


def flood(label: str, cap: int | None, args: argparse.Namespace) -> Flood:
    """Start a fresh ``quanta run``, send the batches, measure before and after."""
    with tempfile.TemporaryDirectory(prefix="quanta-flood-") as work:
        data_dir = Path(work) / "data"
        data_dir.mkdir()
        with quanta_run(data_dir, cap) as (url, pid):
            admin = httpx.Client(
                base_url=url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=600
            )
            created = admin.post(
                "/api/v1/tokens", json={"name": "flood", "scopes": ["ingest"], "instances": ["db1"]}
            )
            created.raise_for_status()
            agent = httpx.Client(
                base_url=url,
                headers={
                    "Authorization": f"Bearer {created.json()['token']}",
                    "Content-Encoding": "gzip",
                    "Content-Type": "application/json",
                },
                timeout=600,
            )
            # One batch of ordinary statements first, so "before" has something to show.
            ts = datetime.now(UTC).isoformat()
            _send(agent, batch_body(-1, 0, 0, ts))
            _wait_done(agent, ["flood--1"])
            before = measure(admin, data_dir, pid, args.runs)
            bodies = [batch_body(n, args.events, n * args.events, ts) for n in range(args.batches)]
            started = time.monotonic()
            for body in bodies:
                _send(agent, body)
            _wait_done(agent, [f"flood-{n}" for n in range(args.batches)])
            seconds = time.monotonic() - started
            after = measure(admin, data_dir, pid, args.runs)
            caps = admin.get("/api/v1/class-caps")
            if caps.status_code == 200:  # absent before the caps were built
                print(f"{label}: class caps {json.dumps(caps.json())}")
        classes, of_db1, counted = store_counts(data_dir)
    sent = (args.batches + 1) * len(ORDINARY) + args.batches * args.events
    result = Flood(label, classes, of_db1, counted, sent, seconds, before, after)
    report(result)
    return result


def report(run: Flood) -> None:
    before, after = run.before, run.after
    print(
        f"{run.label}: processed in {run.seconds:.0f} s; classes stored {run.classes:,} "
        f"({run.of_db1:,} for db1); events counted {run.counted:,} of {run.sent:,}"
    )
    print(
        f"{run.label}: store {before['store_mb']:.1f} -> {after['store_mb']:.1f} MB; "
        f"RSS api {before['api_rss_mb']:.0f} -> {after['api_rss_mb']:.0f} MB, "
        f"worker {before['worker_rss_mb']:.0f} -> {after['worker_rss_mb']:.0f} MB, "
        f"beat {before['beat_rss_mb']:.0f} -> {after['beat_rss_mb']:.0f} MB"
    )
    print(f"{run.label}: GET /api/v1/queries {before['queries_ms']:.0f} -> "
          f"{after['queries_ms']:.0f} ms; GET /api/v1/filters {before['filters_ms']:.0f} -> "
          f"{after['filters_ms']:.0f} ms")  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=BATCHES)
    parser.add_argument("--events", type=int, default=EVENTS, help="new classes per batch")
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument(
        "--cap",
        type=int,
        default=None,
        help="QUANTA_MAX_CLASSES_PER_INSTANCE of the capped run (default: as configured)",
    )
    parser.add_argument(
        "--capped-only", action="store_true", help="skip the uncapped run (the slow one)"
    )  # fmt: skip
    args = parser.parse_args(argv)
    print(f"load average: {os.getloadavg()}")
    print(f"{args.batches} batches of {args.events:,} statements of new shapes, one instance")
    uncapped = None if args.capped_only else flood("uncapped", 0, args)
    print(f"load average: {os.getloadavg()}")
    capped = flood("capped", args.cap, args)
    line = (
        f"RESULT classes={capped.classes} seconds={capped.seconds:.0f} "
        f"store_growth_mb={capped.store_growth_mb:.0f} "
        f"api_rss_mb={capped.after['api_rss_mb']:.0f} "
        f"worker_rss_mb={capped.after['worker_rss_mb']:.0f} "
        f"queries_ms={capped.after['queries_ms']:.0f} "
        f"filters_ms={capped.after['filters_ms']:.0f} totals={capped.totals}"
    )
    if uncapped is not None:
        line += (
            f" uncapped_classes={uncapped.classes} uncapped_seconds={uncapped.seconds:.0f} "
            f"uncapped_store_growth_mb={uncapped.store_growth_mb:.0f} "
            f"uncapped_worker_rss_mb={uncapped.after['worker_rss_mb']:.0f} "
            f"uncapped_queries_ms={uncapped.after['queries_ms']:.0f} "
            f"uncapped_filters_ms={uncapped.after['filters_ms']:.0f} "
            f"uncapped_totals={uncapped.totals}"
        )
    print(line)
    return 0


def _send(agent: httpx.Client, body: bytes) -> None:
    """POST a batch as the agent does: again after Retry-After when the store is busy
    (503: SQLite is locked while the worker writes) or the token is rate limited (429)."""
    while True:
        response = agent.post("/api/v1/ingest", content=body)
        if response.status_code not in (429, 503):
            response.raise_for_status()
            return
        time.sleep(float(response.headers.get("Retry-After", "1")))


def _wait_done(agent: httpx.Client, batch_ids: list[str]) -> None:
    deadline = time.monotonic() + FINISH_TIMEOUT
    waiting = list(batch_ids)
    while waiting:
        if time.monotonic() > deadline:
            raise RuntimeError(f"batches not processed in time: {waiting}")
        response = agent.get(f"/api/v1/ingest/{waiting[0]}")
        if response.status_code in (429, 503):  # the store is busy: ask again
            time.sleep(float(response.headers.get("Retry-After", "1")))
            continue
        response.raise_for_status()
        status = response.json()
        if status["status"] == "failed":
            raise RuntimeError(f"batch {waiting[0]} failed: {status['error']}")
        if status["status"] == "done":
            waiting.pop(0)
        else:
            time.sleep(1.0)


if __name__ == "__main__":
    raise SystemExit(main())
