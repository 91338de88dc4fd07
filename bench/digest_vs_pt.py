"""Benchmark: `quanta digest` against pt-query-digest on the slow log of each server flavor.

1. Generate (or reuse from ``.bench-cache/``, or take with ``--log FLAVOR=PATH``) a realistic
   slow log of 100,000 events per flavor with :mod:`_slowlog_corpus` (deterministic seed):
   MySQL 8.0, Percona Server 8.0 (``log_slow_verbosity=full``, rate-limit lines) and MariaDB
   10.11 (``log_slow_verbosity=query_plan,innodb,explain``), with the attribute lines those
   servers write.
2. Per flavor, time ``pt-query-digest --output json --limit 100%`` and
   ``quanta digest --format json --limit 0`` with ``--jobs N`` (default 2) and ``--jobs 1``
   on the same file, alternating, ``--runs`` times; keep the best wall-clock time, the least
   CPU time and the peak RSS of each child process. The machine may be shared: the ratios of
   alternated runs are what counts, and the load average is printed with each run.
3. Check agreement: each pt-query-digest class is mapped to a Quanta class by fingerprinting
   its example with Quanta's own function; a pt class agrees when that Quanta class exists
   and the pt classes mapped to it add up to exactly its count and its Query_time. Global
   event count and Query_time must be equal too (``totals=equal``).
4. Time ``quanta digest`` and take its peak RSS on a ten-times-larger log of the first
   flavor: memory should stay flat.

The last line is ``RESULT speedup_min=X speedup_mysql80=.. speedup_percona=..
speedup_mariadb=.. agreement=Y totals=equal speedup_j1_...=.. rss_mb=Z rss_10x_mb=W``
(speedups: pt-query-digest's wall-clock time over quanta's with ``--jobs N``; ``j1``: with
``--jobs 1``; agreement: the lowest of the flavors).
Exit status: 0 when the benchmark ran (whatever the figures), 1 when a tool failed or
produced unreadable output, 2 when a tool is missing.

Usage: ``.venv/bin/python bench/digest_vs_pt.py [--quick] [--flavor F] [--events N]
[--runs R] [--jobs J] [--log FLAVOR=PATH] ...``
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _slowlog_corpus import DEFAULT_CACHE_DIR, FLAVORS, Flavor, cached_slow_log
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

# Relative tolerance on Query_time sums. pt-query-digest also rounds each class's sum to the
# microsecond, so a group of n pt classes may be off by up to n * 0.5 us: allowed as well.
REL_TOL = 1e-6
PT_ROUNDING = 1e-6
SHOWN_FAILURES = 10
REPO_ROOT = Path(__file__).resolve().parent.parent


class BenchError(Exception):
    """A tool is missing or failed; the message says which and why."""

    def __init__(self, message: str, status: int = 1) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Run:
    """One run of a tool: wall-clock seconds, peak RSS, where its stdout went, CPU seconds."""

    seconds: float
    max_rss_kb: int
    output: Path
    cpu_seconds: float = math.nan  # user + system, the child's and its children's


@dataclass(slots=True)
class Disagreement:
    """A pt-query-digest class that does not fall into exactly one Quanta class."""

    pt_fingerprint: str
    quanta_fingerprint: str  # Quanta's fingerprint of the pt class's example
    pt_count: int  # of this pt class
    group_count: int  # of all the pt classes mapped to the same Quanta class
    group_query_time: float
    quanta_count: int | None  # None: no Quanta class has that query_id
    quanta_query_time: float | None


@dataclass(slots=True)
class Agreement:
    """How the classes of the two tools line up."""

    pt_classes: int = 0
    quanta_classes: int = 0
    agreeing: int = 0
    failures: list[Disagreement] = field(default_factory=list)
    # Quanta classes no pt class maps to: (fingerprint, count).
    unmatched_quanta: list[tuple[str, int]] = field(default_factory=list)

    @property
    def fraction(self) -> float:
        """Share of pt-query-digest classes that agree (1.0 when pt found none)."""
        return self.agreeing / self.pt_classes if self.pt_classes else 1.0


@dataclass(frozen=True, slots=True)
class Totals:
    """Event count and total Query_time of one tool's report."""

    events: int
    query_time: float


