"""Operations in-process: /metrics, /readyz with the broker, 503 when the store is down,
the log format, multiprocess metrics, and the `quanta worker`/`beat` commands."""

import gzip
import json
import logging
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import structlog
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import quanta
from quanta.analysis import native
from quanta.cli import app as cli
from quanta.core import observability
from quanta.core.config import Settings
from quanta.main import create_app
from tests.backend.conftest import ADMIN_TOKEN
from tests.fixtures.servers import free_port
from tests.fixtures.store import migrate_store

SECRET_KEY = "ZmDfcTF7_60GrrY167zsiPd67pEvs0aGOv2oasOM1Pg="


def metric(text: str, name: str, **labels: str) -> float:
    """One sample's value in a Prometheus exposition (0 when absent)."""
    wanted = sorted(f'{k}="{v}"' for k, v in labels.items())
    for line in text.splitlines():
        match = re.fullmatch(r"([a-z_]+)(?:\{(.*)\})? (\S+)", line)
        if (
            match
            and match[1] == name
            and sorted(filter(None, (match[2] or "").split(","))) == (wanted)
        ):
            return float(match[3])
    return 0.0


def post_batch(client: TestClient, batch_id: str, events: int) -> int:
    ts = (datetime.now(UTC) - timedelta(minutes=1)).isoformat()
    body = {
        "batch_id": batch_id,
        "instance": "ops",
        "events": [
            {"ts": ts, "query": f"SELECT * FROM t WHERE id = {i}", "query_time": 0.01}
            for i in range(events)
        ],
    }
    response = client.post(
        "/api/v1/ingest",
        content=gzip.compress(json.dumps(body).encode()),
        headers={"Content-Encoding": "gzip"},
    )
    return int(response.status_code)


def test_metrics_count_ingest_and_show_the_queue(client: TestClient) -> None:
    before = client.get("/metrics")
    assert before.status_code == 200
    assert before.headers["content-type"].startswith("text/plain; version=0.0.4")
    accepted = metric(before.text, "quanta_ingest_batches_total", source="slowlog",
                      outcome="accepted")  # fmt: skip
    duplicate = metric(before.text, "quanta_ingest_batches_total", source="slowlog",
                       outcome="duplicate")  # fmt: skip
    events = metric(before.text, "quanta_ingest_events_total", source="slowlog")
    assert metric(before.text, "quanta_ingest_queue_depth") == 0
    assert metric(before.text, "quanta_store_up") == 1

    assert post_batch(client, "ops-1", events=7) == 202
    assert post_batch(client, "ops-1", events=7) == 200  # the same batch again
    assert post_batch(client, "ops-2", events=3) == 202

    after = client.get("/metrics").text
    assert metric(after, "quanta_ingest_batches_total", source="slowlog",
                  outcome="accepted") == accepted + 2  # fmt: skip
    assert metric(after, "quanta_ingest_batches_total", source="slowlog",
                  outcome="duplicate") == duplicate + 1  # fmt: skip
    assert metric(after, "quanta_ingest_events_total", source="slowlog") == events + 10
    # No worker runs here: both batches wait, the oldest for a moment already.
    assert metric(after, "quanta_ingest_queue_depth") == 2
    assert 0 < metric(after, "quanta_ingest_queue_lag_seconds") < 60
    assert metric(after, "quanta_http_requests_total", method="POST", route="/api/v1/ingest",
                  status="202") >= 2  # fmt: skip
    assert "quanta_task_duration_seconds" in after
    assert "quanta_task_failures_total" in after or "quanta_task_failures" in after


def app_client(settings: Settings) -> Iterator[TestClient]:
    migrate_store(settings)
    app = create_app(settings)
    from quanta.auth.service import ensure_admin_token
    from quanta.core.db import session_scope

    with session_scope(app.state.session_factory) as session:
        ensure_admin_token(session=session, token=ADMIN_TOKEN)
    with TestClient(app) as test_client:
        yield test_client
    app.state.engine.dispose()


