"""What the agent's polling costs the monitored server: sysbench throughput with and without.

Starts a throw-away MariaDB (performance_schema on, slow log off so only polling differs),
fills its digest table with many statement shapes (a poll then reads as much as on a real
server), and runs sysbench oltp_read_only in alternating runs: without the agent, and with
the performance_schema and statistics collectors polling every POLL_INTERVAL seconds, as
``quanta-agent run`` does. The overhead is the median over pairs of the relative throughput
loss. (PMM's agent polls the same table the same way; it is not installed here to compare.)

The statistics collector reads performance_schema's table I/O summaries, or with
``--userstat`` (the server started with userstat=ON) INFORMATION_SCHEMA's TABLE_STATISTICS,
INDEX_STATISTICS and USER_STATISTICS; either way each account's statement errors from
performance_schema. userstat's own cost is paid by both runs of a pair: only the agent's
polling differs.

Usage: .venv/bin/python bench/agent_overhead.py [--pairs N] [--seconds S] [--userstat]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quanta_agent.config import InstanceSettings
from quanta_agent.perfschema import PerfSchemaCollector, make_perfschema_collector
from quanta_agent.stats import StatsCollector, make_stats_collector
from tests.fixtures.servers import MariaDBServer, started_mariadb

SYSBENCH = "/usr/bin/sysbench"
POLL_INTERVAL = 10.0
# Short alternating runs: a shared machine's load drifts, and many short pairs average it out.
PAIRS = 12
RUN_SECONDS = 10
WARMUP_SECONDS = 10
THREADS = 2
TABLES = 4
TABLE_SIZE = 10_000
DIGEST_SHAPES = 2000  # distinct statements in the digest table before measuring
SERVER_ARGS = ["--slow-query-log=OFF", "--innodb-buffer-pool-size=128M"]
AGENT_USER = "quanta"  # the agent's own least-privileged account, so its server time is its own
PICOSECONDS_PER_SECOND = 10**12
CORES = os.cpu_count() or 1
_TPS_RE = re.compile(r"transactions:\s+\d+\s+\(([\d.]+) per sec\.\)")
_TXN_RE = re.compile(r"transactions:\s+(\d+)")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class Poller:
    """Polls both collectors every POLL_INTERVAL seconds in a thread while switched on."""

    def __init__(self, server: MariaDBServer) -> None:
        instance = InstanceSettings(
            name="bench",
            dsn=f"mysql://{AGENT_USER}:{AGENT_USER}@{server.host}:{server.port}/",
            sources=("perfschema", "stats"),
        )
        self.collectors: list[PerfSchemaCollector | StatsCollector] = [
            make_perfschema_collector(instance),
            make_stats_collector(instance),
        ]
        self.poll_seconds: list[float] = []
        self.digests_shipped = 0
        self.stats_rows_shipped = 0
        self.cpu_seconds = 0.0  # the agent's own CPU (this thread), next to the server
        self._on = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def switch(self, on: bool) -> None:
        """Start or pause polling (the first poll comes right away)."""
        if on:
            self._on.set()
        else:
            self._on.clear()

    def close(self) -> None:
        """Stop the thread and close the monitoring connections."""
        self._stop.set()
        self._on.set()
        self._thread.join()
        for collector in self.collectors:
            collector.close()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._on.wait()
            if self._stop.is_set():
                return
            started, cpu_started = time.perf_counter(), time.thread_time()
            for collector in self.collectors:
                body = collector.poll()
                self.digests_shipped += len(body.get("digests", []))
                self.stats_rows_shipped += sum(
                    len(body.get(kind, [])) for kind in ("tables", "indexes", "users")
                )
            self.poll_seconds.append(time.perf_counter() - started)
            self.cpu_seconds += time.thread_time() - cpu_started
            self._stop.wait(POLL_INTERVAL - (time.perf_counter() - started))


def sysbench(server: MariaDBServer, command: str, seconds: int = 0) -> str:
    """Run one sysbench command against the server and return its output."""
    argv = [
        SYSBENCH,
        "oltp_read_only",
        "--db-driver=mysql",
        f"--mysql-host={server.host}",
        f"--mysql-port={server.port}",
        f"--mysql-user={server.user}",
        "--mysql-db=sbtest",
        f"--tables={TABLES}",
        f"--table-size={TABLE_SIZE}",
        f"--threads={THREADS}",
        f"--time={seconds}",
        "--report-interval=0",
        command,
    ]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


@dataclass(frozen=True)
class Run:
    """One sysbench run: throughput, and the server's CPU seconds per transaction."""

    tps: float
    cpu_per_txn: float


def server_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds the server process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def run_once(server: MariaDBServer, seconds: int) -> Run:
    """One oltp_read_only run of ``seconds``."""
    pid = server_pid(server)
    cpu_before = server_cpu_seconds(pid)
    output = sysbench(server, "run", seconds)
    cpu = server_cpu_seconds(pid) - cpu_before
    rate, transactions = _TPS_RE.search(output), _TXN_RE.search(output)
    if rate is None or transactions is None:
        raise RuntimeError(f"sysbench printed no transaction rate:\n{output}")
    return Run(tps=float(rate.group(1)), cpu_per_txn=cpu / int(transactions.group(1)))


def server_pid(server: MariaDBServer) -> int:
    """The mariadbd process id, from its pid file."""
    return int((server.datadir.parent / "mariadbd.pid").read_text().strip())


