"""Faults under load, through real processes: a MariaDB logging every statement
(long_query_time=0), `quanta-agent run` tailing its slow log, `quanta serve` + `quanta worker`
(+ `quanta beat`) on PostgreSQL and Redis. Each test breaks one thing while statements run,
repairs it, and then asserts that the store's totals (GET /api/v1/queries) equal exactly the
entries MariaDB wrote to its slow log, and the tagged statement's count equals the number
the test executed: nothing lost, nothing counted twice.

A worker SIGKILLed in the middle of a batch is covered by
tests/integration/test_ingest_store.py (exact counts at every resolution).
"""

from __future__ import annotations

import contextlib
import re
import signal
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from tests.agent.harness import expected_events
from tests.fixtures.cluster import (
    ADMIN_TOKEN,
    Api,
    Proc,
    cluster,
    wait_for,
)
from tests.fixtures.servers import (
    HOST,
    MariaDBServer,
    OwnMariaDB,
    PostgresServer,
    RedisServer,
    RestartablePostgres,
    free_port,
    restartable_postgres,
    started_mariadb,
    started_redis,
)
from tests.helpers import HTTP, agent_follows, agent_read_to_end

pytestmark = [pytest.mark.services, pytest.mark.long]

STATEMENTS = 400
PAUSE = 0.01  # between statements: ~100/s, so a fault lands in the middle of the load


class Load:
    """Distinct statements of one shape, run on MariaDB from a thread."""

    def __init__(self, server: MariaDBServer, tag: str, count: int = STATEMENTS) -> None:
        self.server = server
        self.tag = tag
        self.count = count
        self.executed = 0
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with contextlib.closing(self.server.connect("test")) as conn, conn.cursor() as cursor:
            for i in range(self.count):
                cursor.execute(f"SELECT {i} AS {self.tag}")
                self.executed += 1
                time.sleep(PAUSE)

    def start(self) -> Load:
        self._thread.start()
        return self

    def wait_until(self, executed: int) -> None:
        wait_for(lambda: self.executed >= executed, 60, f"{executed} statements run")

    def join(self) -> None:
        """Wait for the last statement and for its slow-log entry, which the server writes
        after answering its client."""
        self._thread.join(120)
        assert self.executed == self.count
        last = f"SELECT {self.count - 1} AS {self.tag}".encode()
        log = self.server.slow_log_path
        wait_for(lambda: last in log.read_bytes(), 10, "the last statement's slow-log entry")


def agent_config(
    base: Path, name: str, server_url: str, slow_log: Path, **changes: Any
) -> dict[str, Any]:
    """An agent tailing ``slow_log`` from its start, cutting small batches often."""
    return {
        "server": server_url,
        "token": ADMIN_TOKEN,
        "spool_dir": str(base / f"spool-{name}"),
        "shutdown_timeout": 10,
        "batch": {"max_events": 40, "max_age": 0.2, **changes.pop("batch", {})},
        "instances": {
            name: {
                "sources": ["slowlog"],
                "slowlog": {
                    "path": str(slow_log),
                    "from_start": True,
                    "check_interval": 0.05,
                    "idle_grace": 0.3,
                },
            }
        },
        **changes,
    }


def slow_logs(own: OwnMariaDB) -> list[Path]:
    """The slow log and every rotated copy of it, oldest first."""
    current = own.server.slow_log_path
    rotated = sorted(current.parent.glob(current.name + ".*"), key=lambda p: int(p.suffix[1:]))
    return [*rotated, current]


def following(agent: Proc) -> None:
    """Wait until the agent has opened its slow log (what is written from then on is its)."""
    wait_for(lambda: agent_follows(agent.log()), 30, "the agent to open its slow log")


def stop_when_read(agent: Proc, slow_log: Path) -> None:
    """SIGTERM the agent once it has read the slow log to its end: it then ships the minute
    it still holds, which would otherwise wait for that minute to end."""
    wait_for(lambda: agent_read_to_end(agent.log(), slow_log), 30, f"the agent to read {slow_log}")
    assert agent.stop() == 0


