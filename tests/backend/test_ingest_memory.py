"""What an oversized batch costs a real API process (`quanta serve`, uvicorn, on SQLite): a
162-220 KB gzip body of 1,000,000 tiny events is refused with a 413 after its first 50,000
are counted, and the process's resident memory barely moves (it grew by 1.5 GB, for good,
when the limit was checked after pydantic had built the whole batch)."""

import gzip
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from quanta.core.config import Settings
from tests.fixtures.servers import free_port
from tests.fixtures.store import migrate_store
from tests.helpers import HTTP, wait_until_healthy

VENV_BIN = Path(sys.executable).parent
TOKEN = "qnt_memory_test_admin_token"
EVENTS = 1_000_000
# Measured: about +13 MB after four such requests (+1,470 MB after the first one before).
MAX_GROWTH_MB = 100


@dataclass
class Api:
    """A `quanta serve` process and its address."""

    proc: "subprocess.Popen[bytes]"
    url: str

    def rss_mb(self) -> float:
        """The process's resident set size (VmRSS), in MB."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise AssertionError("no VmRSS in /proc")

    def ingest(self, body: bytes) -> httpx.Response:
        return HTTP.post(
            self.url + "/api/v1/ingest",
            content=body,
            headers={"Authorization": f"Bearer {TOKEN}", "Content-Encoding": "gzip"},
            timeout=120,
        )


@pytest.fixture
def api(tmp_path: Path) -> Iterator[Api]:
    """`quanta migrate` and `quanta serve` on a fresh SQLite store; killed after the test."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("QUANTA_")}
    env.update(
        QUANTA_ENV="test",
        QUANTA_DATA_DIR=str(tmp_path / "data"),
        QUANTA_ADMIN_TOKEN=TOKEN,
        QUANTA_HOST="127.0.0.1",
        QUANTA_PORT=str(port),
        QUANTA_LOG_LEVEL="WARNING",
    )
    quanta = str(VENV_BIN / "quanta")
    # The store as `quanta migrate` leaves it (that command runs in tests/fixtures/cluster.py).
    migrate_store(Settings(env="test", data_dir=tmp_path / "data", database_url=None))
    log_path = tmp_path / "api.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen([quanta, "serve"], env=env, stdout=log, stderr=log)
        server = Api(proc, f"http://127.0.0.1:{port}")
        try:
            wait_until_healthy(server.url, proc, 60, on_fail=log_path.read_text)
            yield server
        finally:
            proc.kill()
            proc.wait()


def tiny_events(count: int, batch_id: str) -> bytes:
    """A gzip batch of ``count`` valid one-line events (they compress ~300:1)."""
    ts = (datetime.now(UTC) - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    event = b'{"ts":"%s","query":"SELECT 1","query_time":0.1}' % ts.encode()
    head = b'{"batch_id":"%s","instance":"db1","events":[' % batch_id.encode()
    return gzip.compress(head + b",".join([event] * count) + b"]}", compresslevel=9)


def test_a_million_tiny_events_cost_the_api_almost_no_memory(api: Api) -> None:
    warm = api.ingest(tiny_events(2, "warm-up"))  # the request path and its imports are warm
    assert warm.status_code == 202, warm.text
    body = tiny_events(EVENTS, "big")
    assert len(body) < 300_000
    before = api.rss_mb()
    started = time.perf_counter()

    answers = [api.ingest(body) for _ in range(3)]

    growth = api.rss_mb() - before
    assert [a.status_code for a in answers] == [413] * 3
    assert answers[0].json()["detail"] == ("events has more than 50000 items; the limit is 50000.")
    assert growth < MAX_GROWTH_MB, f"API RSS grew by {growth:.0f} MB"
    assert (time.perf_counter() - started) / 3 < 5.0  # it took 13 s a request before


def test_a_batch_at_the_limit_is_still_accepted(api: Api) -> None:
    answer = api.ingest(tiny_events(50_000, "at-the-limit"))
    assert answer.status_code == 202, answer.text
    assert answer.json()["events"] == 50_000


def test_a_list_of_bad_rows_stops_at_the_first() -> None:
    """40,000 rows of 63 unknown members each (within the size limits): one row's errors, not
    2.6 million of them (50,000 such rows took 1.4 GB and 40 s of a core)."""
    from quanta.core.config import Settings
    from quanta.ingest.service import InvalidPayload, decode_batch

    junk = b"{" + b",".join(b'"k%d":%d' % (n, n) for n in range(63)) + b"}"
    raw = b'{"batch_id":"x","instance":"db1","events":[' + b",".join([junk] * 40_000) + b"]}"
    started = time.perf_counter()
    with pytest.raises(InvalidPayload) as refused:
        decode_batch(body=gzip.compress(raw), content_encoding="gzip", settings=Settings())
    assert str(refused.value).startswith("Invalid batch: events.0.ts: Field required;")
    assert str(refused.value).endswith("(and 63 more)")
    assert time.perf_counter() - started < 5.0