def prepare(server: MariaDBServer) -> None:
    """Create the sysbench tables and fill the digest table with many statement shapes."""
    with contextlib.closing(server.connect()) as conn, conn.cursor() as cursor:
        cursor.execute("CREATE DATABASE sbtest")
        cursor.execute(f"CREATE USER '{AGENT_USER}'@'%' IDENTIFIED BY '{AGENT_USER}'")
        cursor.execute(f"GRANT PROCESS ON *.* TO '{AGENT_USER}'@'%'")
        cursor.execute(f"GRANT SELECT ON performance_schema.* TO '{AGENT_USER}'@'%'")
        # The documented account reads every schema: userstat shows it only those tables.
        cursor.execute(f"GRANT SELECT ON sbtest.* TO '{AGENT_USER}'@'%'")
    sysbench(server, "prepare")
    with contextlib.closing(server.connect(database="sbtest")) as conn, conn.cursor() as cursor:
        for shape in range(DIGEST_SHAPES):
            cursor.execute(f"SELECT id AS shape_{shape} FROM sbtest1 WHERE id = 1")


def agent_server_seconds(server: MariaDBServer) -> float:
    """Server time spent so far running the agent's statements (performance_schema's word)."""
    with contextlib.closing(server.connect()) as conn, conn.cursor() as cursor:
        cursor.execute(
            "SELECT COALESCE(SUM(SUM_TIMER_WAIT), 0) FROM "
            "performance_schema.events_statements_summary_by_user_by_event_name WHERE USER = %s",
            (AGENT_USER,),
        )
        row = cursor.fetchone()
    return int(row[0] if row else 0) / PICOSECONDS_PER_SECOND


@dataclass
class Results:
    """Per pair: throughput loss and server CPU per transaction added, in %."""

    throughput: list[float] = field(default_factory=list)
    cpu_per_txn: list[float] = field(default_factory=list)
    agent_seconds: float = 0.0


def measure(server: MariaDBServer, poller: Poller, pairs: int, seconds: int) -> Results:
    """Alternate runs without and with polling, in ABBA order against the machine's drift."""
    results = Results()
    for pair in range(pairs):
        order = (False, True) if pair % 2 == 0 else (True, False)
        runs = {}
        for polling in order:
            before = agent_server_seconds(server)
            poller.switch(polling)
            runs[polling] = run_once(server, seconds)
            if polling:
                results.agent_seconds += agent_server_seconds(server) - before
        poller.switch(False)
        off, on = runs[False], runs[True]
        results.throughput.append((off.tps - on.tps) / off.tps * 100)
        results.cpu_per_txn.append((on.cpu_per_txn - off.cpu_per_txn) / off.cpu_per_txn * 100)
        print(
            f"pair {pair + 1}: without {off.tps:.1f} tps, with agent {on.tps:.1f} tps "
            f"({results.throughput[-1]:+.2f}%); server CPU per transaction "
            f"{off.cpu_per_txn * 1e6:.0f} vs {on.cpu_per_txn * 1e6:.0f} us "
            f"({results.cpu_per_txn[-1]:+.2f}%)",
            flush=True,
        )
    return results


def main() -> None:
    """Run the benchmark and print its figures; the last line is the RESULT line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=PAIRS)
    parser.add_argument("--seconds", type=int, default=RUN_SECONDS)
    parser.add_argument(
        "--userstat", action="store_true", help="userstat=ON: statistics from userstat's tables"
    )
    args = parser.parse_args()
    server_args = [*SERVER_ARGS, *(["--userstat=ON"] if args.userstat else [])]
    with started_mariadb(server_args) as own:
        server = own.server
        prepare(server)
        print(
            f"MariaDB with {DIGEST_SHAPES}+ digests; sysbench oltp_read_only, {THREADS} "
            f"threads, {TABLES}x{TABLE_SIZE} rows; agent polls every {POLL_INTERVAL:g} s; "
            f"statistics from {'userstat' if args.userstat else 'performance_schema'}",
            flush=True,
        )
        run_once(server, WARMUP_SECONDS)
        poller = Poller(server)
        try:
            results = measure(server, poller, args.pairs, args.seconds)
        finally:
            poller.close()
    report(
        results, poller, args.pairs * args.seconds, "userstat" if args.userstat else "perfschema"
    )


def report(results: Results, poller: Poller, polling_seconds: int, source: str) -> None:
    """Print the figures; the last line is the RESULT line."""
    throughput = statistics.median(results.throughput)
    cpu = statistics.median(results.cpu_per_txn)
    share = results.agent_seconds / (polling_seconds * CORES) * 100
    agent_cpu = poller.cpu_seconds / (polling_seconds * CORES) * 100
    poll_ms = statistics.mean(poller.poll_seconds) * 1000
    print(
        f"polls: {len(poller.poll_seconds)}, {poll_ms:.1f} ms each on average "
        f"(performance_schema + statistics), {poller.digests_shipped} digest deltas and "
        f"{poller.stats_rows_shipped} table/index/account deltas shipped"
    )
    print(f"throughput loss per pair: {_listed(results.throughput)}; median {throughput:+.2f}%")
    print(f"server CPU per transaction added: {_listed(results.cpu_per_txn)}; median {cpu:+.2f}%")
    print(
        f"cost of polling in the machine's capacity ({CORES} cores): server time of the "
        f"agent's statements {share:.3f}% + the agent's own CPU {agent_cpu:.3f}% = "
        f"{share + agent_cpu:.3f}% (what a CPU-bound server loses; the throughput pairs "
        "above also carry the noise of everything else running on this machine)"
    )
    print(
        f"RESULT overhead_pct={throughput:.2f} cpu_per_txn_pct={cpu:.2f} "
        f"agent_server_time_pct={share:.3f} agent_cpu_pct={agent_cpu:.3f} "
        f"pairs={len(results.throughput)} "
        f"poll_ms={poll_ms:.1f} poll_interval_s={POLL_INTERVAL:g} stats_source={source}"
    )


def _listed(values: list[float]) -> str:
    return ", ".join(f"{v:+.2f}%" for v in values)


if __name__ == "__main__":
    main()
