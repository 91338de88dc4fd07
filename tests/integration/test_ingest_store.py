"""The ingest pipeline and metric store through real processes (`quanta run`: API, Celery
worker with two pool processes, beat; `quanta-agent import`): exact counts with duplicate
batches, concurrent workers and a worker SIGKILLed mid-batch, and percentiles over a range
read from minute, hour and day buckets equal to those of the raw events."""

import math
import os
import random
import re
import signal
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select

from quanta.analysis.fingerprint import fingerprint, query_id
from quanta.analysis.histogram import LatencyHistogram
from quanta.analysis.resolution import Resolution
from quanta.core.config import Settings
from quanta.core.db import create_db_engine, create_session_factory, session_scope
from quanta.queries import service as queries
from quanta.queries.models import BUCKET_MODELS, TOTALS_MODELS
from quanta.queries.window import BucketFilter, TimeWindow, read_plan
from tests.fixtures.quanta import QuantaServer, agent_import, quanta_run, wait_until_counted
from tests.fixtures.servers import PostgresServer, RedisServer
from tests.fixtures.slowlogs import LoggedQuery, write_slow_log
from tests.helpers import roll_up_all

pytestmark = pytest.mark.long(seconds=35)

QUANTILES = (0.5, 0.95, 0.99)
TEMPLATES = (
    "SELECT * FROM orders WHERE customer_id = {i}",
    "UPDATE stock SET qty = qty - 1 WHERE sku = 'x{i}'",
    "SELECT name FROM products WHERE sku IN ('a{i}', 'b{i}')",
)
WORKER_LOST = "WorkerLostError"


def spread_log(path: Path, events: int, seed: int) -> tuple[Path, datetime, list[LoggedQuery]]:
    """Events from a whole hour (not a midnight) three days ago up to two minutes ago,
    log-normal latencies."""
    now = datetime.now(UTC)
    start = (now - timedelta(days=3)).replace(minute=0, second=0, microsecond=0)
    if start.hour == 0:
        # Not on a midnight, so that a read from start to now has an hour at one end even
        # in the first hour of a day (when no whole hour has passed since midnight).
        start -= timedelta(hours=1)
    span = (now - timedelta(minutes=2) - start).total_seconds()
    rng = random.Random(seed)
    logged = [
        LoggedQuery(
            sql=TEMPLATES[i % len(TEMPLATES)].format(i=i),
            ts=start + timedelta(seconds=int(span * i / events)),
            # Microseconds, as the slow log writes them, so the raw values are exact.
            query_time=round(rng.lognormvariate(-4, 1.2), 6),
            rows_examined=i % 50,
        )
        for i in range(events)
    ]
    return write_slow_log(path, logged), start, logged


def worker_pool_pids(data_dir: Path) -> list[int]:
    """The pool processes of the Celery worker that `quanta run` started for ``data_dir``."""
    marker = f"QUANTA_DATA_DIR={data_dir}".encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            if b"worker" not in cmdline or b"quanta_worker.celery_app" not in cmdline:
                continue
            if marker not in (proc / "environ").read_bytes().split(b"\0"):
                continue
            return [
                int(child)
                for task in (proc / "task").iterdir()
                for child in (task / "children").read_text().split()
            ]
        except (FileNotFoundError, PermissionError, ProcessLookupError):
            continue
    return []


def kill_workers_until_a_batch_is_lost(
    server: QuantaServer, data_dir: Path, stop: threading.Event
) -> None:
    """SIGKILL a worker pool process now and then until one dies in the middle of a batch.

    The first after 1.5 s (the workers are up), then every half second: a batch takes about
    0.1 s, and the import is over in a few seconds, so at a slower pace every kill could fall
    between two batches."""
    time.sleep(1.5)
    while not stop.is_set() and not any(WORKER_LOST in line for line in server.log_lines()):
        pids = worker_pool_pids(data_dir)
        if pids:
            os.kill(random.choice(pids), signal.SIGKILL)
        time.sleep(0.5)


def exact_quantiles(values: list[float]) -> list[float]:
    ordered = sorted(values)
    return [ordered[math.floor(q * (len(ordered) - 1))] for q in QUANTILES]