def sums_match(a: float, b: float, pt_classes: int = 1) -> bool:
    """Whether two Query_time sums are equal, allowing for pt-query-digest's rounding."""
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=PT_ROUNDING * pt_classes)


def check_agreement(pt_report: dict[str, Any], quanta_report: dict[str, Any]) -> Agreement:
    """Map every pt-query-digest class to a Quanta class and check that they partition it.

    A pt class maps to the Quanta class whose query_id is that of Quanta's fingerprint of
    the pt class's example query. It agrees when the Quanta class exists and all pt classes
    mapped to it together have exactly its count and (to rounding) its Query_time sum: then
    each of them falls entirely into that one class.

    Example:
        >>> pt = {"classes": [{"fingerprint": "select ?", "query_count": 2,
        ...        "metrics": {"Query_time": {"sum": "0.5"}}, "example": {"query": "SELECT 1"}}]}
        >>> from quanta.analysis.fingerprint import fingerprint, query_id
        >>> q = {"classes": [{"query_id": query_id(fingerprint("SELECT 1")), "count": 2,
        ...       "fingerprint": "select ?", "query_time": {"sum": 0.5}}]}
        >>> check_agreement(pt, q).fraction
        1.0
    """
    from quanta.analysis.fingerprint import fingerprint, query_id

    quanta_classes = {c["query_id"]: c for c in quanta_report["classes"]}
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    quanta_fingerprints: dict[str, str] = {}
    for pt_class in pt_report["classes"]:
        example = (pt_class.get("example") or {}).get("query")
        # A class without an example cannot be mapped: it gets a group of its own and fails.
        text = fingerprint(example) if example is not None else f"<no example> {id(pt_class)}"
        qid = query_id(text)
        quanta_fingerprints[qid] = text
        groups[qid].append(pt_class)

    result = Agreement(pt_classes=len(pt_report["classes"]), quanta_classes=len(quanta_classes))
    for qid, members in groups.items():
        count = sum(int(c["query_count"]) for c in members)
        total = sum(float(c["metrics"]["Query_time"]["sum"]) for c in members)
        mine = quanta_classes.get(qid)
        if (
            mine is not None
            and int(mine["count"]) == count
            and sums_match(float(mine["query_time"]["sum"]), total, len(members))
        ):
            result.agreeing += len(members)
            continue
        for pt_class in members:
            result.failures.append(
                Disagreement(
                    pt_fingerprint=pt_class.get("fingerprint", "?"),
                    quanta_fingerprint=quanta_fingerprints[qid],
                    pt_count=int(pt_class["query_count"]),
                    group_count=count,
                    group_query_time=total,
                    quanta_count=None if mine is None else int(mine["count"]),
                    quanta_query_time=None if mine is None else float(mine["query_time"]["sum"]),
                )
            )
    result.unmatched_quanta = [
        (c.get("fingerprint", "?"), int(c["count"]))
        for qid, c in quanta_classes.items()
        if qid not in groups
    ]
    return result


def pt_totals(report: dict[str, Any]) -> Totals:
    """Event count and Query_time of a pt-query-digest JSON report."""
    glob = report["global"]
    return Totals(int(glob["query_count"]), float(glob["metrics"]["Query_time"]["sum"]))


def quanta_totals(report: dict[str, Any]) -> Totals:
    """Event count and Query_time of a ``quanta digest --format json`` report."""
    glob = report["global"]
    return Totals(int(glob["events"]), float(glob["query_time"]["sum"]))


