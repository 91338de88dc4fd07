"""API read latency: the top-queries overview and the query detail on a seeded PostgreSQL.

Starts a throw-away PostgreSQL, migrates it and seeds it through the real ingest code (the
batch's events -> ``analysis.aggregate.digest_events`` -> ``queries.writes.record_digest``,
what a worker does for each batch, without HTTP) with ``--days`` of data for ``--instances``
servers running ``--fingerprints`` query classes: Zipf-distributed popularity (each server
its own ranking), log-normal latencies per class, hourly bursts (5x the calls, 3x slower),
realistic schemas, users and client hosts. Beat's roll-up then runs as it would have over
those days (every hour that has ended; the current one stays pending, read from its
minutes) and retention too (old minute buckets go). It then times the API in process
(FastAPI TestClient: routing, validation, service, SQL, serialisation) for the last 1 h,
24 h, 7 d and 30 d: the overview plain, with filters (instance and user) and with a search,
and the detail of a heavy and a long-tail query. Targets (issue 40): overview p95 < 150 ms,
detail p95 < 75 ms.

Usage: .venv/bin/python bench/api_latency.py [--events-per-hour N] [--runs R]
The seed size scales with ``--events-per-hour`` (per instance; default 8: 115k events,
about 5 minutes of seeding on 2 busy cores).
Last line: ``RESULT overview_p95_ms=X detail_p95_ms=Y`` (the worst range of each).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fastapi.testclient import TestClient

from quanta.analysis.aggregate import digest_events
from quanta.auth.service import ensure_admin_token
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.core.migrate import upgrade_to_head
from quanta.instances.service import get_or_create_instance
from quanta.main import create_app
from quanta.queries import partitions, rollup
from quanta.queries.writes import record_digest
from quanta.wire import SlowLogEventIn
from tests.fixtures.servers import started_postgres

TOKEN = "qnt_bench_admin_token"
RANGES = {"1h": "now-1h", "24h": "now-24h", "7d": "now-7d", "30d": "now-30d"}
OVERVIEW_TARGET_MS = 150
DETAIL_TARGET_MS = 75
# Hours of one instance's events per ingest batch (one record_digest transaction).
HOURS_PER_BATCH = 24
ZIPF_EXPONENT = 1.1
BURST_PROBABILITY = 0.03
BURST_CALLS, BURST_SLOWDOWN = 5, 3.0
USERS = ("app", "api", "worker", "report", "admin")
HOSTS_PER_INSTANCE = 10
SCHEMAS = ("shop", "crm", "billing", "analytics")
SHAPES = (
    "SELECT id, status, total FROM {s}.orders_{i} WHERE customer_id = {v} ORDER BY created_at "
    "DESC LIMIT 20",
    "SELECT COUNT(*) FROM {s}.events_{i} WHERE kind = 'k{v}' AND created_at > NOW() - INTERVAL 1 "
    "DAY",
    "UPDATE {s}.sessions_{i} SET seen_at = NOW() WHERE token = 'tok{v}'",
    "INSERT INTO {s}.audit_{i} (user_id, action, at) VALUES ({v}, 'login', NOW())",
    "SELECT p.id, p.name FROM {s}.products_{i} p JOIN {s}.stock s ON s.pid = p.id WHERE "
    "s.qty < {v}",
    "DELETE FROM {s}.carts_{i} WHERE updated_at < '2026-01-{v}'",
)


class Fingerprints:
    """The query classes: one SQL shape each, with a base latency and a schema."""

    def __init__(self, count: int, rng: random.Random) -> None:
        self.sql = [SHAPES[i % len(SHAPES)] for i in range(count)]
        self.schema = [SCHEMAS[i % len(SCHEMAS)] for i in range(count)]
        self.latency = [math.exp(rng.gauss(math.log(0.01), 1.6)) for _ in range(count)]
        self.rows = [int(math.exp(rng.gauss(math.log(200), 2.0))) + 1 for _ in range(count)]
        weights = [1 / (rank + 1) ** ZIPF_EXPONENT for rank in range(count)]
        total = sum(weights)
        self.cumulative: list[float] = []
        acc = 0.0
        for w in weights:
            acc += w / total
            self.cumulative.append(acc)

    def text(self, i: int, value: int) -> str:
        """A real statement of class ``i``."""
        return self.sql[i].format(s=self.schema[i], i=i, v=value)


def seed(settings: Settings, args: argparse.Namespace, now: datetime) -> tuple[int, float]:
    """Ingest the synthetic history; returns (events, seconds)."""
    rng = random.Random(args.seed)
    fps = Fingerprints(args.fingerprints, rng)
    app = create_app(settings)
    factory = app.state.session_factory
    start = (now - timedelta(days=args.days)).replace(minute=0, second=0, microsecond=0)
    hours = args.days * 24
    events_total = 0
    began = time.perf_counter()
    with session_scope(factory) as session:
        partitions.maintain_partitions(session=session, settings=settings, now=now)
    for n in range(args.instances):
        with session_scope(factory) as session:
            instance_id = get_or_create_instance(session=session, name=f"db{n:02d}").id
        # Each server has its own popularity ranking of the classes.
        ranking = list(range(args.fingerprints))
        random.Random(args.seed + n).shuffle(ranking)
        for first_hour in range(0, hours, HOURS_PER_BATCH):
            events = []
            for hour in range(first_hour, min(first_hour + HOURS_PER_BATCH, hours)):
                burst = rng.random() < BURST_PROBABILITY
                calls = args.events_per_hour * (BURST_CALLS if burst else 1)
                hour_start = start + timedelta(hours=hour)
                for _ in range(calls):
                    rank = _bisect(fps.cumulative, rng.random())
                    q = ranking[rank]
                    latency = fps.latency[q] * math.exp(rng.gauss(0, 0.5))
                    if burst:
                        latency *= BURST_SLOWDOWN
                    examined = max(1, int(fps.rows[q] * rng.uniform(0.5, 1.5)))
                    events.append(
                        SlowLogEventIn.model_construct(
                            ts=hour_start + timedelta(seconds=rng.uniform(0, 3599)),
                            query=fps.text(q, rng.randrange(1, 28)),
                            query_time=latency,
                            lock_time=latency * 0.01,
                            rows_sent=max(0, examined // rng.choice((1, 10, 100))),
                            rows_examined=examined,
                            db=fps.schema[q],
                            user=USERS[min(int(rng.expovariate(1.0)), len(USERS) - 1)],
                            host=f"app-{n:02d}-{rng.randrange(HOSTS_PER_INSTANCE):02d}",
                            full_scan=examined > 10_000,
                            tmp_disk_tables=int(q % 17 == 0),
                            filesort=q % 5 == 0,
                        )
                    )
            digest = digest_events(events, rng=rng)
            with session_scope(factory) as session:
                record_digest(
                    session=session,
                    instance_id=instance_id,
                    source="slowlog",
                    digest=digest,
                    example_policy=args.examples,
                    example_max_chars=settings.example_max_chars,
                )
            events_total += len(events)
        print(f"  seeded db{n:02d}: {events_total} events, {time.perf_counter() - began:.0f} s")
    # Beat's roll-up, as it would have run over those days: every hour that has ended (the
    # current one stays pending, read from its minutes).
    rolled = 1
    while rolled:
        with session_scope(factory) as session:
            rolled = rollup.roll_up_due(session=session, now=datetime.now(UTC), grace_seconds=0)
    with session_scope(factory) as session:
        partitions.apply_retention(session=session, settings=settings, now=now)
    with app.state.engine.connect() as conn:
        conn.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql("VACUUM ANALYZE")
    app.state.engine.dispose()
    return events_total, time.perf_counter() - began


def _bisect(cumulative: list[float], x: float) -> int:
    lo, hi = 0, len(cumulative) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cumulative[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def timed(call: Callable[[], object], runs: int) -> tuple[float, float]:
    """(p50, p95) in milliseconds of ``runs`` calls, after one warm-up."""
    call()
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        call()
        samples.append((time.perf_counter() - began) * 1000)
    samples.sort()
    p95 = samples[min(len(samples) - 1, math.ceil(0.95 * len(samples)) - 1)]
    return statistics.median(samples), p95


def measure(settings: Settings, runs: int) -> tuple[float, float]:
    """Print p50/p95 per scenario; returns the worst overview and detail p95."""
    app = create_app(settings)
    with session_scope(app.state.session_factory) as session:
        ensure_admin_token(session=session, token=TOKEN)
    worst_overview = worst_detail = 0.0
    with TestClient(app, headers={"Authorization": f"Bearer {TOKEN}"}) as client:

        def get(path: str, **params: object) -> dict[str, object]:
            response = client.get(f"/api/v1{path}", params=params)
            response.raise_for_status()
            body: dict[str, object] = response.json()
            return body

        top = get("/queries", **{"from": "now-24h"}, limit=500)
        rows: list[dict[str, str]] = top["rows"]  # type: ignore[assignment]
        heavy, tail = rows[0]["query_id"], rows[-1]["query_id"]
        print(f"{'view':<44} {'p50 ms':>8} {'p95 ms':>8}")
        for label, since in RANGES.items():
            scenarios: dict[str, tuple[str, dict[str, object]]] = {
                "overview": ("/queries", {}),
                "overview instance+user": ("/queries", {"instance": "db03", "user": "app"}),
                "overview search": ("/queries", {"search": "orders"}),
                "overview sort p95": ("/queries", {"sort": "query_time_p95"}),
                "detail heavy": (f"/queries/{heavy}", {}),
                "detail tail": (f"/queries/{tail}", {}),
            }
            for name, (path, params) in scenarios.items():
                query: dict[str, object] = {"from": since, **params}

                def call(path: str = path, query: dict[str, object] = query) -> object:
                    return get(path, **query)

                p50, p95 = timed(call, runs)
                print(f"{name + ' ' + label:<44} {p50:8.1f} {p95:8.1f}")
                if name.startswith("overview"):
                    worst_overview = max(worst_overview, p95)
                else:
                    worst_detail = max(worst_detail, p95)
    app.state.engine.dispose()
    return worst_overview, worst_detail


def main() -> None:
    """Seed, measure, print the figures; the last line is the RESULT line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--instances", type=int, default=20)
    parser.add_argument("--fingerprints", type=int, default=5000)
    parser.add_argument("--events-per-hour", type=int, default=8, help="per instance")
    parser.add_argument("--examples", choices=("full", "masked", "off"), default="off")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    now = datetime.now(UTC)
    with started_postgres() as pg:
        settings = Settings(env="test", database_url=pg.create_database("bench"), redis_url=None)
        upgrade_to_head(settings)
        events, seconds = seed(settings, args, now)
        print(
            f"seeded {events} events ({args.instances} instances, {args.fingerprints} "
            f"fingerprints, {args.days} days) in {seconds:.0f} s"
        )
        overview, detail = measure(settings, args.runs)
    ok = overview < OVERVIEW_TARGET_MS and detail < DETAIL_TARGET_MS
    print(
        f"targets: overview p95 < {OVERVIEW_TARGET_MS} ms, detail p95 < {DETAIL_TARGET_MS} ms:"
        f" {'met' if ok else 'NOT met'}"
    )
    print(f"RESULT overview_p95_ms={overview:.1f} detail_p95_ms={detail:.1f}")


if __name__ == "__main__":
    main()
