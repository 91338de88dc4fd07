"""End-to-end ingest: `quanta-agent import` -> API -> Celery workers -> committed buckets.

Starts a throw-away PostgreSQL and Redis, runs `quanta run` on them (API, a worker with
``--workers`` pool processes, beat), imports a realistic slow log of ``--events`` events
(bench/_slowlog_corpus.py; ``--flavor mariadb``: MariaDB 10.11's format with
``log_slow_verbosity=query_plan,innodb,explain``; ``percona``: Percona Server's with
``full``) with `quanta-agent import`, and measures the wall-clock time from the start of the
import until the last batch is processed and its buckets committed (every batch 'done'; the
minute buckets must then hold every event). In the same run, times `pt-query-digest` on the
same file, the two taking turns. Each side's figure is the best of ``--runs`` (3). The
target is >= 3x pt-query-digest with 2 workers.

It also reports the CPU seconds each part used while the events went through (agent, API,
worker pool, PostgreSQL), from /proc, to show where the time goes on a shared 2-core box.

Usage: .venv/bin/python bench/ingest_pipeline.py [--runs R] [--events N] [--workers W]
[--batch-size B] [--flavor mysql80|percona|mariadb]
Last line: ``RESULT events_per_s=X speedup_vs_pt=Y``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx
import psycopg

from bench._slowlog_corpus import FLAVORS, cached_slow_log
from tests.fixtures.servers import free_port, started_postgres, started_redis

EVENTS = 200_000
SEED = 42
WORKERS = 2
BATCH_SIZE = 25_000  # quanta-agent import's default
# Best of three on each side, as bench/digest_vs_pt.py: single runs vary by 15% on this VM.
RUNS = 3
START_TIMEOUT = 120.0
FINISH_TIMEOUT = 1800.0
POLL_SECONDS = 0.2
ADMIN_TOKEN_PREFIX = "Admin token: "
VENV_BIN = Path(sys.executable).parent


@contextlib.contextmanager
def quanta_run(
    data_dir: Path, database_url: str, redis_url: str, workers: int
) -> Iterator[tuple[str, str, int]]:
    """`quanta run` on PostgreSQL + Redis; yields (URL, admin token, pid); Ctrl-C after."""
    port = free_port()
    env = {
        **os.environ,
        "QUANTA_DATA_DIR": str(data_dir),
        "QUANTA_PORT": str(port),
        "QUANTA_ENV": "test",
        "QUANTA_DATABASE_URL": database_url,
        "QUANTA_REDIS_URL": redis_url,
        "QUANTA_WORKER_CONCURRENCY": str(workers),
        # The corpus is dated 2024: keep every resolution for the length of the run.
        "QUANTA_RETENTION_MINUTE_DAYS": "36500",
        "QUANTA_RETENTION_HOUR_DAYS": "36500",
        "QUANTA_RETENTION_DAY_DAYS": "36500",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("QUANTA_ADMIN_TOKEN", None)
    log_path = data_dir.parent / "quanta-run.log"
    with log_path.open("w") as log_file:
        process = subprocess.Popen(
            [str(VENV_BIN / "quanta"), "run"],
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + START_TIMEOUT
            token = None
            while token is None:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("quanta run did not start:\n" + log_path.read_text()[-4000:])
                time.sleep(0.25)
                for line in log_path.read_text().splitlines():
                    if line.startswith(ADMIN_TOKEN_PREFIX):
                        token = line.removeprefix(ADMIN_TOKEN_PREFIX).strip()
            yield f"http://127.0.0.1:{port}", token, process.pid
        finally:
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def pending(conn: psycopg.Connection[tuple[object, ...]]) -> int:
    """Batches not yet done (a batch is marked done in the transaction storing its buckets)."""
    row = conn.execute("SELECT count(*) FROM ingest_batches WHERE status <> 'done'").fetchone()
    assert row is not None
    return int(row[0])  # type: ignore[call-overload]


def rollup_pending(conn: psycopg.Connection[tuple[object, ...]]) -> int:
    """Writes whose minutes beat has not rolled up into hours, days and totals yet."""
    row = conn.execute("SELECT count(*) FROM rollup_pending").fetchone()
    assert row is not None
    return int(row[0])  # type: ignore[call-overload]


def counted(conn: psycopg.Connection[tuple[object, ...]]) -> int:
    """Events in committed minute buckets (summed once at the end: a scan of every bucket
    at each poll would take the CPU the pipeline is measured on)."""
    row = conn.execute("SELECT coalesce(sum(count), 0) FROM query_buckets_minute").fetchone()
    assert row is not None
    return int(row[0])  # type: ignore[call-overload]


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and of its children it has reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return 0.0
    fields = stat.rsplit(")", 1)[1].split()
    ticks = sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def _tree(pid: int) -> list[int]:
    """The process and all its descendants."""
    pids, index = [pid], 0
    while index < len(pids):
        for task in Path(f"/proc/{pids[index]}/task").glob("*/children"):
            with contextlib.suppress(FileNotFoundError):
                pids += [int(child) for child in task.read_text().split()]
        index += 1
    return pids


def server_cpu(quanta_pid: int, pg_datadir: Path) -> dict[str, float]:
    """CPU seconds so far of the API, the worker (with its pool), beat and PostgreSQL."""
    parts = {"api": 0.0, "worker": 0.0, "beat": 0.0, "postgresql": 0.0}
    for pid in _tree(quanta_pid)[1:]:
        with contextlib.suppress(FileNotFoundError):
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            role = next((p for p in ("uvicorn", "worker", "beat") if p.encode() in argv), None)
            if role:
                parts["api" if role == "uvicorn" else role] += _cpu_seconds(pid)
    postmaster = int((pg_datadir / "postmaster.pid").read_text().split()[0])
    parts["postgresql"] = sum(_cpu_seconds(pid) for pid in _tree(postmaster))
    return parts


def time_pt(log: Path) -> float:
    """Wall-clock seconds of pt-query-digest on the log (its report discarded)."""
    pt = shutil.which("pt-query-digest")
    if pt is None:
        raise SystemExit("pt-query-digest not found: apt-get install percona-toolkit")
    started = time.monotonic()
    subprocess.run(
        [pt, "--output", "json", "--limit", "100%", str(log)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    return time.monotonic() - started


def time_pipeline(
    log: Path, events: int, workers: int, batch_size: int, work: Path
) -> tuple[float, float]:
    """Seconds from the start of the import to the last committed bucket; and the import's."""
    with started_postgres() as pg, started_redis() as redis:
        database_url = pg.create_database("bench")
        with quanta_run(work / "data", database_url, redis.url, workers) as (
            url,
            token,
            quanta_pid,
        ):
            httpx.get(url + "/healthz", timeout=10).raise_for_status()
            with pg.connect("bench") as conn:
                progress: list[str] = []
                cpu_before = server_cpu(quanta_pid, pg.datadir)
                agent_before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.monotonic()
                agent = subprocess.Popen(
                    [str(VENV_BIN / "quanta-agent"), "import", str(log), "--server", url,
                     "--token", token, "--instance", "bench", "--batch-size", str(batch_size)],
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                )  # fmt: skip
                assert agent.stdout is not None
                stdout = agent.stdout
                reader = threading.Thread(target=lambda: progress.extend(stdout.readlines()))
                reader.start()
                import_seconds = None
                deadline = started + FINISH_TIMEOUT
                while True:
                    if import_seconds is None and agent.poll() is not None:
                        import_seconds = time.monotonic() - started
                        if agent.returncode != 0:
                            raise RuntimeError(f"agent import failed: {''.join(progress)}")
                    if import_seconds is not None and pending(conn) == 0:
                        break
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"{pending(conn)} batches still pending")
                    time.sleep(POLL_SECONDS)
                elapsed = time.monotonic() - started
                total = counted(conn)
                agent_after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu_after = server_cpu(quanta_pid, pg.datadir)
                reader.join()
                cpu = {name: cpu_after[name] - cpu_before[name] for name in cpu_before}
                cpu["agent"] = (agent_after.ru_utime + agent_after.ru_stime) - (
                    agent_before.ru_utime + agent_before.ru_stime
                )
                print(
                    "CPU seconds while ingesting: "
                    + ", ".join(f"{name} {seconds:.1f}" for name, seconds in cpu.items())
                    + f"; {sum(cpu.values()) * 1e6 / events:.0f} us per event in all"
                )
                # Reads are exact from the committed minutes on; beat then rolls the hours,
                # days and totals up (every QUANTA_ROLLUP_INTERVAL_SECONDS): its cost, apart.
                while rollup_pending(conn) and time.monotonic() < deadline:
                    time.sleep(POLL_SECONDS)
                rolled = server_cpu(quanta_pid, pg.datadir)
                print(
                    f"rolled up {time.monotonic() - started:.1f}s after the start; CPU seconds of "
                    "the roll-up and beat meanwhile: "
                    + ", ".join(
                        f"{k} {rolled[k] - cpu_after[k]:.1f}" for k in ("worker", "postgresql")
                    )
                )
                print("agent:", "".join(progress).strip())
                if total != events:
                    raise RuntimeError(f"{total} events committed, {events} imported")
    return elapsed, import_seconds


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=RUNS, help="best of this many, each side")
    parser.add_argument("--events", type=int, default=EVENTS)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument(
        "--flavor",
        choices=FLAVORS,
        default="mysql80",
        help="corpus: MySQL 8.0, Percona Server (log_slow_verbosity=full) or MariaDB"
        " (log_slow_verbosity=query_plan,innodb,explain)",
    )
    parser.add_argument("--workers", type=int, default=WORKERS)
    parser.add_argument("--batch-size", type=int, default=BATCH_SIZE)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    log = cached_slow_log(args.events, args.seed, flavor=args.flavor)
    log.read_bytes()  # page cache: neither side pays for the first read
    print(f"log: {log} ({log.stat().st_size / 1e6:.0f} MB, {args.events:,} {args.flavor} events)")
    print(f"load average {os.getloadavg()[0]:.2f} at start")
    pt_runs, runs = [], []
    # Turn about: the VM's speed drifts over a minute, and both sides should see the same.
    for _ in range(args.runs):
        pt_runs.append(time_pt(log))
        with tempfile.TemporaryDirectory(prefix="quanta-bench-") as work:  # a new store
            runs.append(time_pipeline(log, args.events, args.workers, args.batch_size, Path(work)))
    pt_seconds = min(pt_runs)
    print(
        f"pt-query-digest: {pt_seconds:.1f}s  {args.events / pt_seconds:,.0f} events/s "
        f"(best of {', '.join(f'{t:.1f}' for t in pt_runs)})"
    )
    print(f"quanta pipeline runs: {', '.join(f'{seconds:.1f}s' for seconds, _ in runs)}")
    seconds, import_seconds = min(runs)
    rate = args.events / seconds
    print(
        f"quanta pipeline ({args.workers} workers): {seconds:.1f}s to the last committed bucket "
        f"(import {import_seconds:.1f}s)  {rate:,.0f} events/s"
    )
    speedup = pt_seconds / seconds
    print(f"speedup: {speedup:.2f}x pt-query-digest (target >= 3)")
    print(f"RESULT events_per_s={rate:.0f} speedup_vs_pt={speedup:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