def run_tool(name: str, command: Sequence[str], output: Path) -> Run:
    """Run a command with stdout to ``output``; its wall-clock time and peak RSS.

    The peak RSS is the child's own ``ru_maxrss`` from ``wait4`` (kilobytes on Linux), so
    nothing else running on the machine is counted.
    """
    with output.open("wb") as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        try:
            child = subprocess.Popen(command, stdout=out, stderr=err)
        except OSError as exc:
            raise BenchError(f"{name}: cannot run {command[0]}: {exc}", status=2) from exc
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        if child.returncode != 0:
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()[-15:]
            raise BenchError(
                f"{name} failed with exit status {child.returncode}: {' '.join(command)}\n"
                + "\n".join(f"  | {line}" for line in tail)
            )
    return Run(seconds, usage.ru_maxrss, output, usage.ru_utime + usage.ru_stime)


def load_report(name: str, run: Run) -> dict[str, Any]:
    """Parse a tool's JSON output, or fail with a message naming the tool."""
    text = run.output.read_text(encoding="utf-8", errors="replace")
    try:
        report = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BenchError(f"{name} did not print JSON ({exc}): {text[:200]!r}") from exc
    if not isinstance(report, dict) or "classes" not in report or "global" not in report:
        raise BenchError(f"{name} printed JSON without 'global' and 'classes': {text[:200]!r}")
    return report


def find_pt(explicit: str | None) -> list[str]:
    """The pt-query-digest command, checked to run."""
    path = shutil.which(explicit or "pt-query-digest")
    if not path:
        raise BenchError(
            f"{explicit or 'pt-query-digest'} not found or not executable: install "
            "percona-toolkit (apt-get install percona-toolkit) or pass --pt PATH",
            status=2,
        )
    check = subprocess.run([path, "--version"], capture_output=True, text=True, check=False)
    if check.returncode != 0:
        raise BenchError(f"{path} --version failed: {check.stderr.strip()}", status=2)
    return [path]


def find_quanta(explicit: str | None) -> list[str]:
    """The quanta command (next to this Python first), checked to have a digest command."""
    beside = Path(sys.executable).parent / "quanta"
    path = shutil.which(explicit or (str(beside) if beside.exists() else "quanta"))
    if not path:
        raise BenchError(
            f"{explicit or 'quanta'} not found or not executable: run `make install` "
            "or pass --quanta PATH",
            status=2,
        )
    compile_bytecode()
    check = subprocess.run([path, "digest", "--help"], capture_output=True, text=True, check=False)
    if check.returncode != 0:
        detail = (check.stderr or check.stdout).strip().splitlines()[-3:]
        raise BenchError(
            f"`{path} digest` is not available (exit status {check.returncode}): "
            + " ".join(detail),
            status=2,
        )
    return [path]


def compile_bytecode() -> None:
    """Compile Quanta's modules once, as installing a package does.

    The checkout is installed in editable mode, and where PYTHONDONTWRITEBYTECODE is set
    (this machine sets it) every start of `quanta` would otherwise compile its modules from
    source again: a cost an installed Quanta never pays, not part of digesting a log.
    """
    sources = [str(REPO_ROOT / folder) for folder in ("agent", "backend", "worker")]
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", *sources], check=True, stdout=subprocess.DEVNULL
    )


def slow_log(events: int, seed: int, flavor: Flavor, cache_dir: Path) -> Path:
    """The cached log of this size, generated first (with a progress bar) when missing."""
    name = f"{events:,} events, seed {seed}, {flavor}"
    console = Console(stderr=True)
    written = 0

    def note(done: int) -> None:
        nonlocal written
        written = done

    started = time.perf_counter()
    if console.is_terminal:
        with Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
        ) as bar:
            task = bar.add_task(f"generating {name}", total=events)

            def show(done: int) -> None:
                note(done)
                bar.update(task, completed=done)

            path = cached_slow_log(events, seed, flavor=flavor, cache_dir=cache_dir, progress=show)
    else:
        path = cached_slow_log(events, seed, flavor=flavor, cache_dir=cache_dir, progress=note)
    generated = written > 0
    size = path.stat().st_size / 1e6
    how = f"generated in {time.perf_counter() - started:.1f}s" if generated else "cached"
    print(f"log: {path} ({name}, {size:.0f} MB, {how})")
    return path


def warm(path: Path) -> None:
    """Read a file once so that every timed run finds it in the page cache."""
    with path.open("rb") as handle:
        while handle.read(1 << 24):
            pass


