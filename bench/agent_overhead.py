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

Then what production stage profiles cost (issue 43): pairs with the stage consumers and
instruments on against off (quanta_agent.stages' ENABLE_STAGES / DISABLE_STAGES, the
statements quanta-agent check prints), and with the wait consumers on against off (stages on
in both), the agent polling in every run; the agent's own CPU per poll with and without the
stage reads beside it. Last, the share of statements sampled at 1,000 statements/s (sysbench
oltp_point_select --rate=1000) with the agent's default 60 s poll: executions sampled over
the digest table's count, from the batches' stage_samples.

Usage: .venv/bin/python bench/agent_overhead.py [--pairs N] [--seconds S] [--userstat]
       [--stage-pairs N] [--ratio-seconds S]
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
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quanta_agent.config import InstanceSettings
from quanta_agent.perfschema import PerfSchemaCollector, make_perfschema_collector
from quanta_agent.stages import DISABLE_STAGES, DISABLE_WAITS, ENABLE_STAGES, ENABLE_WAITS
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
# History ring buffers as large as a production server autosizes them (10,000 each): the
# test fixture's small server would size them at 1,000.
SERVER_ARGS = [
    "--slow-query-log=OFF",
    "--innodb-buffer-pool-size=128M",
    "--performance-schema-events-statements-history-long-size=10000",
    "--performance-schema-events-stages-history-long-size=10000",
    "--performance-schema-events-waits-history-long-size=10000",
]
STAGE_PAIRS = 8
RATIO_RATE = 1000  # statements per second
RATIO_POLL_INTERVAL = 60.0  # the agent's default poll_interval
RATIO_POLLS = 2
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
    parser.add_argument("--stage-pairs", type=int, default=STAGE_PAIRS)
    parser.add_argument(
        "--ratio-seconds",
        type=int,
        default=int(RATIO_POLL_INTERVAL * (RATIO_POLLS + 1)),
        help="how long the agent polls every 60 s at 1,000 statements/s (stages sampled)",
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
            stages = measure_consumers(
                server, poller, args.stage_pairs, args.seconds,
                off=DISABLE_STAGES, on=ENABLE_STAGES, what="stages",
            )  # fmt: skip
            apply(server, ENABLE_STAGES)
            waits = measure_consumers(
                server, poller, args.stage_pairs, args.seconds,
                off=DISABLE_WAITS, on=ENABLE_WAITS, what="waits",
            )  # fmt: skip
        finally:
            poller.close()
        rate = at_rate(server, args.ratio_seconds)
    fields = report(
        results, poller, args.pairs * args.seconds, "userstat" if args.userstat else "perfschema"
    )
    report_stages(fields, stages, waits, rate)


def report(results: Results, poller: Poller, polling_seconds: int, source: str) -> str:
    """Print the agent's figures; return them as the RESULT line's first fields."""
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
    return (
        f"overhead_pct={throughput:.2f} cpu_per_txn_pct={cpu:.2f} "
        f"agent_server_time_pct={share:.3f} agent_cpu_pct={agent_cpu:.3f} "
        f"pairs={len(results.throughput)} "
        f"poll_ms={poll_ms:.1f} poll_interval_s={POLL_INTERVAL:g} stats_source={source}"
    )


def apply(server: MariaDBServer, statements: tuple[str, ...]) -> None:
    """Run setup statements (consumers, instruments) as the server's administrator."""
    with contextlib.closing(server.connect()) as conn, conn.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)


@dataclass
class ConsumerCost:
    """Per pair: throughput loss and server CPU per transaction added with the consumers on."""

    what: str
    throughput: list[float] = field(default_factory=list)
    cpu_per_txn: list[float] = field(default_factory=list)


def measure_consumers(
    server: MariaDBServer,
    poller: Poller,
    pairs: int,
    seconds: int,
    *,
    off: tuple[str, ...],
    on: tuple[str, ...],
    what: str,
) -> ConsumerCost:
    """Alternate runs with the consumers off and on (ABBA), the agent polling in both."""
    cost = ConsumerCost(what)
    for pair in range(pairs):
        order = (False, True) if pair % 2 == 0 else (True, False)
        runs = {}
        for enabled in order:
            apply(server, on if enabled else off)
            poller.switch(True)
            runs[enabled] = run_once(server, seconds)
            poller.switch(False)
        apply(server, off)
        cost.throughput.append((runs[False].tps - runs[True].tps) / runs[False].tps * 100)
        cost.cpu_per_txn.append(
            (runs[True].cpu_per_txn - runs[False].cpu_per_txn) / runs[False].cpu_per_txn * 100
        )
        print(
            f"{what} pair {pair + 1}: off {runs[False].tps:.1f} tps, on {runs[True].tps:.1f} "
            f"tps ({cost.throughput[-1]:+.2f}%); server CPU per transaction "
            f"{cost.cpu_per_txn[-1]:+.2f}%",
            flush=True,
        )
    return cost


@dataclass(frozen=True)
class AtRate:
    """At RATIO_RATE statements/s: the agent's CPU per poll without and with stage reads, and
    the statements whose stages it sampled of those the digest table counted."""

    poll_cpu_off_ms: float
    poll_cpu_on_ms: float
    stage_rows: int
    sampled: int
    total: int
    seconds: float

    @property
    def share(self) -> float:
        """sampled / total (0 without statements)."""
        return self.sampled / self.total if self.total else 0.0


CPU_POLLS = 3
CPU_POLL_INTERVAL = 10.0


