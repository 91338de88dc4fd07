"""Helpers several test modules share: one copy here instead of one per module.

Fixtures live in tests/fixtures/ (registered in tests/conftest.py); these are plain functions.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from http.cookiejar import CookieJar, DefaultCookiePolicy
from pathlib import Path
from typing import Any, TypeVar

import httpx
import uvicorn
import yaml
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta_agent.aggregates import SlowLogRows
from quanta_agent.payload import to_json
from quanta_agent.policy import ExamplePolicy
from quanta_agent.shipper import HEAD_FIELDS

T = TypeVar("T")

POLL_INTERVAL = 0.05
# The limits Quanta writes before every statement on MariaDB (quanta.monitored.guard).
QUANTA_LIMITS_RE = re.compile(
    r"SET STATEMENT max_statement_time=[\d.]+, lock_wait_timeout=\d+, "
    r"optimizer_search_depth=\d+ FOR "
)


def without_limits(statement: str) -> str:
    """A statement from a server's log without the limits Quanta writes before it."""
    return QUANTA_LIMITS_RE.sub("", statement, count=1)


# Every HTTP call the tests make to a server they started. One client: `httpx.get()` and the
# like build a TLS context per call (35 ms of CPU, though these servers speak plain HTTP), and
# tests poll. Otherwise as a bare `httpx.get()`: no keep-alive, so a server stopped or
# restarted between calls leaves nothing stale behind, and no cookie is ever kept.
HTTP = httpx.Client(
    timeout=30,
    limits=httpx.Limits(max_keepalive_connections=0),
    cookies=CookieJar(DefaultCookiePolicy(allowed_domains=[])),
)


# PyYAML built without libyaml has no CSafeLoader: the same results, only slower.
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_yaml(text: str) -> Any:
    """Test data in YAML, parsed by libyaml: each pytest worker parses every data file as it
    collects, which took PyYAML's pure-Python loader 1.2 s of CPU."""
    return yaml.load(text, Loader=_YAML_LOADER)


_AGENT_FOLLOWS_RE = re.compile(r"(reading|resuming) \S+ (from|at) offset")


def agent_follows(agent_log: str) -> bool:
    """Whether the log of a ``quanta-agent run`` says that its tailer opened its slow log."""
    return _AGENT_FOLLOWS_RE.search(agent_log) is not None


def agent_read_to_end(agent_log: str, slow_log: Path) -> bool:
    """Whether the log of a ``quanta-agent run --log-level debug`` says that its tailer
    handed on every entry of ``slow_log`` as the file is now (its debug line per batch)."""
    return f" of {slow_log}, up to offset {slow_log.stat().st_size}\n" in agent_log


def poll(
    condition: Callable[[], T], timeout: float, *, interval: float = POLL_INTERVAL
) -> T | None:
    """Call ``condition`` until it returns something truthy or ``timeout`` seconds pass.

    Returns that value, or the falsy value of one last call made at the deadline. A wait on
    a condition instead of a fixed sleep: it ends as soon as the thing happened.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    return condition()


def wait_until(
    condition: Callable[[], T],
    timeout: float,
    what: str,
    *,
    interval: float = POLL_INTERVAL,
    on_fail: Callable[[], str] = str,
) -> T:
    """:func:`poll`, failing the test with ``what`` (and ``on_fail()``) when it times out."""
    value = poll(condition, timeout, interval=interval)
    if not value:
        raise AssertionError(f"timed out after {timeout:g}s waiting for {what}\n{on_fail()}")
    return value


def process_all(factory: sessionmaker[Session], settings: Settings | None = None) -> int:
    """Process every stored ingest batch in id order, as the worker would; events counted."""
    from quanta.ingest import service
    from quanta.ingest.models import IngestBatch

    settings = settings or Settings(env="test")
    with session_scope(factory) as session:
        ids = list(session.scalars(select(IngestBatch.id).order_by(IngestBatch.id)))
    counted = 0
    for batch_pk in ids:
        with session_scope(factory) as session:
            counted += service.process_batch(session=session, settings=settings, batch_pk=batch_pk)
    return counted


def roll_up_all(factory: sessionmaker[Session], now: datetime | None = None) -> int:
    """Roll up, as beat would, every minute due by ``now`` (default: all of them, however
    recent); entries rolled up."""
    from quanta.queries import rollup

    now = now or datetime.now(UTC) + timedelta(days=1)
    rolled = 0
    while True:
        with session_scope(factory) as session:
            done = rollup.roll_up_due(session=session, now=now, grace_seconds=0)
        if not done:
            return rolled
        rolled += done


def healthy(url: str) -> bool:
    """Whether a Quanta API at ``url`` answers its liveness probe."""
    try:
        return HTTP.get(url + "/healthz", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


def wait_until_healthy(
    url: str,
    process: subprocess.Popen[Any] | None = None,
    timeout: float = 60.0,
    on_fail: Callable[[], str] = str,
) -> None:
    """Wait until the API at ``url`` answers /healthz; fail at once if ``process`` exits."""

    def up() -> bool:
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the server exited with {process.returncode}\n{on_fail()}")
        return healthy(url)

    wait_until(up, timeout, f"{url}/healthz", interval=0.1, on_fail=on_fail)


@contextlib.contextmanager
def serving(app: Any, timeout: float = 20.0) -> Iterator[str]:
    """Serve an ASGI app with uvicorn in a thread on a free port; yield its base URL.

    For tests whose client is a separate process (a CLI, an agent) that needs a real port.
    """
    from tests.fixtures.servers import free_port

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        wait_until(lambda: server.started, timeout, "uvicorn to start")
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def rows_as_sent(rows: SlowLogRows) -> dict[str, Any]:
    """An agent's bucket rows (queries, buckets, picks) as JSON values, without a batch head,
    as the agent writes them."""
    batch = rows.batch(batch_id="-", instance="-", policy=ExamplePolicy.FULL)
    sent: dict[str, Any] = json.loads(to_json(batch, exclude=set(HEAD_FIELDS)))
    return sent