def mb(kilobytes: int) -> float:
    """Kilobytes (ru_maxrss on Linux) to megabytes."""
    return kilobytes / 1024


def rate(events: int, seconds: float) -> str:
    """Events per second, readable."""
    return f"{events / seconds:,.0f} events/s"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--events", type=int, default=100_000, help="events in each log")
    parser.add_argument("--seed", type=int, default=42, help="seed of the generated logs")
    parser.add_argument(
        "--flavor",
        action="append",
        choices=FLAVORS,
        help=f"slow-log format, repeatable (default: all of {', '.join(FLAVORS)})",
    )
    parser.add_argument(
        "--log",
        action="append",
        default=[],
        metavar="FLAVOR=PATH",
        help="digest this log for that flavor instead of a generated one (repeatable)",
    )
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each tool (best)")
    parser.add_argument("--jobs", type=int, default=2, help="quanta digest --jobs (also 1)")
    parser.add_argument(
        "--scale",
        type=int,
        default=10,
        help="the memory-check log (first flavor) is this many times larger (0: skip)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a quick run while developing: 20,000 events, 1 run, no memory check",
    )
    parser.add_argument("--pt", help="pt-query-digest executable (default: from PATH)")
    parser.add_argument("--quanta", help="quanta executable (default: beside this Python)")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR)
    args = parser.parse_args(argv)
    if args.quick:
        args.events, args.runs, args.scale = min(args.events, 20_000), 1, 0
    if args.events < 1 or args.runs < 1 or args.scale < 0 or args.jobs < 1:
        parser.error("--events, --runs and --jobs must be positive, --scale not negative")
    args.logs = {}
    for item in args.log:
        flavor, _, path = item.partition("=")
        if flavor not in FLAVORS or not path:
            parser.error(f"--log takes FLAVOR=PATH with FLAVOR one of {FLAVORS}: {item!r}")
        args.logs[flavor] = Path(path)
    args.flavors = list(dict.fromkeys(args.flavor or [*FLAVORS]))
    return args


@dataclass(slots=True)
class FlavorResult:
    """The figures of one flavor's log."""

    flavor: str
    events: int
    pt: Run
    quanta: Run  # --jobs N
    quanta_one: Run  # --jobs 1
    agreement: Agreement
    totals_equal: bool

    @property
    def speedup(self) -> float:
        """pt-query-digest's best wall-clock time over quanta's with --jobs N."""
        return self.pt.seconds / self.quanta.seconds

    @property
    def speedup_one(self) -> float:
        """The same with --jobs 1."""
        return self.pt.seconds / self.quanta_one.seconds

    @property
    def cpu_ratio_one(self) -> float:
        """pt-query-digest's CPU seconds over quanta's with --jobs 1 (less load-dependent)."""
        return self.pt.cpu_seconds / self.quanta_one.cpu_seconds


def best(runs: list[Run]) -> Run:
    """The fastest run, with the highest peak RSS of all (memory does not vary by luck)."""
    fastest = min(runs, key=lambda r: r.seconds)
    return Run(
        fastest.seconds,
        max(r.max_rss_kb for r in runs),
        fastest.output,
        min(r.cpu_seconds for r in runs),
    )