def at_rate(server: MariaDBServer, seconds: int) -> AtRate:
    """sysbench point selects at RATIO_RATE statements/s (plain statements: MariaDB does not
    digest server-side prepared ones); the agent polls every CPU_POLL_INTERVAL seconds with
    stages off, then on, for its CPU per poll; then a new agent polls every
    RATIO_POLL_INTERVAL seconds (the default) with stages and waits on, for the share of
    statements sampled."""
    cpu_seconds = int(2 * (CPU_POLLS + 1) * CPU_POLL_INTERVAL) + 10
    with rated_load(server, cpu_seconds + seconds):
        apply(server, DISABLE_STAGES + DISABLE_WAITS)
        collector = agent_collector(server)
        off = timed_polls(collector, CPU_POLLS, CPU_POLL_INTERVAL)
        apply(server, ENABLE_STAGES + ENABLE_WAITS)
        on = timed_polls(collector, CPU_POLLS, CPU_POLL_INTERVAL)
        collector.close()
        collector = agent_collector(server)
        started = time.monotonic()
        ratio = timed_polls(collector, RATIO_POLLS, RATIO_POLL_INTERVAL)
        elapsed = time.monotonic() - started
        collector.close()
    return AtRate(
        poll_cpu_off_ms=statistics.mean(off.cpu) * 1000,
        poll_cpu_on_ms=statistics.mean(on.cpu) * 1000,
        stage_rows=on.stage_rows,
        sampled=ratio.sampled,
        total=ratio.total,
        seconds=elapsed,
    )


@contextlib.contextmanager
def rated_load(server: MariaDBServer, seconds: int) -> Iterator[None]:
    """sysbench oltp_point_select at RATIO_RATE statements/s for ``seconds``."""
    argv = [
        SYSBENCH, "oltp_point_select", "--db-driver=mysql", f"--mysql-host={server.host}",
        f"--mysql-port={server.port}", f"--mysql-user={server.user}", "--mysql-db=sbtest",
        f"--tables={TABLES}", f"--table-size={TABLE_SIZE}", f"--threads={THREADS}",
        "--db-ps-mode=disable", f"--rate={RATIO_RATE}", f"--time={seconds}",
        "--report-interval=0", "run",
    ]  # fmt: skip
    load = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    try:
        time.sleep(3)  # connected and running at its rate
        yield
    finally:
        load.wait()


def agent_collector(server: MariaDBServer) -> PerfSchemaCollector:
    """The agent's performance_schema collector, as its least-privileged account."""
    instance = InstanceSettings(
        name="rate",
        dsn=f"mysql://{AGENT_USER}:{AGENT_USER}@{server.host}:{server.port}/",
        sources=("perfschema",),
    )
    return make_perfschema_collector(instance)


@dataclass
class Polls:
    """What timed polls measured: CPU per poll, stage rows, statements sampled of counted."""

    cpu: list[float] = field(default_factory=list)
    stage_rows: int = 0
    sampled: int = 0
    total: int = 0


def timed_polls(collector: PerfSchemaCollector, count: int, interval: float) -> Polls:
    """A baseline poll, then ``count`` polls ``interval`` seconds apart, measured."""
    collector.poll()
    polls = Polls()
    started = time.monotonic()
    for n in range(1, count + 1):
        time.sleep(max(0.0, started + n * interval - time.monotonic()))
        cpu_started = time.thread_time()
        body = collector.poll()
        polls.cpu.append(time.thread_time() - cpu_started)
        rows = body.get("stage_samples", [])
        polls.stage_rows += len(rows)
        for row in rows:
            if "performance_schema" not in row["fingerprint"]:  # the bench's own reads
                polls.sampled += row["executions_sampled"]
                polls.total += row["executions_total"]
    return polls


def report_stages(agent: str, stages: ConsumerCost, waits: ConsumerCost, rate: AtRate) -> None:
    """Print the stage profiles' figures and the RESULT line with every figure."""
    for cost in (stages, waits):
        print(
            f"{cost.what} on: throughput loss per pair {_listed(cost.throughput)}; median "
            f"{statistics.median(cost.throughput):+.2f}%; server CPU per transaction added "
            f"{_listed(cost.cpu_per_txn)}; median {statistics.median(cost.cpu_per_txn):+.2f}%"
        )
    extra = rate.poll_cpu_on_ms - rate.poll_cpu_off_ms
    print(
        f"at {RATIO_RATE} statements/s: the agent's CPU per poll {rate.poll_cpu_off_ms:.1f} ms "
        f"with stages off, {rate.poll_cpu_on_ms:.1f} ms with stages and waits on (+{extra:.1f} "
        f"ms, {rate.stage_rows} stage rows in {CPU_POLLS} polls {CPU_POLL_INTERVAL:g} s apart: "
        f"{extra / (RATIO_POLL_INTERVAL * 1000) * 100:.3f}% of a core at the default 60 s poll)"
    )
    print(
        f"at {RATIO_RATE} statements/s, polls every {RATIO_POLL_INTERVAL:g} s: stages of "
        f"{rate.sampled} of {rate.total} statements sampled ({rate.share:.2%}) in "
        f"{rate.seconds:.0f} s"
    )
    print(
        f"RESULT {agent} "
        f"stages_overhead_pct={statistics.median(stages.throughput):.2f} "
        f"waits_overhead_pct={statistics.median(waits.throughput):.2f} "
        f"stages_cpu_per_txn_pct={statistics.median(stages.cpu_per_txn):.2f} "
        f"waits_cpu_per_txn_pct={statistics.median(waits.cpu_per_txn):.2f} "
        f"stage_poll_cpu_ms={extra:.1f} "
        f"sampled_ratio_at_1000_per_s={rate.share:.4f} "
        f"ratio_poll_interval_s={RATIO_POLL_INTERVAL:g}"
    )


def _listed(values: list[float]) -> str:
    return ", ".join(f"{v:+.2f}%" for v in values)


if __name__ == "__main__":
    main()
