"""What a fleet of 5,000 servers would ask of the store: the capacity bench's generator, the
real agent folding and the real ingest and roll-up on a throw-away PostgreSQL measure the
unit costs; a cost model multiplies them by the fleet's volumes.

Measured here, on this machine:
- the fleet's shape: ``--shape-minutes`` minutes (60) of the corpus (bench/_slowlog_corpus.py,
  the capacity bench's workload: ``--rate`` statements/s a server) folded per minute by the
  agent's own code (quanta_agent.batcher.MinuteBatcher): buckets a server-minute, and how many
  distinct bucket keys (query, schema, user, host, tags) an hour keeps (hour rows a server)
  and a day (the day's rows: the hour's, and the growth of distinct keys in the sample's
  second half carried on linearly, an over-estimate: a workload's key set saturates);
- the unit costs: the first ``--sample-minutes`` of those minutes for ``--servers-measured``
  servers processed by the worker's
  own function (ingest.service.process_batch) and rolled up (queries.rollup), CPU seconds of
  this process and of PostgreSQL (from /proc) per bucket; bytes per row of every metric table
  (pg_total_relation_size / rows, indexes included); the time PostgreSQL takes per row to
  sum the overview's rows (EXPLAIN ANALYZE of the top-list aggregate over query_totals_hour).

The model (printed as a table): buckets and rows per second written, cores for ingest and
roll-up, disk a day and at retention per resolution, rows a 30-day overview reads and its
time at the measured rate, for ``--fleet`` servers (5,000). Everything printed as
"measured" comes from this run; "model" lines are products of measured figures and volumes.

Usage: .venv/bin/python bench/scaling_model.py [--fleet 5000] [--sample-minutes 5]
[--shape-minutes 60]
Last line: ``RESULT fleet=N buckets_per_s=B ingest_cores=C rollup_cores=R disk_gb_day=D
overview_30d_s=O``.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


import psycopg

from bench._slowlog_corpus import cached_slow_log
from bench.capacity import PLACEHOLDER_ID
from bench.ingest_pipeline import _cpu_seconds, _tree
from quanta.analysis.fingerprinter import Fingerprinter
from quanta.analysis.slowlog import parse_slow_log
from quanta.analysis.tags import DEFAULT_TAG_KEYS
from quanta.auth.models import ApiToken
from quanta.auth.service import ensure_admin_token
from quanta.core.config import Settings
from quanta.core.db import create_db_engine, create_session_factory, session_scope
from quanta.core.migrate import upgrade_to_head
from quanta.ingest import service as ingest
from quanta.ingest.models import BatchStatus, IngestBatch
from quanta.instances.service import get_or_create_instance
from quanta.queries import rollup
from quanta_agent.batcher import MINUTE_MAX_BYTES, MinuteBatcher
from quanta_agent.checkpoint import Checkpoint, FileIdentity
from quanta_agent.config import BatchSettings
from quanta_agent.policy import MAX_QUERY_LENGTH, ExamplePolicy
from quanta_agent.tailer import SlowLogBatch, SlowLogEntry
from tests.fixtures.servers import started_postgres

FLEET = 5000
RATE = 1000
SEED = 42
TABLES = (
    "query_buckets_minute", "query_buckets_hour", "query_buckets_day", "query_totals_hour",
    "query_totals_day", "instance_totals_minute", "instance_totals_hour", "instance_totals_day",
    "query_examples_minute", "query_examples",
)  # fmt: skip
RETENTION_DAYS = {"minute": 2, "hour": 30, "day": 365}


def folded_minutes(rate: int, minutes: int, seed: int) -> list[dict[str, Any]]:
    """``minutes`` minutes of one server's log, folded per minute by the agent's own code:
    one wire body per minute (the size bound may cut a minute: parts are kept apart)."""
    log = cached_slow_log(rate * 60 * minutes, seed)
    with log.open("rb") as handle:
        events = list(parse_slow_log(handle))
    start = datetime(2001, 2, 3, 4, 0, tzinfo=UTC)
    span = 60 * minutes
    for n, event in enumerate(events):
        event.ts = start + timedelta(seconds=span * n / len(events))
    bodies: list[bytes] = []
    limits = BatchSettings()
    batcher = MinuteBatcher(
        instance="{instance}", policy=ExamplePolicy.FULL, max_length=MAX_QUERY_LENGTH,
        grace=limits.minute_grace, max_statements=limits.max_events,
        max_bytes=MINUTE_MAX_BYTES, spool=lambda _id, body, _n, _c: bodies.append(body),
        save_position=lambda _c: None, tag_keys=frozenset(DEFAULT_TAG_KEYS),
    )  # fmt: skip
    checkpoint = Checkpoint("", FileIdentity(0, 0, 0, ""), 0, time_line=None, db=None, seq=0)
    for n in range(0, len(events), 5000):
        entries = tuple(SlowLogEntry(event, False) for event in events[n : n + 5000])
        batcher.take(SlowLogBatch(PLACEHOLDER_ID, entries, checkpoint))
    batcher.flush()
    contents = [json.loads(gzip.decompress(body)) for body in bodies]
    for content in contents:
        content["batch_id"] = PLACEHOLDER_ID
    return contents


def shape(minutes: list[dict[str, Any]]) -> dict[str, float]:
    """Buckets a server-minute, and distinct keys over the sample and its growth."""
    keys_by_minute: list[set[tuple[Any, ...]]] = []
    for content in minutes:
        b = content["buckets"]
        queries = [q["fingerprint"] for q in content["queries"]]
        # The bucket key (its minute aside): tags are part of it since issue 45.
        columns = zip(b["query"], b["db"], b["user"], b["host"], b["tags"], strict=True)
        keys_by_minute.append({(queries[q], d, u, h, t) for q, d, u, h, t in columns})
    seen: set[tuple[Any, ...]] = set()
    growth = []
    for keys in keys_by_minute:
        before = len(seen)
        seen |= keys
        growth.append(len(seen) - before)
    buckets = sum(len(c["buckets"]["count"]) for c in minutes) / len(minutes)
    # New keys a minute at the end of the sample: the tail's growth, carried on linearly (an
    # over-estimate: a workload's key set saturates).
    tail = sum(growth[len(growth) // 2 :]) / max(1, len(growth) - len(growth) // 2)
    return {
        "buckets_per_minute": buckets,
        "keys_sample": len(seen),
        "new_keys_per_minute": tail,
        "classes": len({k[0] for k in seen}),
    }


def postgres_cpu(pg_datadir: Path) -> float:
    """CPU seconds so far of PostgreSQL and its backends."""
    postmaster = int((pg_datadir / "postmaster.pid").read_text().split()[0])
    return sum(_cpu_seconds(pid) for pid in _tree(postmaster))


@contextlib.contextmanager
def cpu_of(pg_datadir: Path) -> Iterator[dict[str, float]]:
    """CPU seconds of this process and of PostgreSQL while the block runs."""
    out: dict[str, float] = {}
    python, pg = time.process_time(), postgres_cpu(pg_datadir)
    yield out
    out["python"] = time.process_time() - python
    out["postgresql"] = postgres_cpu(pg_datadir) - pg


def measure(minutes: list[dict[str, Any]], servers: int) -> dict[str, Any]:
    """Unit costs on a throw-away PostgreSQL: ingest and roll-up CPU per bucket, bytes per
    row per table, and PostgreSQL's time per row to sum the overview's rows."""
    out: dict[str, Any] = {}
    with started_postgres() as pg:
        settings = Settings(env="test", database_url=pg.create_database("model"), redis_url=None)
        upgrade_to_head(settings)
        engine = create_db_engine(settings)
        factory = create_session_factory(engine)
        with session_scope(factory) as session:
            ensure_admin_token(session=session, token="qnt_model_token")
        with session_scope(factory) as session:
            token_id = session.query(ApiToken.id).scalar()
        when = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(days=3)
        pks: list[int] = []
        buckets = 0
        for server in range(servers):
            for n, content in enumerate(minutes):
                text = json.dumps(content).replace(PLACEHOLDER_ID, f"m{server:05d}{n:026d}")
                text = text.replace("{instance}", f"db{server:04d}").replace(
                    "2001-02-03T04", when.isoformat()[:13]
                )
                decoded = ingest.decode_batch(
                    body=text.encode(), content_encoding=None, settings=settings
                )
                buckets += len(content["buckets"]["count"])
                with session_scope(factory) as session:
                    instance = get_or_create_instance(session=session, name=decoded.batch.instance)
                    row = IngestBatch(
                        token_id=token_id, batch_id=decoded.batch.batch_id, instance_id=instance.id,
                        source="slowlog", payload_gzip=decoded.payload_gzip,
                        event_count=decoded.batch.event_count, status=BatchStatus.QUEUED,
                        received_at=datetime.now(UTC),
                    )  # fmt: skip
                    session.add(row)
                    session.flush()
                    pks.append(row.id)
        fingerprinter = Fingerprinter()  # the worker process's one, its cache warm after a batch
        with cpu_of(pg.datadir) as ingest_cpu:
            for pk in pks:
                with session_scope(factory) as session:
                    ingest.process_batch(
                        session=session,
                        settings=settings,
                        batch_pk=pk,
                        fingerprinter=fingerprinter,
                    )
        with cpu_of(pg.datadir) as rollup_cpu:
            rolled = 1
            while rolled:
                with session_scope(factory) as session:
                    rolled = rollup.roll_up_due(
                        session=session, now=datetime.now(UTC), grace_seconds=0
                    )
        out["ingest_us"] = {k: v * 1e6 / buckets for k, v in ingest_cpu.items()}
        out["rollup_us"] = {k: v * 1e6 / buckets for k, v in rollup_cpu.items()}
        out["buckets"] = buckets
        engine.dispose()
        with pg.connect("model") as conn:
            conn.execute("VACUUM ANALYZE")
            out["sizes"] = {table: _bytes_a_row(conn, table) for table in TABLES}
            # The overview's aggregate over a month of a fleet's hour totals: the stored
            # rows copied to 200 more servers and 24 more hours, then timed by PostgreSQL.
            conn.execute(
                "INSERT INTO query_totals_hour SELECT instance_id + 1000 * s, "
                "bucket_start + interval '1 hour' * h, query_id, source, histogram, "
                + ", ".join(c for c in _metric_columns(conn))
                + " FROM query_totals_hour, generate_series(1, 200) s, generate_series(1, 24) h"
            )
            conn.execute("VACUUM ANALYZE query_totals_hour")
            plan = conn.execute(
                "EXPLAIN (ANALYZE, FORMAT JSON) SELECT query_id, sum(count), sum(query_time_sum), "
                "max(query_time_max), sum(rows_examined_sum), sum(rows_sent_sum) "
                "FROM query_totals_hour GROUP BY query_id ORDER BY 3 DESC LIMIT 50"
            ).fetchone()[0]  # type: ignore[index]
            rows = conn.execute("SELECT count(*) FROM query_totals_hour").fetchone()[0]  # type: ignore[index]
            out["scan_rows"] = rows
            out["scan_us_per_row"] = plan[0]["Execution Time"] * 1000 / rows
    return out


def _metric_columns(conn: psycopg.Connection[Any]) -> list[str]:
    """query_totals_hour's columns after its key and histogram, in table order."""
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = "
        "'query_totals_hour' ORDER BY ordinal_position"
    ).fetchall()
    skip = {"instance_id", "bucket_start", "query_id", "source", "histogram"}
    return [name for (name,) in rows if name not in skip]