def assert_store_matches_mariadb(
    api: Api, instance: str, own: OwnMariaDB, load: Load, less: int = 0
) -> int:
    """The store holds every slow-log entry (minus ``less`` dropped ones) once."""
    expected = len(expected_events(*slow_logs(own))) - less
    api.wait_counted(instance, expected)
    if not less:
        rows = api.get("/api/v1/queries", instance=instance, limit=100).json()["rows"]
        tagged = [r["count"] for r in rows if load.tag in r["fingerprint"]]
        assert tagged == [load.executed]
    return expected


def assert_clean_exit(api: Api) -> None:
    """SIGTERM: uvicorn finishes, then exits by the signal it got (as a shell expects)."""
    assert api.proc.stop() in (0, -signal.SIGTERM)
    assert "Application shutdown complete" in api.proc.log()


@pytest.fixture
def mariadb() -> Iterator[OwnMariaDB]:
    with started_mariadb() as own:
        yield own


@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    with started_redis() as server:
        yield server


@pytest.fixture
def own_postgres() -> Iterator[RestartablePostgres]:
    with restartable_postgres() as pg:
        yield pg


def new_database(postgres: PostgresServer, name: str) -> str:
    return postgres.create_database(f"{name}_{time.monotonic_ns()}")


def test_api_down_while_the_agent_ships_then_it_catches_up(
    tmp_path: Path, mariadb: OwnMariaDB, postgres_server: PostgresServer, redis_server: RedisServer
) -> None:
    url = new_database(postgres_server, "api_down")
    with cluster(tmp_path, url, redis_server.url) as c:
        api, _worker = c.api(), c.worker()
        agent = c.agent(
            "apidown", agent_config(tmp_path, "apidown", api.url, mariadb.server.slow_log_path)
        )
        following(agent)
        load = Load(mariadb.server, "fault_api_down").start()
        load.wait_until(60)
        assert_clean_exit(api)
        spool = tmp_path / "spool-apidown" / "apidown"
        # The agent keeps reading the log and spools what it cannot send.
        wait_for(lambda: len(list(spool.glob("*.batch"))) >= 3, 30, "batches spooled")
        assert not api.proc.running
        api.start()  # same port, while the load goes on
        load.join()
        stop_when_read(agent, mariadb.server.slow_log_path)
        assert_store_matches_mariadb(api, "apidown", mariadb, load)
        assert not list(spool.glob("*.batch"))
        assert "server unreachable or busy" in agent.log()


def test_redis_restarted_under_load(
    tmp_path: Path, mariadb: OwnMariaDB, postgres_server: PostgresServer, own_redis: RedisServer
) -> None:
    url = new_database(postgres_server, "redis_restart")
    # Tasks queued in Redis die with it (no persistence): beat re-enqueues their batches.
    env = {"QUANTA_INGEST_REQUEUE_AFTER_SECONDS": "4", "QUANTA_INGEST_REQUEUE_CHECK_SECONDS": "2"}
    with cluster(tmp_path, url, own_redis.url, **env) as c:
        api, worker, _beat = c.api(), c.worker(), c.beat()
        agent = c.agent(
            "redis", agent_config(tmp_path, "redis", api.url, mariadb.server.slow_log_path)
        )
        following(agent)
        load = Load(mariadb.server, "fault_redis").start()
        load.wait_until(100)
        own_redis.stop()
        time.sleep(2)  # batches accepted meanwhile cannot be enqueued
        assert api.get("/readyz").status_code == 503
        own_redis.start()
        load.join()
        stop_when_read(agent, mariadb.server.slow_log_path)
        assert_store_matches_mariadb(api, "redis", mariadb, load)
        assert api.get("/readyz").json() == {"status": "ok"}
        assert worker.running


