"""Agent memory: peak RSS of quanta-agent importing a 1 GB slow log, and tailing one.

Both runs use the same deterministic corpus (bench/_slowlog_corpus.py, MySQL 8.0 flavor by
default, about 1 GB) and ship to a local stand-in server that counts the statements it
receives: the events of a batch of events, the ``count`` column of a batch of minute buckets
(what ``quanta-agent import`` ships):

* import: ``quanta-agent import FILE`` of the whole file;
* tail: ``quanta-agent run`` follows a file that this script grows, entry-aligned chunk by
  chunk, while keeping at most BACKLOG_BYTES ahead of the agent's checkpoint, until the
  whole corpus went through it.

Peak RSS is the kernel's ru_maxrss of each agent process (os.wait4). Both runs must deliver
exactly the corpus' events; the target is under TARGET_MB each.

Usage: .venv/bin/python bench/agent_memory.py [--events N] [--flavor F]
Last line: ``RESULT import_rss_mb=X tail_rss_mb=Y``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._slowlog_corpus import FLAVORS, cached_slow_log

AGENT = Path(sys.executable).parent / "quanta-agent"
EVENTS = 2_100_000  # about 1.04 GB in the mysql80 flavor
SEED = 42
TARGET_MB = 100
CHUNK_BYTES = 8 << 20
BACKLOG_BYTES = 64 << 20
ENTRY_START = b"\n# Time: "
TOKEN = "bench"
DELIVERY_TIMEOUT = 3600.0


class Counter(ThreadingHTTPServer):
    """A stand-in ingest endpoint: counts distinct batches and their events per instance."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.daemon_threads = True
        self.lock = threading.Lock()
        self.batch_ids: set[str] = set()
        self.events: dict[str, int] = {}

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"

    def count(self, instance: str) -> int:
        with self.lock:
            return self.events.get(instance, 0)


def statements(body: dict[str, Any]) -> int:
    """The statements a batch carries: its events, or those folded into its minute buckets
    (``quanta-agent import`` ships buckets as columns: ``buckets["count"]`` per bucket)."""
    buckets = body.get("buckets") or {}
    return len(body.get("events") or ()) + sum(buckets.get("count") or ())


class _Handler(BaseHTTPRequestHandler):
    server: Counter

    def do_POST(self) -> None:
        body = json.loads(gzip.decompress(self.rfile.read(int(self.headers["Content-Length"]))))
        with self.server.lock:
            duplicate = body["batch_id"] in self.server.batch_ids
            if not duplicate:
                self.server.batch_ids.add(body["batch_id"])
                instance = body["instance"]
                self.server.events[instance] = self.server.events.get(instance, 0) + statements(
                    body
                )
        payload = b'{"status":"queued"}'
        self.send_response(200 if duplicate else 202)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def counting_server() -> Iterator[Counter]:
    server = Counter()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def peak_rss_mb(process: subprocess.Popen[bytes]) -> float:
    """Wait for the process; its peak resident set size in MB."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"agent exited with {process.returncode}")
    return usage.ru_maxrss / 1024  # kilobytes on Linux


def measure_import(log: Path, server: Counter) -> tuple[float, int, float]:
    """Import the whole log: (peak RSS MB, events received, seconds)."""
    started = time.monotonic()
    process = subprocess.Popen(
        [str(AGENT), "import", str(log), "--server", server.url, "--token", TOKEN,
         "--instance", "bench-import"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    rss = peak_rss_mb(process)
    assert process.stdout is not None
    print(" ", process.stdout.read().decode().strip())
    return rss, server.count("bench-import"), time.monotonic() - started


def measure_tail(log: Path, server: Counter, expected: int, work: Path) -> tuple[float, float]:
    """Tail a file grown to the whole log: (peak RSS MB, seconds)."""
    live, spool = work / "slow.log", work / "spool"
    live.touch()
    config = {
        "server": server.url,
        "token": TOKEN,
        "spool_dir": str(spool),
        "spool_max_mb": 4096,
        "instances": {
            "bench-tail": {
                "sources": ["slowlog"],
                "slowlog": {"path": str(live), "from_start": True, "idle_grace": 1.0},
            }
        },
    }
    (work / "agent.yaml").write_text(yaml.safe_dump(config))
    started = time.monotonic()
    process = subprocess.Popen(
        [str(AGENT), "run", "--config", str(work / "agent.yaml"), "--log-level", "warning"],
        stdout=subprocess.DEVNULL,
    )
    grow(log, live, spool / "bench-tail" / "checkpoint.json")
    deadline = time.monotonic() + DELIVERY_TIMEOUT
    while server.count("bench-tail") < expected and time.monotonic() < deadline:
        time.sleep(0.5)
    elapsed = time.monotonic() - started
    process.send_signal(signal.SIGTERM)
    return peak_rss_mb(process), elapsed


def grow(source: Path, live: Path, checkpoint: Path) -> None:
    """Append ``source`` to ``live`` in entry-aligned chunks, staying near the agent."""
    with source.open("rb") as src, live.open("ab") as out:
        carry = b""
        while True:
            block = src.read(CHUNK_BYTES)
            data = carry + block
            cut = data.rfind(ENTRY_START) + 1 if block else len(data)
            if cut <= 0:
                cut = len(data)
            out.write(data[:cut])
            out.flush()
            carry = data[cut:]
            if not block:
                return
            while out.tell() - agent_offset(checkpoint) > BACKLOG_BYTES:
                time.sleep(0.2)


def agent_offset(checkpoint: Path) -> int:
    try:
        return int(json.loads(checkpoint.read_text())["offset"])
    except (OSError, ValueError, KeyError):
        return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=EVENTS, help="default: about 1 GB")
    parser.add_argument("--flavor", choices=FLAVORS, default="mysql80")
    args = parser.parse_args()
    log = cached_slow_log(args.events, SEED, flavor=args.flavor)
    size_mb = log.stat().st_size / 1e6
    print(f"corpus: {log.name}, {size_mb:.0f} MB, {args.events} events ({args.flavor})")
    print(f"load average {os.getloadavg()[0]:.2f} at start")
    with counting_server() as server, tempfile.TemporaryDirectory(prefix="quanta-bench-") as tmp:
        import_rss, imported, import_s = measure_import(log, server)
        print(f"import: {imported} events in {import_s:.0f}s ({size_mb / import_s:.1f} MB/s), "
              f"peak RSS {import_rss:.1f} MB")  # fmt: skip
        tail_rss, tail_s = measure_tail(log, server, imported, Path(tmp))
        tailed = server.count("bench-tail")
        print(f"tail:   {tailed} events in {tail_s:.0f}s ({size_mb / tail_s:.1f} MB/s), "
              f"peak RSS {tail_rss:.1f} MB")  # fmt: skip
    if tailed != imported:
        raise SystemExit(f"tail delivered {tailed} events, import {imported}")
    verdict = "within" if max(import_rss, tail_rss) < TARGET_MB else "OVER"
    print(f"target: peak RSS < {TARGET_MB} MB each: {verdict}")
    print(f"RESULT import_rss_mb={import_rss:.1f} tail_rss_mb={tail_rss:.1f}")


if __name__ == "__main__":
    main()
