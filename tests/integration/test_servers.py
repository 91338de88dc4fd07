"""Self-tests for the throw-away server fixtures in tests/fixtures/servers.py."""

from __future__ import annotations

import contextlib
import time
import uuid
from pathlib import Path

import pymysql
import pytest
import redis
import sqlalchemy as sa

from tests.fixtures.servers import (
    REQUIRE_SERVICES_ENV,
    MariaDBServer,
    PostgresServer,
    RedisServer,
    require_binary,
    started_mariadb,
)

services = pytest.mark.services


def _unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def _wait_for_text(path: Path, needle: str, timeout: float = 5.0) -> str:
    """Return the file's content once it contains ``needle``; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    content = ""
    while time.monotonic() < deadline:
        content = path.read_text(errors="replace") if path.exists() else ""
        if needle in content:
            return content
        time.sleep(0.05)
    pytest.fail(f"{needle!r} did not appear in {path} within {timeout}s; tail:\n{content[-2000:]}")


# --------------------------------------------------------------------------- require_binary


def test_require_binary_skips_when_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REQUIRE_SERVICES_ENV, raising=False)
    monkeypatch.setenv("QUANTA_TEST_FAKE_BIN", "/nonexistent/fake-server")
    with pytest.raises(pytest.skip.Exception, match=r"SERVICE UNAVAILABLE: fake-server: .*apt-get"):
        require_binary("fake-server", env_var="QUANTA_TEST_FAKE_BIN", install_hint="apt-get x")


def test_require_binary_fails_when_services_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REQUIRE_SERVICES_ENV, "1")
    monkeypatch.delenv("QUANTA_TEST_FAKE_BIN", raising=False)
    with pytest.raises(pytest.fail.Exception, match="SERVICE UNAVAILABLE: quanta-no-such-bin"):
        require_binary(
            "quanta-no-such-bin", env_var="QUANTA_TEST_FAKE_BIN", install_hint="apt-get x"
        )


def test_require_binary_accepts_directory_override(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    binary = tmp_path / "fake-server"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    monkeypatch.setenv("QUANTA_TEST_FAKE_BIN", str(tmp_path))
    found = require_binary("fake-server", env_var="QUANTA_TEST_FAKE_BIN", install_hint="-")
    assert found == str(binary)


# --------------------------------------------------------------------------- MariaDB


@services
def test_mariadb_select_over_tcp_and_socket(mariadb_server: MariaDBServer) -> None:
    assert mariadb_server.host == "127.0.0.1"
    assert mariadb_server.url == f"mysql+pymysql://root@127.0.0.1:{mariadb_server.port}/"
    with mariadb_server.connect("test") as conn, conn.cursor() as cursor:
        cursor.execute("SELECT 1 + 1, DATABASE(), VERSION()")
        total, database, version = cursor.fetchone() or ()
    assert (total, database) == (2, "test")
    assert "MariaDB" in version

    socket_conn = pymysql.connect(unix_socket=mariadb_server.unix_socket, user="root")
    with socket_conn, socket_conn.cursor() as cursor:
        cursor.execute("SELECT @@port")
        assert cursor.fetchone() == (mariadb_server.port,)


@services
def test_mariadb_server_configuration(mariadb_server: MariaDBServer) -> None:
    names = (
        "performance_schema",
        "slow_query_log",
        "slow_query_log_file",
        "log_output",
        "long_query_time",
        "log_slow_verbosity",
        "bind_address",
    )
    with mariadb_server.connect() as conn, conn.cursor() as cursor:
        cursor.execute(
            "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES"
            " WHERE VARIABLE_NAME IN %s",
            ([name.upper() for name in names],),
        )
        variables = {name.lower(): value for name, value in cursor.fetchall()}
        cursor.execute(
            "SELECT NAME FROM performance_schema.setup_consumers WHERE ENABLED = 'YES'"
            " AND NAME IN ('events_statements_history_long', 'statements_digest')"
        )
        consumers = {row[0] for row in cursor.fetchall()}
    assert variables["performance_schema"] == "ON"
    assert variables["slow_query_log"] == "ON"
    assert variables["slow_query_log_file"] == str(mariadb_server.slow_log_path)
    assert variables["log_output"] == "FILE"
    assert float(variables["long_query_time"]) == 0.0
    assert set(variables["log_slow_verbosity"].split(",")) >= {"query_plan", "innodb", "explain"}
    assert variables["bind_address"] == "127.0.0.1"
    assert consumers == {"events_statements_history_long", "statements_digest"}


@services
def test_mariadb_slow_log_records_every_query(mariadb_server: MariaDBServer) -> None:
    marker = _unique("quanta_slowlog_probe")
    with mariadb_server.connect("test") as conn, conn.cursor() as cursor:
        cursor.execute(f"SELECT '{marker}' AS probe")
        assert cursor.fetchone() == (marker,)

    content = _wait_for_text(mariadb_server.slow_log_path, marker)
    entry = content[: content.index(marker)].rsplit("# User@Host:", 1)[-1]
    assert "# Query_time:" in entry
    assert "Rows_sent: 1" in entry


@services
def test_mariadb_performance_schema_digests(mariadb_server: MariaDBServer) -> None:
    table = _unique("quanta_digest_probe")
    with mariadb_server.connect("test") as conn, conn.cursor() as cursor:
        cursor.execute(f"CREATE TABLE {table} (id INT PRIMARY KEY, label VARCHAR(20))")
        for i in range(3):
            cursor.execute(f"INSERT INTO {table} VALUES ({i}, 'row{i}')")
            cursor.execute(f"SELECT label FROM {table} WHERE id = {i}")
        cursor.execute(
            "SELECT DIGEST, DIGEST_TEXT, COUNT_STAR, SUM_ROWS_SENT"
            " FROM performance_schema.events_statements_summary_by_digest"
            " WHERE SCHEMA_NAME = 'test' AND DIGEST_TEXT LIKE %s",
            (f"SELECT `label` FROM `{table}`%",),
        )
        digests = cursor.fetchall()
        cursor.execute(
            "SELECT COUNT(*) FROM performance_schema.events_statements_history_long"
            " WHERE SQL_TEXT LIKE %s",
            (f"INSERT INTO {table} %",),
        )
        history = cursor.fetchone()
    assert len(digests) == 1, digests
    digest, digest_text, count_star, rows_sent = digests[0]
    assert len(digest) == 32
    assert digest_text.rstrip().endswith("= ?")  # the literal was normalised away
    assert (count_star, rows_sent) == (3, 3)
    assert history == (3,)


@services
def test_mariadb_url_works_with_sqlalchemy(mariadb_server: MariaDBServer) -> None:
    engine = sa.create_engine(mariadb_server.url + "test")
    try:
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT DATABASE()")).scalar_one() == "test"
    finally:
        engine.dispose()


# --------------------------------------------------------------------------- PostgreSQL


@services
def test_postgres_create_database_returns_working_url(postgres_server: PostgresServer) -> None:
    name = _unique("quanta_selftest")
    url = postgres_server.create_database(name)
    assert url == f"postgresql+psycopg://postgres@127.0.0.1:{postgres_server.port}/{name}"

    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("CREATE TABLE t (id int PRIMARY KEY, label text)"))
            conn.execute(sa.text("INSERT INTO t VALUES (1, 'one'), (2, 'two')"))
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT current_database()")).scalar_one() == name
            rows = conn.execute(sa.text("SELECT id, label FROM t ORDER BY id")).all()
    finally:
        engine.dispose()
    assert [tuple(row) for row in rows] == [(1, "one"), (2, "two")]


@services
def test_postgres_duplicate_database_fails_clearly(postgres_server: PostgresServer) -> None:
    name = _unique("quanta_dup")
    postgres_server.create_database(name)
    with pytest.raises(ValueError, match="already exists"):
        postgres_server.create_database(name)


@services
def test_postgres_server_configuration(postgres_server: PostgresServer) -> None:
    with postgres_server.connect() as conn:
        settings: dict[str, str] = dict(
            conn.execute(
                "SELECT name, setting FROM pg_settings WHERE name IN"
                " ('fsync', 'listen_addresses', 'port', 'unix_socket_directories')"
            ).fetchall()
        )
    assert settings == {
        "fsync": "off",
        "listen_addresses": "127.0.0.1",
        "port": str(postgres_server.port),
        "unix_socket_directories": str(postgres_server.socket_dir),
    }


# --------------------------------------------------------------------------- Redis


@services
def test_redis_set_get(redis_server: RedisServer) -> None:
    assert redis_server.url == f"redis://127.0.0.1:{redis_server.port}/0"
    client = redis.Redis.from_url(redis_server.url)
    try:
        key = _unique("quanta:selftest")
        assert client.set(key, "value") is True
        assert client.get(key) == b"value"
        assert client.config_get("save") == {"save": ""}
        assert client.config_get("appendonly") == {"appendonly": "no"}
    finally:
        client.close()


@services
def test_redis_restart_keeps_port_and_drops_data(redis_server: RedisServer) -> None:
    port = redis_server.port
    client = redis.Redis.from_url(redis_server.url)
    try:
        client.set("quanta:before-restart", "1")
        redis_server.restart()
        assert redis_server.port == port
        assert client.ping() is True  # redis-py reconnects transparently
        assert client.get("quanta:before-restart") is None
    finally:
        client.close()


def test_own_mariadb_takes_extra_options_and_restarts() -> None:
    with started_mariadb(["--long-query-time=1.5"]) as own:
        with contextlib.closing(own.server.connect()) as conn, conn.cursor() as cursor:
            cursor.execute("SELECT @@long_query_time, @@slow_query_log_file")
            long_query_time, slow_log = cursor.fetchone()
        assert float(long_query_time) == 1.5
        assert slow_log == str(own.server.slow_log_path)
        own.restart()
        with contextlib.closing(own.server.connect()) as conn, conn.cursor() as cursor:
            cursor.execute(
                "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS"
                " WHERE VARIABLE_NAME = 'UPTIME'"
            )
            assert int(cursor.fetchone()[0]) < 5