def _bytes_a_row(conn: psycopg.Connection[Any], table: str) -> tuple[int, float]:
    """(rows, bytes a row with its share of the indexes): the table's size on disk divided
    by its rows, where it has enough rows for that to mean something; else the rows' own
    size plus the tuple header and 40 bytes per index entry (an estimate)."""
    rows = int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # type: ignore[index]
    if rows >= 1000:
        size = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "LEFT JOIN pg_inherits i ON i.inhrelid = c.oid "
            "LEFT JOIN pg_class p ON p.oid = i.inhparent "
            "WHERE (c.relname = %s OR p.relname = %s) AND c.relkind IN ('r', 'p')",
            (table, table),
        ).fetchone()[0]  # type: ignore[index]
        return rows, float(size) / rows
    own = conn.execute(f"SELECT avg(pg_column_size(t.*)) FROM {table} t").fetchone()[0]  # type: ignore[index]
    indexes = conn.execute(
        "SELECT count(*) FROM pg_indexes WHERE tablename = %s", (table,)
    ).fetchone()[0]  # type: ignore[index]
    return rows, float(own or 0) + 28 + 40 * int(indexes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fleet", type=int, default=FLEET)
    parser.add_argument("--rate", type=int, default=RATE)
    parser.add_argument("--sample-minutes", type=int, default=5, help="minutes measured")
    parser.add_argument("--shape-minutes", type=int, default=60, help="minutes folded")
    parser.add_argument("--servers-measured", type=int, default=4)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    minutes = folded_minutes(args.rate, max(args.shape_minutes, args.sample_minutes), args.seed)
    fleet_shape = shape(minutes)
    print(f"measured shape of a server at {args.rate} statements/s: {fleet_shape}")
    costs = measure(minutes[: args.sample_minutes], args.servers_measured)
    print(f"measured costs: {json.dumps(costs, default=float)}")
    n = args.fleet
    per_minute = fleet_shape["buckets_per_minute"]
    buckets_per_s = n * per_minute / 60
    ingest_us = sum(costs["ingest_us"].values())
    rollup_us = sum(costs["rollup_us"].values())
    # Hour rows a server: the keys an hour keeps; day rows: a day's (the tail's growth on).
    growth = fleet_shape["new_keys_per_minute"]
    hour_keys = fleet_shape["keys_sample"] + growth * max(0, 60 - args.shape_minutes)
    day_keys = hour_keys + growth * 60 * 23
    sizes = {table: per_row for table, (_, per_row) in costs["sizes"].items()}
    classes = fleet_shape["classes"]
    # Per period: the buckets, the query and instance totals, an example row per class.
    minute_rows = (
        per_minute * sizes["query_buckets_minute"]
        + sizes["instance_totals_minute"]
        + classes * sizes["query_examples_minute"]
    )
    hour_rows = (
        hour_keys * sizes["query_buckets_hour"]
        + classes * (sizes["query_totals_hour"] + sizes["query_examples"])
        + sizes["instance_totals_hour"]
    )
    day_rows = (
        day_keys * sizes["query_buckets_day"]
        + classes * (sizes["query_totals_day"] + sizes["query_examples"])
        + sizes["instance_totals_day"]
    )
    disk = {"minute": n * 1440 * minute_rows, "hour": n * 24 * hour_rows, "day": n * day_rows}
    overview_rows = n * classes * (24 * 2 + 28)  # 30 days: two edge days of hours, 28 days
    overview_s = overview_rows * costs["scan_us_per_row"] / 1e6
    print(f"\nmodel for {n:,} servers at {args.rate:,} statements/s each:")
    print(f"  buckets written           {buckets_per_s:,.0f}/s ({n * per_minute:,.0f} a minute)")
    ingest_cores = buckets_per_s * ingest_us / 1e6
    rollup_cores = buckets_per_s * rollup_us / 1e6
    print(f"  ingest CPU                {ingest_us:.0f} us a bucket -> {ingest_cores:.1f} cores")
    print(f"  roll-up CPU               {rollup_us:.0f} us a bucket -> {rollup_cores:.1f} cores")
    print(f"  hour rows a server-hour   {hour_keys:,.0f}; day rows a server-day {day_keys:,.0f}")
    for resolution, per_day in disk.items():
        days = RETENTION_DAYS[resolution]
        print(
            f"  disk {resolution:<6}               {per_day / 1e9:,.1f} GB a day "
            f"({per_day / n / 1e6:,.1f} MB a server), {per_day * days / 1e12:,.2f} TB at "
            f"{days} days"
        )
    print(
        f"  30-day overview           {overview_rows / 1e6:,.0f}M query-totals rows -> "
        f"{overview_s:,.1f} s at {costs['scan_us_per_row']:.2f} us/row"
    )
    print(
        f"RESULT fleet={n} buckets_per_s={buckets_per_s:.0f} "
        f"ingest_cores={ingest_cores:.1f} rollup_cores={rollup_cores:.1f} "
        f"disk_gb_day={sum(disk.values()) / 1e9:.1f} overview_30d_s={overview_s:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
