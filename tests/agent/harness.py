"""What the agent's end-to-end tests run against: a stand-in Quanta server and the agent.

:class:`Receiver` is a real HTTP server on 127.0.0.1 that answers like the ingest API
(202 for a new batch_id, 200 for one it already has) and can be taken down (connections
refused) or made busy (503) for a while. :class:`AgentProcess` runs ``quanta-agent run``
as a child process that a test can SIGTERM or SIGKILL.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import signal
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

from quanta.analysis.fingerprint import fingerprint
from quanta.analysis.redact import redact
from quanta.analysis.slowlog import parse_slow_log
from quanta_agent.events import event_to_wire
from quanta_agent.payload import to_json
from tests.fixtures.servers import free_port
from tests.helpers import agent_follows, agent_read_to_end, poll

AGENT = Path(sys.executable).parent / "quanta-agent"
WAIT_TIMEOUT = 30.0
STOP_TIMEOUT = 15.0


class Receiver:
    """A stand-in for the Quanta server's ingest endpoint."""

    def __init__(self) -> None:
        self.port = free_port()
        self.lock = threading.Lock()
        self.posts: list[dict[str, Any]] = []  # every batch received, resent ones included
        self.unique: dict[str, dict[str, Any]] = {}  # by batch_id, first arrival order
        self.reports: list[dict[str, Any]] = []  # status reports: batches of no rows
        self.takes_reports = True  # False: answer reports as a server older than them
        self.busy = False
        self._server: ThreadingHTTPServer | None = None
        self.up()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def up(self) -> None:
        """Accept connections (again, on the same port)."""
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                body = json.loads(gzip.decompress(raw))
                status, answer = receiver.answer(body, self.headers.get("Authorization", ""))
                payload = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self._server = server

    def down(self) -> None:
        """Close the port: connections are refused until :meth:`up`."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def answer(self, body: dict[str, Any], authorization: str) -> tuple[int, dict[str, Any]]:
        if authorization != "Bearer tok":
            return 401, {"detail": "bad token"}
        if self.busy:
            return 503, {"detail": "busy"}
        if "agent" in body and set(body) <= {"batch_id", "instance", "source", "agent"}:
            if not self.takes_reports:  # extra="forbid" on the batch, as before reports
                return 422, {"detail": "Invalid batch: agent: Extra inputs are not permitted"}
            with self.lock:
                self.reports.append(body)
            return 202, {"status": "done"}
        with self.lock:
            self.posts.append(body)
            known = self.unique.setdefault(body["batch_id"], body) is not body
        return (200 if known else 202), {"status": "queued"}

    def reports_of(self, source: str) -> list[dict[str, Any]]:
        """The ``agent`` member of each status report of ``source``, oldest first."""
        with self.lock:
            return [r["agent"] for r in self.reports if r["source"] == source]

    def batches(self, source: str) -> list[dict[str, Any]]:
        """The distinct batches of ``source``, in order of first arrival."""
        with self.lock:
            return [b for b in self.unique.values() if b["source"] == source]

    def events(self) -> list[dict[str, Any]]:
        """The events of every distinct slow-log batch, in order of first arrival."""
        return [event for batch in self.batches("slowlog") for event in batch["events"]]

    def bucket_counts(self) -> Counter[tuple[str, str]]:
        """Statements per (fingerprint, minute) in every distinct slow-log bucket batch."""
        counts: Counter[tuple[str, str]] = Counter()
        for batch in self.batches("slowlog"):
            buckets = batch["buckets"]
            for query, start, count in zip(
                buckets["query"], buckets["start"], buckets["count"], strict=True
            ):
                counts[batch["queries"][query]["fingerprint"], start] += count
        return counts

    def resent_batches_are_identical(self) -> bool:
        with self.lock:
            return all(self.unique[post["batch_id"]] == post for post in self.posts)


def expected_events(*logs: Path) -> list[dict[str, Any]]:
    """What the agent must ship: every entry of these logs, read one after the other,
    passwords redacted."""

    def lines() -> Iterable[bytes]:
        for path in logs:
            with path.open("rb") as handle:
                yield from handle

    events = [json.loads(to_json(event_to_wire(e, e.ts))) for e in parse_slow_log(lines()) if e.ts]
    return [{**event, "query": redact(event["query"])} for event in events]


def expected_bucket_counts(*logs: Path) -> Counter[tuple[str, str]]:
    """Statements per (fingerprint, minute) of these logs, read one after the other."""
    return Counter(
        (fingerprint(e["query"]), datetime.fromisoformat(e["ts"]).replace(second=0,
         microsecond=0).isoformat())
        for e in expected_events(*logs)
    )  # fmt: skip


def wait_for(condition: Callable[[], bool], timeout: float = WAIT_TIMEOUT) -> bool:
    """Poll ``condition`` until it holds or ``timeout`` passes; return its last value."""
    return bool(poll(condition, timeout))


def write_config(path: Path, config: dict[str, Any]) -> Path:
    path.write_text(yaml.safe_dump(config))
    return path


class AgentProcess:
    """``quanta-agent run --config FILE`` as a child process; its log goes to a file."""

    def __init__(self, config: Path, log_path: Path) -> None:
        self.config = config
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, *, wait: bool = True) -> None:
        """Start the agent; with ``wait``, return once it has opened the slow log."""
        seen = self.log_path.stat().st_size if self.log_path.exists() else 0
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [str(AGENT), "run", "--config", str(self.config), "--log-level", "debug"],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        if wait:
            assert wait_for(lambda: agent_follows(self.log()[seen:])), self.log()[seen:]

    def wait_read_to_end(self, slow_log: Path) -> None:
        """Wait until the agent has handed on every entry ``slow_log`` holds now."""
        assert wait_for(lambda: agent_read_to_end(self.log(), slow_log)), self.log()[-3000:]

    def kill(self) -> None:
        """SIGKILL: no flush, no checkpoint, nothing."""
        assert self.process is not None
        self.process.kill()
        self.process.wait()

    def terminate(self) -> int:
        """SIGTERM and wait; return the exit code."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(STOP_TIMEOUT)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()
