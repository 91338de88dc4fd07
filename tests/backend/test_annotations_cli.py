"""`quanta annotate` as a real process against a real HTTP server (uvicorn in a thread)."""

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from quanta.auth.service import ensure_admin_token
from quanta.core.config import Settings
from quanta.core.db import session_scope
from quanta.instances.service import get_or_create_instance
from quanta.main import create_app
from tests.fixtures.servers import free_port
from tests.fixtures.store import migrate_store
from tests.helpers import HTTP, serving

QUANTA = str(Path(sys.executable).parent / "quanta")
TOKEN = "qnt_cli_test_admin_token"
START_TIMEOUT = 20.0


@pytest.fixture
def server_url(tmp_path: Path) -> Iterator[str]:
    """A real Quanta API on a free port (a migrated SQLite store, an admin token, db1)."""
    settings = Settings(env="test", data_dir=tmp_path / "data", database_url=None)
    migrate_store(settings)
    app = create_app(settings)
    with session_scope(app.state.session_factory) as session:
        ensure_admin_token(session=session, token=TOKEN)
        get_or_create_instance(session=session, name="db1")
    try:
        with serving(app, START_TIMEOUT) as url:
            yield url
    finally:
        app.state.engine.dispose()


def annotate(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("QUANTA_SERVER", "QUANTA_TOKEN")}
    return subprocess.run(
        [QUANTA, "annotate", *args],
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def stored(server_url: str) -> list[dict[str, object]]:
    response = HTTP.get(
        f"{server_url}/api/v1/annotations",
        params={"from": "2000-01-01T00:00:00Z", "to": "now+1d"},
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    assert response.status_code == 200, response.text
    body: list[dict[str, object]] = response.json()
    return body


def test_annotate_with_flags_prints_one_line_and_stores_it(server_url: str) -> None:
    result = annotate(
        "Started ALTER TABLE orders ADD INDEX idx_customer (customer_id)",
        "--tag",
        "schema",
        "--tag",
        "deploy",
        "--instance",
        "db1",
        "--time",
        "2026-11-22T03:10:00Z",
        "--end-time",
        "2026-11-22T06:40:00+02:00",
        "--server",
        server_url,
        "--token",
        TOKEN,
    )
    assert result.returncode == 0, result.stderr
    [annotation] = stored(server_url)
    assert result.stdout == (
        f"annotation {annotation['id']} at 2026-11-22T03:10:00Z to 2026-11-22T04:40:00Z: "
        "Started ALTER TABLE orders ADD INDEX idx_customer (customer_id)\n"
    )
    assert annotation["tags"] == ["deploy", "schema"]
    assert annotation["instances"] == ["db1"]
    assert annotation["time"] == "2026-11-22T03:10:00Z"
    assert annotation["end_time"] == "2026-11-22T04:40:00Z"


def test_annotate_from_environment_defaults_to_now(server_url: str) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    result = annotate(
        "deploy 1.4.2", env={"QUANTA_SERVER": server_url + "/", "QUANTA_TOKEN": TOKEN}
    )
    assert result.returncode == 0, result.stderr
    [annotation] = stored(server_url)
    assert result.stdout == f"annotation {annotation['id']} at {annotation['time']}: deploy 1.4.2\n"
    when = datetime.fromisoformat(str(annotation["time"]))
    assert before <= when <= datetime.now(UTC)
    assert annotation["tags"] == []
    assert annotation["instances"] == []
    assert annotation["created_by"] == "admin"


def test_refusals_print_the_status_and_the_servers_reason(server_url: str) -> None:
    wrong_token = annotate("x", "--server", server_url, "--token", "nope")
    assert wrong_token.returncode == 1
    assert wrong_token.stderr == (
        "error: server refused the annotation (401): Unknown or revoked API token.\n"
    )
    unknown = annotate("x", "--instance", "db9", "--server", server_url, "--token", TOKEN)
    assert unknown.returncode == 1
    assert "(400): Unknown instance(s): db9. Known instances: db1" in unknown.stderr
    backwards = annotate(
        "x", "--time", "now", "--end-time", "now-1h", "--server", server_url, "--token", TOKEN
    )
    assert backwards.returncode == 1
    assert "(400): 'end_time'" in backwards.stderr
    assert "must be after 'time'" in backwards.stderr
    too_long = annotate("x" * 1001, "--server", server_url, "--token", TOKEN)
    assert too_long.returncode == 1
    assert "(422): text: String should have at most 1000 characters" in too_long.stderr
    assert stored(server_url) == []


def test_usage_errors_exit_2_before_any_request() -> None:
    no_token = annotate("x", "--server", "http://127.0.0.1:9")
    assert no_token.returncode == 2
    assert "no token: pass --token or set QUANTA_TOKEN" in no_token.stderr
    bad_time = annotate("x", "--time", "yesterday", "--token", "t")
    assert bad_time.returncode == 2
    assert "cannot read time 'yesterday'" in bad_time.stderr


def test_unreachable_server_fails_fast_with_the_reason() -> None:
    port = free_port()  # nothing listens there
    started = time.monotonic()
    result = annotate("x", "--server", f"http://127.0.0.1:{port}", "--token", TOKEN)
    elapsed = time.monotonic() - started
    assert result.returncode == 1
    assert result.stderr == (
        f"error: cannot reach http://127.0.0.1:{port} (connection refused) after 3 attempts\n"
    )
    assert result.stdout == ""
    assert elapsed < 10, elapsed


class _Flaky(BaseHTTPRequestHandler):
    """Answers 503 to the first POST, then 201 with an annotation; records every request."""

    requests: list[dict[str, object]] = []  # noqa: RUF012 (one test server at a time)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append({"auth": self.headers["Authorization"], "body": body})
        if len(self.requests) == 1:
            self._answer(503, {"detail": "Database unreachable"})
        else:
            self._answer(201, {"id": 7, "time": "2026-11-22T03:10:00+00:00", **body})

    def _answer(self, status: int, body: dict[str, object]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


class _Hanging(BaseHTTPRequestHandler):
    """Never answers (until the test ends)."""

    release = threading.Event()

    def do_POST(self) -> None:
        self.release.wait(30)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def http_server(request: pytest.FixtureRequest) -> Iterator[str]:
    handler: type[BaseHTTPRequestHandler] = request.param
    _Hanging.release.clear()
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        _Hanging.release.set()
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("http_server", [_Flaky], indirect=True)
def test_a_5xx_is_retried(http_server: str) -> None:
    _Flaky.requests.clear()
    result = annotate("deploy", "--server", http_server, "--token", "tok")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "annotation 7 at 2026-11-22T03:10:00Z: deploy\n"
    assert len(_Flaky.requests) == 2
    assert all(r["auth"] == "Bearer tok" for r in _Flaky.requests)
    assert _Flaky.requests[1]["body"] == {"text": "deploy", "tags": [], "instances": []}


@pytest.mark.parametrize("http_server", [_Hanging], indirect=True)
def test_a_server_that_never_answers_times_out(http_server: str) -> None:
    started = time.monotonic()
    result = annotate("deploy", "--server", http_server, "--token", "tok", "--timeout", "1")
    assert time.monotonic() - started < 10
    assert result.returncode == 1
    assert result.stderr == (
        f"error: no answer from {http_server} within 1 s; the annotation may or may not have "
        "been stored\n"
    )