def test_metrics_can_require_a_read_token_and_move(tmp_path: Path) -> None:
    settings = Settings(env="test", data_dir=tmp_path, metrics_require_token=True,
                        metrics_path="/internal/metrics")  # fmt: skip
    for client in app_client(settings):
        assert client.get("/internal/metrics").status_code == 401
        answer = client.get("/internal/metrics", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        assert answer.status_code == 200
        assert "quanta_ingest_queue_depth" in answer.text
        assert "quanta_ingest_queue_depth" not in client.get("/metrics").text


def test_metrics_can_be_turned_off(tmp_path: Path) -> None:
    for client in app_client(Settings(env="test", data_dir=tmp_path, metrics_enabled=False)):
        assert "quanta_" not in client.get("/metrics").text
        assert "/metrics" not in client.get("/api/v1/openapi.json").json()["paths"]
    for client in app_client(Settings(env="test", data_dir=tmp_path / "on")):
        assert "/metrics" in client.get("/api/v1/openapi.json").json()["paths"]


def test_readyz_checks_the_broker(tmp_path: Path) -> None:
    for client in app_client(Settings(env="test", data_dir=tmp_path)):
        assert client.get("/readyz").json() == {"status": "ok"}
    down = Settings(env="test", data_dir=tmp_path, redis_url=f"redis://127.0.0.1:{free_port()}/0")
    for client in app_client(down):
        answer = client.get("/readyz")
        assert answer.status_code == 503
        assert answer.json()["detail"].startswith("Task broker unreachable: ")
        assert client.get("/healthz").json() == {"status": "ok"}


def test_store_down_is_a_503_with_a_message(tmp_path: Path) -> None:
    # Nothing listens on this port: every request that needs the store finds it down.
    url = f"postgresql+psycopg://quanta@127.0.0.1:{free_port()}/quanta"
    app = create_app(Settings(env="test", data_dir=tmp_path, database_url=url))
    with TestClient(app, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as client:
        for path in ("/api/v1/queries", "/api/v1/instances"):
            answer = client.get(path)
            assert answer.status_code == 503, answer.text
            detail = answer.json()["detail"]
            assert detail.startswith("The metric store is unreachable: ")
            assert "refused" in detail.lower()
            assert detail.endswith("; retry shortly.")
            assert answer.headers["Retry-After"] == "5"
        ready = client.get("/readyz")
        assert ready.status_code == 503
        assert ready.json()["detail"].startswith("Database unreachable")
        metrics = client.get("/metrics")
        assert metrics.status_code == 200  # the scrape still answers, and says so
        assert metric(metrics.text, "quanta_store_up") == 0


@pytest.mark.parametrize(
    ("env", "explicit", "expected"),
    [
        ("development", None, "console"),
        ("test", None, "console"),
        ("production", None, "json"),
        ("production", "console", "console"),
        ("development", "json", "json"),
    ],
)
def test_log_format_defaults_by_environment(env: str, explicit: str | None, expected: str) -> None:
    settings = Settings(env=env, log_format=explicit, secret_key=SECRET_KEY)
    assert observability.log_format(settings) == expected


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.reset_defaults()


@pytest.mark.usefixtures("restore_logging")
def test_json_logs_are_one_object_per_line(capsys: pytest.CaptureFixture[str]) -> None:
    observability.configure_logging(Settings(env="test", log_format="json"))
    logging.getLogger("quanta.test").warning("batch %s: %d events", 7, 3)
    structlog.get_logger("quanta.test").info("worker started", concurrency=2)
    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger("quanta.test").exception("failed")
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert lines[0]["event"] == "batch 7: 3 events"
    assert lines[0]["level"] == "warning"
    assert lines[0]["logger"] == "quanta.test"
    assert lines[0]["timestamp"].endswith("Z")
    assert lines[1]["event"] == "worker started"
    assert lines[1]["concurrency"] == 2
    assert "ValueError: boom" in lines[2]["exception"]


@pytest.mark.usefixtures("restore_logging")
def test_console_logs_are_lines(capsys: pytest.CaptureFixture[str]) -> None:
    observability.configure_logging(Settings(env="development"))
    logging.getLogger("quanta.test").warning("plain %s", "text")
    err = capsys.readouterr().err
    assert "plain text" in err
    assert not err.lstrip().startswith("{")


PASSWORD = "s3cret-password"


@pytest.mark.usefixtures("restore_logging")
def test_console_tracebacks_are_plain_and_show_no_local_variables(
    capsys: pytest.CaptureFixture[str],
) -> None:
    observability.configure_logging(Settings(env="development"))

    def connect(dsn: str) -> None:
        raise ConnectionError("Connection refused")

    dsn = "mysql://quanta:" + PASSWORD + "@db1:3306"
    try:
        connect(dsn)
    except ConnectionError:
        logging.getLogger("quanta.test").exception("could not connect")
    err = capsys.readouterr().err
    assert "could not connect" in err
    assert "Traceback (most recent call last):" in err
    assert 'raise ConnectionError("Connection refused")' in err
    assert err.rstrip().endswith("ConnectionError: Connection refused")
    assert PASSWORD not in err  # in a local variable of the failing frame
    assert "locals" not in err


def test_metrics_of_several_processes_are_summed(tmp_path: Path) -> None:
    """Multiprocess mode: what two worker processes record, one scrape reports."""
    settings = Settings(env="test", data_dir=tmp_path)
    env = observability.metrics_environment(settings, fresh=True)
    assert Path(env[observability.MULTIPROC_ENV]) == tmp_path / "metrics"
    record = (
        "from quanta.core import observability as o\n"
        "o.record_events_counted(source='slowlog', events=5)\n"
        "o.record_ingest_batch(source='slowlog', events=5, accepted=True)\n"
    )
    scrape = (
        "from quanta.core import observability as o\n"
        "reg = o.build_registry(lambda: o.QueueState(depth=4, oldest_age_seconds=2.5))\n"
        "print(o.render_metrics(reg).decode())\n"
    )
    for _ in range(2):
        subprocess.run([sys.executable, "-c", record], env=_env(env), check=True)
    text = subprocess.run(
        [sys.executable, "-c", scrape], env=_env(env), check=True, capture_output=True, text=True
    ).stdout
    assert metric(text, "quanta_events_counted_total", source="slowlog") == 10
    assert metric(text, "quanta_ingest_batches_total", source="slowlog", outcome="accepted") == 2
    assert metric(text, "quanta_ingest_queue_depth") == 4
    assert metric(text, "quanta_ingest_queue_lag_seconds") == 2.5
    # A fresh start forgets the files of an earlier run.
    observability.metrics_environment(settings, fresh=True)
    assert not list((tmp_path / "metrics").iterdir())


def _env(extra: dict[str, str]) -> dict[str, Any]:
    import os

    return {**os.environ, **extra}


def test_worker_and_beat_commands_exist() -> None:
    runner = CliRunner()
    worker = runner.invoke(cli, ["worker", "--help"])
    assert worker.exit_code == 0
    assert "--concurrency" in worker.output
    assert "--queues" in worker.output
    assert runner.invoke(cli, ["beat", "--help"]).exit_code == 0


def test_metrics_say_which_c_extensions_are_loaded(client: TestClient) -> None:
    text = client.get("/metrics").text
    lines = text.splitlines()
    for extension, loaded in native.loaded().items():
        sample = f'quanta_native_extension_loaded{{name="{extension}"}}'
        assert f"{sample} {1.0 if loaded else 0.0}" in lines


def test_version_says_which_c_extensions_are_loaded() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"quanta {quanta.__version__}\n{native.summary()}\n"


def test_api_and_worker_log_their_c_extensions_at_start(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from quanta.cli import _log_native_code

    with caplog.at_level(logging.INFO, logger="quanta.cli"):
        _log_native_code()
    assert [r.getMessage() for r in caplog.records] == [native.summary()]
