"""Benchmark: `quanta digest` against pt-query-digest on the same slow log, in one run.

1. Generate (or reuse from ``.bench-cache/``) a realistic MySQL 8.0 slow log of 100,000 events
   and one ten times larger, with :mod:`_slowlog_corpus` (deterministic seed).
2. Time ``pt-query-digest --output json --limit 100%`` and
   ``quanta digest --format json --limit 0`` on the same file, alternating, each at least
   twice; keep the best wall-clock time and the peak RSS of each child process.
3. Check agreement: each pt-query-digest class is mapped to a Quanta class by fingerprinting
   its example with Quanta's own function; a pt class agrees when that Quanta class exists
   and the pt classes mapped to it add up to exactly its count and its Query_time. Global
   event count and Query_time must be equal too.
4. Time ``quanta digest`` and take its peak RSS on the ten-times-larger log: memory should
   stay flat.

The last line is ``RESULT speedup_vs_pt=X agreement=Y rss_mb=Z rss_10x_mb=W``.
Exit status: 0 when the benchmark ran (whatever the figures), 1 when a tool failed or
produced unreadable output, 2 when a tool is missing.

Usage: ``.venv/bin/python bench/digest_vs_pt.py [--events N] [--seed S] [--runs R] ...``
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
    """One run of a tool: wall-clock seconds, peak RSS and where its stdout went."""

    seconds: float
    max_rss_kb: int
    output: Path


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
    return Run(seconds, usage.ru_maxrss, output)


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
    parser.add_argument("--events", type=int, default=100_000, help="events in the log")
    parser.add_argument("--seed", type=int, default=42, help="seed of the generated log")
    parser.add_argument("--flavor", choices=FLAVORS, default="mysql80", help="slow-log format")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each tool (best)")
    parser.add_argument(
        "--scale",
        type=int,
        default=10,
        help="the memory-check log is this many times larger (0: skip)",
    )
    parser.add_argument("--pt", help="pt-query-digest executable (default: from PATH)")
    parser.add_argument("--quanta", help="quanta executable (default: beside this Python)")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR)
    args = parser.parse_args(argv)
    if args.events < 1 or args.runs < 1 or args.scale < 0:
        parser.error("--events and --runs must be positive, --scale not negative")
    return args


def benchmark(args: argparse.Namespace) -> str:
    """Run the whole benchmark, printing as it goes; return the RESULT line."""
    pt = find_pt(args.pt)
    quanta = find_quanta(args.quanta)
    pt_cmd = [*pt, "--output", "json", "--limit", "100%"]
    quanta_cmd = [*quanta, "digest"]
    quanta_opts = ["--format", "json", "--limit", "0"]
    print(f"pt-query-digest: {' '.join(pt_cmd)} LOG")
    print(f"quanta:          {' '.join(quanta_cmd)} LOG {' '.join(quanta_opts)}")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")

    log = slow_log(args.events, args.seed, args.flavor, args.cache_dir)
    big = (
        slow_log(args.events * args.scale, args.seed, args.flavor, args.cache_dir)
        if args.scale
        else None
    )

    with tempfile.TemporaryDirectory(prefix="quanta-bench-") as scratch:
        out = Path(scratch)
        warm(log)
        pt_runs: list[Run] = []
        quanta_runs: list[Run] = []
        for i in range(args.runs):
            pt_run = run_tool("pt-query-digest", [*pt_cmd, str(log)], out / f"pt-{i}.json")
            pt_runs.append(pt_run)
            print(
                f"run {i + 1}/{args.runs}  pt-query-digest {pt_run.seconds:7.2f}s"
                f"  {mb(pt_run.max_rss_kb):6.1f} MB"
            )
            q_run = run_tool(
                "quanta digest", [*quanta_cmd, str(log), *quanta_opts], out / f"quanta-{i}.json"
            )
            quanta_runs.append(q_run)
            print(
                f"run {i + 1}/{args.runs}  quanta digest   {q_run.seconds:7.2f}s"
                f"  {mb(q_run.max_rss_kb):6.1f} MB"
            )
        pt_report = load_report("pt-query-digest", pt_runs[-1])
        quanta_report = load_report("quanta digest", quanta_runs[-1])

        big_run: Run | None = None
        big_events = 0
        if big is not None:
            warm(big)
            big_run = run_tool(
                "quanta digest (large log)",
                [*quanta_cmd, str(big), *quanta_opts],
                out / "quanta-big.json",
            )
            big_events = quanta_totals(load_report("quanta digest", big_run)).events

    pt_best = min(r.seconds for r in pt_runs)
    quanta_best = min(r.seconds for r in quanta_runs)
    pt_rss = max(r.max_rss_kb for r in pt_runs)
    quanta_rss = max(r.max_rss_kb for r in quanta_runs)
    speedup = pt_best / quanta_best

    agreement = check_agreement(pt_report, quanta_report)
    pt_total, quanta_total = pt_totals(pt_report), quanta_totals(quanta_report)
    totals_equal = pt_total.events == quanta_total.events and sums_match(
        pt_total.query_time, quanta_total.query_time
    )

    print()
    print(f"== {args.events:,} events (best of {args.runs})")
    print(
        f"pt-query-digest  {pt_best:7.2f}s  {rate(args.events, pt_best):>18}"
        f"  peak RSS {mb(pt_rss):7.1f} MB  {agreement.pt_classes} classes"
    )
    print(
        f"quanta digest    {quanta_best:7.2f}s  {rate(args.events, quanta_best):>18}"
        f"  peak RSS {mb(quanta_rss):7.1f} MB  {agreement.quanta_classes} classes"
    )
    print(f"speedup: {speedup:.1f}x pt-query-digest")
    print()
    print("== totals")
    print(
        f"events:     pt-query-digest {pt_total.events:,}   quanta {quanta_total.events:,}"
        f"   (quanta skipped {quanta_report['global'].get('skipped', '?')})"
    )
    print(
        f"Query_time: pt-query-digest {pt_total.query_time:.6f}s   "
        f"quanta {quanta_total.query_time:.6f}s"
    )
    print(f"totals {'equal' if totals_equal else 'DIFFER'}")
    print()
    print("== agreement")
    print(
        f"{agreement.agreeing} of {agreement.pt_classes} pt-query-digest classes fall into exactly"
        f" one quanta class ({agreement.fraction:.3f}); {agreement.quanta_classes} quanta classes"
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
            f"{len(agreement.unmatched_quanta)} quanta classes ({events:,} events) match no"
            f" pt-query-digest class, e.g. {agreement.unmatched_quanta[0][0][:120]}"
        )

    rss_big = math.nan
    if big_run is not None:
        rss_big = mb(big_run.max_rss_kb)
        expected = args.events * args.scale
        print()
        print(f"== {expected:,} events ({args.scale}x), quanta digest only")
        print(
            f"quanta digest    {big_run.seconds:7.2f}s  {rate(expected, big_run.seconds):>18}"
            f"  peak RSS {rss_big:7.1f} MB  ({rss_big / mb(quanta_rss):.2f}x the"
            f" {args.events:,}-event run)"
        )
        if big_events != expected:
            print(f"events: quanta counted {big_events:,}, the log has {expected:,}")
    print()
    print("(wall-clock times on a machine that may be shared with other work)")
    return (
        f"RESULT speedup_vs_pt={speedup:.1f} agreement={agreement.fraction:.3f}"
        f" rss_mb={mb(quanta_rss):.1f} rss_10x_mb={rss_big:.1f}"
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
