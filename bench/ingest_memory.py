"""What one oversized batch costs the API: its resident memory before and after a gzip body of
``--events`` tiny events (1,000,000 by default: 162-220 KB on the wire, far past the
50,000-event limit) is POSTed to /api/v1/ingest, on a real `quanta serve` (uvicorn) process
over a throw-away SQLite store.

Usage: .venv/bin/python bench/ingest_memory.py [--events N] [--repeat R]
Last line: ``RESULT status=413 rss_before_mb=X rss_after_mb=Y growth_mb=Z seconds=S``.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

VENV_BIN = Path(sys.executable).parent
TOKEN = "qnt_memory_bench_admin_token"
START_TIMEOUT = 60.0


@dataclass
class Api:
    """A `quanta serve` process."""

    proc: subprocess.Popen[bytes]
    url: str

    def rss_mb(self) -> float:
        """Resident set size of the API process, in MB (from /proc)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS")


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def running_api(data_dir: Path, **settings: str) -> Iterator[Api]:
    """`quanta migrate` then `quanta serve` on a SQLite store in ``data_dir``; killed after."""
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUANTA_")}
    env.update(
        QUANTA_ENV="test",
        QUANTA_DATA_DIR=str(data_dir),
        QUANTA_ADMIN_TOKEN=TOKEN,
        QUANTA_HOST="127.0.0.1",
        QUANTA_PORT=str(port),
        QUANTA_INGEST_RATE_LIMIT="100000/minute",
        QUANTA_LOG_LEVEL="WARNING",
        **{f"QUANTA_{k.upper()}": v for k, v in settings.items()},
    )
    subprocess.run([str(VENV_BIN / "quanta"), "migrate"], env=env, check=True, capture_output=True)
    log = (data_dir / "api.log").open("wb")
    proc = subprocess.Popen([str(VENV_BIN / "quanta"), "serve"], env=env, stdout=log, stderr=log)
    api = Api(proc, f"http://127.0.0.1:{port}")
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"quanta serve exited: {(data_dir / 'api.log').read_text()}")
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(api.url + "/healthz", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("quanta serve did not answer")
            time.sleep(0.2)
        yield api
    finally:
        proc.kill()
        proc.wait()
        log.close()


def tiny_events_body(events: int, batch_id: str = "big") -> bytes:
    """A gzip batch of ``events`` valid, tiny events (they compress to almost nothing)."""
    ts = (datetime.now(UTC) - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    event = b'{"ts":"%s","query":"SELECT 1","query_time":0.1}' % ts.encode()
    head = b'{"batch_id":"%s","instance":"db1","events":[' % batch_id.encode()
    raw = head + b",".join([event] * events) + b"]}"
    return gzip.compress(raw, compresslevel=9)


def post(api: Api, body: bytes) -> httpx.Response:
    """POST a gzip body to /api/v1/ingest with the admin token."""
    return httpx.post(
        api.url + "/api/v1/ingest",
        content=body,
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Encoding": "gzip"},
        timeout=300,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    body = tiny_events_body(args.events)
    print(f"body: {args.events} events, {len(body) / 1024:.0f} KB gzip")
    with tempfile.TemporaryDirectory() as tmp, running_api(Path(tmp)) as api:
        post(api, tiny_events_body(1, "warm-up"))  # the request path is warm
        before = api.rss_mb()
        started = time.perf_counter()
        statuses = []
        for n in range(args.repeat):
            statuses.append(post(api, body).status_code)
            print(f"request {n + 1}: {statuses[-1]}, API RSS {api.rss_mb():.0f} MB")
        seconds = (time.perf_counter() - started) / args.repeat
        after = api.rss_mb()
    print(
        f"RESULT status={statuses[-1]} rss_before_mb={before:.0f} rss_after_mb={after:.0f} "
        f"growth_mb={after - before:.0f} seconds={seconds:.2f}"
    )


if __name__ == "__main__":
    main()