def check_store(
    server: QuantaServer,
    database_url: str | None,
    data_dir: Path,
    start: datetime,
    logged: list[LoggedQuery],
) -> None:
    """Exact totals per query at every resolution, and percentiles over minute+hour+day."""
    params = {"from": start.isoformat(), "to": datetime.now(UTC).isoformat(), "limit": 10}
    body = wait_until_counted(server, len(logged), **params)
    by_query: dict[str, list[float]] = defaultdict(list)
    for q in logged:
        by_query[query_id(fingerprint(q.sql))].append(q.query_time)
    assert {r["query_id"]: r["count"] for r in body["rows"]} == {
        qid: len(v) for qid, v in by_query.items()
    }
    for row in body["rows"]:
        assert row["query_time"] == pytest.approx(sum(by_query[row["query_id"]]), rel=1e-9)

    settings = Settings(data_dir=data_dir, database_url=database_url)
    engine = create_db_engine(settings)
    try:
        factory = create_session_factory(engine)
        # The hours, days and totals are rolled up by beat once their hour has ended; roll up
        # the rest (the current hour) now, as beat will, so that every table is complete.
        roll_up_all(factory)
        with session_scope(factory) as session:
            for model in (*BUCKET_MODELS.values(), *TOTALS_MODELS.values()):
                total = session.scalar(select(func.sum(model.count)))
                assert total == len(logged), model.__tablename__
            window = TimeWindow(start=start, end=datetime.now(UTC))
            plan = read_plan(settings=settings, window=window)
            assert {s.resolution for s in plan} == set(Resolution)
            # The merge the query detail reads its percentiles from.
            merged = queries.merged_histograms(
                session, plan, BucketFilter(), "query_id", list(by_query)
            )
            for qid, values in by_query.items():
                histogram = merged[qid]
                assert histogram.count == len(values)
                estimates = histogram.quantiles(QUANTILES)
                for estimate, exact in zip(estimates, exact_quantiles(values), strict=True):
                    assert estimate is not None
                    assert abs(estimate - exact) <= LatencyHistogram.RELATIVE_ACCURACY * exact
    finally:
        engine.dispose()


def every_batch_again(first: str, again: str) -> int:
    """The number of batches of an import; the second import of the file found each one."""
    batches = int(re.search(r"in (\d+) batches", first).group(1))  # type: ignore[union-attr]
    assert f"in {batches} batches, {batches} already received" in again
    return batches


@pytest.fixture
def killer() -> Iterator[threading.Event]:
    stop = threading.Event()
    yield stop
    stop.set()


@pytest.mark.services
def test_postgresql_redis_exact_counts_with_duplicates_two_workers_and_a_killed_one(
    tmp_path: Path,
    postgres_server: PostgresServer,
    redis_server: RedisServer,
    killer: threading.Event,
) -> None:
    log, start, logged = spread_log(tmp_path / "slow.log", events=12_000, seed=1)
    database_url = postgres_server.create_database("ingest_store")
    data_dir = tmp_path / "data"
    with quanta_run(data_dir, database_url=database_url, redis_url=redis_server.url) as server:
        thread = threading.Thread(
            target=kill_workers_until_a_batch_is_lost, args=(server, data_dir, killer)
        )
        thread.start()
        first = agent_import(server, log, batch_size=200)
        check_store(server, database_url, data_dir, start, logged)
        killer.set()
        thread.join()
        assert any(WORKER_LOST in line for line in server.log_lines()), server.log_tail()
        # Both pool processes (two concurrent workers) processed batches.
        workers = {
            line.split("/", 1)[1].split("]", 1)[0]
            for line in server.log_lines()
            if "events counted" in line and "/" in line
        }
        assert len(workers) >= 2, workers
        # The same file again: every batch is a duplicate and nothing changes.
        again = agent_import(server, log, batch_size=200)
        assert every_batch_again(first.stdout, again.stdout) > 10
        time.sleep(2)
        check_store(server, database_url, data_dir, start, logged)


def test_sqlite_embedded_exact_counts_and_percentiles(tmp_path: Path) -> None:
    log, start, logged = spread_log(tmp_path / "slow.log", events=3000, seed=2)
    data_dir = tmp_path / "data"
    with quanta_run(data_dir) as server:
        first = agent_import(server, log, batch_size=250)
        check_store(server, None, data_dir, start, logged)
        again = agent_import(server, log, batch_size=250)
        assert every_batch_again(first.stdout, again.stdout) > 5
        check_store(server, None, data_dir, start, logged)