def test_postgresql_restarted_api_answers_503_then_recovers(
    tmp_path: Path,
    mariadb: OwnMariaDB,
    own_postgres: RestartablePostgres,
    redis_server: RedisServer,
) -> None:
    url = new_database(own_postgres.server, "pg_restart")
    env = {"QUANTA_INGEST_REQUEUE_AFTER_SECONDS": "4", "QUANTA_INGEST_REQUEUE_CHECK_SECONDS": "2"}
    with cluster(tmp_path, url, redis_server.url, **env) as c:
        api, worker, _beat = c.api(), c.worker(), c.beat()
        agent = c.agent("pg", agent_config(tmp_path, "pg", api.url, mariadb.server.slow_log_path))
        following(agent)
        load = Load(mariadb.server, "fault_pg").start()
        load.wait_until(100)
        own_postgres.process.stop()
        answer = api.get("/api/v1/queries")
        assert answer.status_code == 503
        detail = answer.json()["detail"]
        assert detail.startswith("The metric store is unreachable: ")
        assert detail.endswith("retry shortly.")
        assert answer.headers["Retry-After"] == "5"
        assert api.get("/readyz").status_code == 503
        assert api.metric("quanta_store_up") == 0  # the scrape answers, and says so
        time.sleep(2)  # the agent's POSTs meet 503 and are retried
        own_postgres.process.start()
        load.join()
        stop_when_read(agent, mariadb.server.slow_log_path)
        # Neither the API nor the worker was restarted.
        assert_store_matches_mariadb(api, "pg", mariadb, load)
        assert api.get("/readyz").status_code == 200
        assert api.proc.running
        assert worker.running
        assert api.metric("quanta_store_up") == 1