def measure_flavor(
    args: argparse.Namespace,
    flavor: Flavor,
    pt_cmd: list[str],
    quanta_cmd: list[str],
    quanta_opts: list[str],
    out: Path,
) -> FlavorResult:
    """Run both tools on one flavor's log, alternating, and compare their reports."""
    given = args.logs.get(flavor)
    log = given if given is not None else slow_log(args.events, args.seed, flavor, args.cache_dir)
    warm(log)
    pt_runs: list[Run] = []
    quanta_runs: list[Run] = []
    one_runs: list[Run] = []
    for i in range(args.runs):
        pt_runs.append(
            run_tool("pt-query-digest", [*pt_cmd, str(log)], out / f"pt-{flavor}-{i}.json")
        )
        quanta_runs.append(
            run_tool(
                "quanta digest",
                [*quanta_cmd, str(log), *quanta_opts, "--jobs", str(args.jobs)],
                out / f"quanta-{flavor}-{i}.json",
            )
        )
        one_runs.append(
            run_tool(
                "quanta digest --jobs 1",
                [*quanta_cmd, str(log), *quanta_opts, "--jobs", "1"],
                out / f"quanta1-{flavor}-{i}.json",
            )
        )
        print(
            f"{flavor:8} run {i + 1}/{args.runs}  pt-query-digest {pt_runs[-1].seconds:6.2f}s"
            f"  quanta -j{args.jobs} {quanta_runs[-1].seconds:6.2f}s"
            f"  quanta -j1 {one_runs[-1].seconds:6.2f}s"
            f"  (load {os.getloadavg()[0]:.2f})"
        )
    pt_report = load_report("pt-query-digest", pt_runs[-1])
    quanta_report = load_report("quanta digest", quanta_runs[-1])
    one_report = load_report("quanta digest --jobs 1", one_runs[-1])
    agreement = check_agreement(pt_report, quanta_report)
    pt_total, quanta_total = pt_totals(pt_report), quanta_totals(quanta_report)
    one_total = quanta_totals(one_report)
    totals_equal = (
        pt_total.events == quanta_total.events == one_total.events
        and sums_match(pt_total.query_time, quanta_total.query_time)
        and sums_match(pt_total.query_time, one_total.query_time)
    )
    print(
        f"{flavor:8} totals: pt-query-digest {pt_total.events:,} events"
        f" {pt_total.query_time:.6f}s; quanta {quanta_total.events:,} events"
        f" {quanta_total.query_time:.6f}s (skipped {quanta_report['global'].get('skipped', '?')})"
        f": {'equal' if totals_equal else 'DIFFER'}"
    )
    print_agreement(agreement)
    return FlavorResult(
        flavor,
        pt_total.events,
        best(pt_runs),
        best(quanta_runs),
        best(one_runs),
        agreement,
        totals_equal,
    )


def print_agreement(agreement: Agreement) -> None:
    """How the classes line up, and the first disagreements."""
    print(
        f"         {agreement.agreeing} of {agreement.pt_classes} pt-query-digest classes fall"
        f" into exactly one quanta class ({agreement.fraction:.3f});"
        f" {agreement.quanta_classes} quanta classes"
    )
    for failure in agreement.failures[:SHOWN_FAILURES]:
        mine = (
            "no quanta class has that fingerprint"
            if failure.quanta_count is None
            else f"quanta class: {failure.quanta_count}, {failure.quanta_query_time:.6f}s"
        )
        print(f"  pt:     {failure.pt_fingerprint[:160]}")
        print(f"  quanta: {failure.quanta_fingerprint[:160]}")
        print(
            f"          pt class: {failure.pt_count} events; all pt classes mapped there:"
            f" {failure.group_count}, {failure.group_query_time:.6f}s; {mine}"
        )
    if len(agreement.failures) > SHOWN_FAILURES:
        print(f"  ... and {len(agreement.failures) - SHOWN_FAILURES} more")
    if agreement.unmatched_quanta:
        events = sum(count for _, count in agreement.unmatched_quanta)
        print(
            f"         {len(agreement.unmatched_quanta)} quanta classes ({events:,} events) match"
            f" no pt-query-digest class, e.g. {agreement.unmatched_quanta[0][0][:120]}"
        )


def print_table(results: list[FlavorResult], jobs: int, runs: int) -> None:
    """The per-flavor table: wall-clock seconds (best of the runs), CPU seconds, ratios."""
    print()
    print(f"== per flavor (best of {runs}; wall-clock s, CPU s in brackets)")
    print(
        f"{'flavor':8} {'events':>8} {'pt-query-digest':>18} {f'quanta -j{jobs}':>16}"
        f" {'quanta -j1':>16} {f'x -j{jobs}':>7} {'x -j1':>7} {'cpu x -j1':>9}"
        f" {'pt MB':>6} {'q MB':>6}"
    )
    for r in results:
        print(
            f"{r.flavor:8} {r.events:8,} {r.pt.seconds:8.2f} ({r.pt.cpu_seconds:6.2f})"
            f" {r.quanta.seconds:6.2f} ({r.quanta.cpu_seconds:6.2f})"
            f" {r.quanta_one.seconds:6.2f} ({r.quanta_one.cpu_seconds:6.2f})"
            f" {r.speedup:6.1f}x {r.speedup_one:6.1f}x {r.cpu_ratio_one:8.1f}x"
            f" {mb(r.pt.max_rss_kb):6.1f} {mb(r.quanta.max_rss_kb):6.1f}"
        )