class LossyProxy:
    """Forwards each POST to the API, but drops the answer of every third one: the agent
    cannot know that the batch arrived and sends it again (a duplicate delivery)."""

    def __init__(self, target: str) -> None:
        self.port = free_port()
        self.forwarded = 0
        self.dropped = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                answer = HTTP.post(target + self.path, content=body, headers=headers, timeout=60)
                proxy.forwarded += 1
                if proxy.forwarded % 3 == 0:
                    proxy.dropped += 1
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.send_response(answer.status_code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer((HOST, self.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_duplicate_delivery_is_counted_once(
    tmp_path: Path, mariadb: OwnMariaDB, postgres_server: PostgresServer, redis_server: RedisServer
) -> None:
    url = new_database(postgres_server, "duplicates")
    with cluster(tmp_path, url, redis_server.url) as c:
        api, _worker = c.api(), c.worker()
        proxy = LossyProxy(api.url)
        try:
            agent = c.agent(
                "dup", agent_config(tmp_path, "dup", proxy.url, mariadb.server.slow_log_path)
            )
            following(agent)
            load = Load(mariadb.server, "fault_dup").start()
            load.join()
            stop_when_read(agent, mariadb.server.slow_log_path)
            assert_store_matches_mariadb(api, "dup", mariadb, load)
        finally:
            proxy.close()
        assert proxy.dropped >= 3
        duplicates = api.metric(
            "quanta_ingest_batches_total", source="slowlog", outcome="duplicate"
        )
        assert duplicates == proxy.dropped


def test_a_burst_of_slow_log_rotations(
    tmp_path: Path, mariadb: OwnMariaDB, postgres_server: PostgresServer, redis_server: RedisServer
) -> None:
    url = new_database(postgres_server, "rotations")
    slow_log = mariadb.server.slow_log_path
    with cluster(tmp_path, url, redis_server.url) as c:
        api, _worker = c.api(), c.worker()
        agent = c.agent("rot", agent_config(tmp_path, "rot", api.url, slow_log))
        # Files rotated away before the agent first looks are not its to read.
        following(agent)
        load = Load(mariadb.server, "fault_rotate", count=600).start()
        with contextlib.closing(mariadb.server.connect()) as conn, conn.cursor() as cursor:
            for n in range(1, 7):  # what logrotate does: rename, then have the server reopen
                # Pairs back to back: the second rotation comes before the agent's next look
                # at the path, so the file in between must be found among the rotated ones.
                if n % 2:
                    load.wait_until(60 * n)
                slow_log.rename(slow_log.with_name(f"{slow_log.name}.{n}"))
                cursor.execute("FLUSH NO_WRITE_TO_BINLOG SLOW LOGS")
        load.join()
        stop_when_read(agent, slow_log)
        assert len(slow_logs(mariadb)) == 7
        assert_store_matches_mariadb(api, "rot", mariadb, load)


def test_full_spool_drops_the_oldest_batches_counts_and_reports_them(
    tmp_path: Path, mariadb: OwnMariaDB, postgres_server: PostgresServer, redis_server: RedisServer
) -> None:
    url = new_database(postgres_server, "spool_full")
    port = free_port()
    with cluster(tmp_path, url, redis_server.url) as c:
        # The API is not up yet: everything goes to a spool capped at ~10 KB.
        config = agent_config(
            tmp_path, "full", f"http://{HOST}:{port}", mariadb.server.slow_log_path,
            spool_max_mb=0.01, batch={"max_events": 10, "max_bytes": 2000},
        )  # fmt: skip
        agent = c.agent("full", config)
        load = Load(mariadb.server, "fault_full", count=300).start()
        load.join()
        wait_for(lambda: "SPOOL FULL" in agent.log(), 30, "the agent to report a full spool")
        api, _worker = c.api(port), c.worker()
        spool = tmp_path / "spool-full" / "full"
        wait_for(lambda: not list(spool.glob("*.batch")), 60, "the spool to drain")
        time.sleep(1)  # the agent's last batch after its idle grace
        wait_for(lambda: not list(spool.glob("*.batch")), 60, "the spool to drain")
        assert agent.stop() == 0
        # Reported as it happens (each drop) and in the summary on exit.
        drops = re.findall(r"dropped so far: (\d+) batches, (\d+) events", agent.log())
        summary = re.findall(r"dropped (\d+) batches \((\d+) events\) for lack", agent.log())
        assert drops
        assert summary
        dropped_events = int(summary[-1][1])
        assert int(drops[-1][1]) == dropped_events > 0
        assert_store_matches_mariadb(api, "full", mariadb, load, less=dropped_events)


def test_sigterm_lets_the_api_and_the_worker_finish_what_they_started(
    tmp_path: Path, postgres_server: PostgresServer, redis_server: RedisServer
) -> None:
    url = new_database(postgres_server, "graceful")
    with cluster(tmp_path, url, redis_server.url) as c:
        api, worker = c.api(), c.worker()
        body = _batch(tmp_path, "graceful", events=20_000)
        # A request in flight: headers and half the body sent when SIGTERM arrives.
        with socket.create_connection((HOST, api.port)) as conn:
            head = (
                f"POST /api/v1/ingest HTTP/1.1\r\nHost: {HOST}\r\n"
                f"Authorization: Bearer {ADMIN_TOKEN}\r\nContent-Type: application/json\r\n"
                f"Content-Encoding: gzip\r\nContent-Length: {len(body)}\r\n\r\n"
            ).encode()
            conn.sendall(head + body[: len(body) // 2])
            time.sleep(0.5)
            api.proc.send(signal.SIGTERM)
            time.sleep(0.5)
            conn.sendall(body[len(body) // 2 :])
            answer = conn.recv(65536).decode()
        assert answer.startswith("HTTP/1.1 202"), answer
        assert_clean_exit(api)
        # The worker took the batch's task; SIGTERM while it runs: it finishes, then exits.
        started = re.compile(r"Task quanta\.ingest\.process_batch\[\S+\] received")
        wait_for(lambda: started.search(worker.log()), 30, "the task to start")
        worker.send(signal.SIGTERM)
        assert worker.stop() == 0
        log = worker.log()
        assert log.index("Warm shutdown") < log.index("20000 events counted"), log[-3000:]
        engine = create_engine(url)
        try:
            with engine.connect() as conn:
                status = conn.execute(text("SELECT status FROM ingest_batches")).scalars().all()
        finally:
            engine.dispose()
        assert status == ["done"]


def _batch(tmp_path: Path, instance: str, events: int) -> bytes:
    """A gzip JSON batch of ``events`` slow-log events, as an agent sends it."""
    import gzip
    import json

    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    batch = {
        "batch_id": f"graceful-{time.monotonic_ns()}",
        "instance": instance,
        "source": "slowlog",
        "events": [
            {"ts": now, "query": f"SELECT * FROM t{i % 50} WHERE id = {i}", "query_time": 0.001}
            for i in range(events)
        ],
    }
    return gzip.compress(json.dumps(batch).encode(), 1)