def memory_check(
    args: argparse.Namespace,
    flavor: Flavor,
    quanta_cmd: list[str],
    quanta_opts: list[str],
    out: Path,
    rss_kb: int,
) -> float:
    """Peak RSS (MB) of quanta digest on a log `scale` times larger: memory should stay flat."""
    expected = args.events * args.scale
    big = slow_log(expected, args.seed, flavor, args.cache_dir)
    warm(big)
    run = run_tool(
        "quanta digest (large log)",
        [*quanta_cmd, str(big), *quanta_opts, "--jobs", str(args.jobs)],
        out / "quanta-big.json",
    )
    counted = quanta_totals(load_report("quanta digest", run)).events
    rss = mb(run.max_rss_kb)
    print()
    print(f"== {expected:,} {flavor} events ({args.scale}x), quanta digest only")
    print(
        f"quanta digest    {run.seconds:7.2f}s  {rate(expected, run.seconds):>18}"
        f"  peak RSS {rss:7.1f} MB  ({rss / mb(rss_kb):.2f}x the {args.events:,}-event run)"
    )
    if counted != expected:
        print(f"events: quanta counted {counted:,}, the log has {expected:,}")
    return rss


def benchmark(args: argparse.Namespace) -> str:
    """Run the whole benchmark, printing as it goes; return the RESULT line."""
    pt = find_pt(args.pt)
    quanta = find_quanta(args.quanta)
    pt_cmd = [*pt, "--output", "json", "--limit", "100%"]
    quanta_cmd = [*quanta, "digest"]
    quanta_opts = ["--format", "json", "--limit", "0"]
    print(f"pt-query-digest: {' '.join(pt_cmd)} LOG")
    print(f"quanta:          {' '.join(quanta_cmd)} LOG {' '.join(quanta_opts)} --jobs N")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")

    results: list[FlavorResult] = []
    rss_big = math.nan
    with tempfile.TemporaryDirectory(prefix="quanta-bench-") as scratch:
        out = Path(scratch)
        for flavor in args.flavors:
            results.append(measure_flavor(args, flavor, pt_cmd, quanta_cmd, quanta_opts, out))
        if args.scale:
            first = results[0]
            rss_big = memory_check(
                args, first.flavor, quanta_cmd, quanta_opts, out, first.quanta.max_rss_kb
            )

    print_table(results, args.jobs, args.runs)
    print()
    print(
        f"(load average {os.getloadavg()[0]:.2f} at the end; wall-clock times on a machine"
        " that may be shared with other work: the ratios come from alternating runs)"
    )
    speedups = " ".join(f"speedup_{r.flavor}={r.speedup:.1f}" for r in results)
    ones = " ".join(f"speedup_j1_{r.flavor}={r.speedup_one:.1f}" for r in results)
    agreement = min(r.agreement.fraction for r in results)
    totals = "equal" if all(r.totals_equal for r in results) else "DIFFER"
    return (
        f"RESULT speedup_min={min(r.speedup for r in results):.1f} {speedups}"
        f" agreement={agreement:.3f} totals={totals} {ones}"
        f" rss_mb={max(mb(r.quanta.max_rss_kb) for r in results):.1f} rss_10x_mb={rss_big:.1f}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: run the benchmark, print its figures and the RESULT line."""
    args = parse_args(argv)
    try:
        result = benchmark(args)
    except BenchError as exc:
        sys.stdout.flush()
        print(f"error: {exc}", file=sys.stderr)
        return exc.status
    print(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
