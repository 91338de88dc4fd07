"""The sandbox's safety net without a server: the statements a sandbox session may send
(quanta.monitored.sandbox with the guard's forms: data/sandbox_statements.yaml), the table
definitions it may copy (data/sandbox_ddl.yaml), which tables are copied, when two servers
are the same, and the refusals that come before any server is contacted."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from quanta.advice.isolation import MonitoredServer
from quanta.advice.sandbox_statement import tables_to_copy
from quanta.advice.validate_index import validate_indexes
from quanta.analysis.advisor import AdviceColumn, Rule
from quanta.analysis.advisor.engine import index_ddl
from quanta.analysis.sqlkind import classify_statement
from quanta.core.config import Settings
from quanta.monitored.options import ConnectionOptions, MonitoredSettings
from quanta.monitored.sandbox import (
    SandboxRefused,
    SandboxSession,
    ServerIdentity,
    _Mode,
    ddl_refusal,
    same_server,
)
from tests.helpers import parse_yaml

DATA = Path(__file__).parent / "data"
STATEMENTS: list[dict[str, Any]] = parse_yaml(
    (DATA / "sandbox_statements.yaml").read_text(encoding="utf-8")
)
DDLS: list[dict[str, Any]] = parse_yaml((DATA / "sandbox_ddl.yaml").read_text("utf-8"))


def session() -> SandboxSession:
    """A session that is never opened: the check runs before anything is sent."""
    return SandboxSession(ConnectionOptions(host="sandbox", user="u"), MonitoredSettings())


@pytest.mark.parametrize("case", STATEMENTS, ids=[c["sql"][:60] for c in STATEMENTS])
def test_sandbox_statement_forms(case: dict[str, Any]) -> None:
    sandbox = session()
    sql = case["sql"].replace("{scratch}", sandbox.scratch_prefix)
    if not case.get("no_database"):  # as create_database() and use() leave it
        sandbox.databases.append(f"{sandbox.scratch_prefix}_0")
        sandbox._current = sandbox.databases[0]
    if case.get("explaining"):
        sandbox._mode = _Mode.EXPLAIN  # as explain_transaction() leaves it
    assert sandbox.explaining is bool(case.get("explaining"))
    if case["allowed"] is True:
        sandbox.check(sql)
    else:
        with pytest.raises(SandboxRefused) as refused:
            sandbox.check(sql)
        assert str(refused.value).startswith(case["allowed"])


@pytest.mark.parametrize("case", DDLS, ids=[c["ddl"][-50:] for c in DDLS])
def test_copied_table_definitions(case: dict[str, Any]) -> None:
    assert ddl_refusal(case["ddl"]) == case["refusal"]


def test_only_user_tables_the_statement_names_are_copied() -> None:
    sql = (
        "SELECT o.id FROM orders o JOIN mysql.user u ON u.User = o.phone "
        "JOIN information_schema.TABLES t ON t.TABLE_NAME = o.phone "
        "JOIN performance_schema.threads p JOIN sys.host_summary h "
        "WHERE o.phone IN (SELECT phone FROM crm.calls)"
    )
    tables = ["shop.orders", "crm.calls", "mysql.user", "shop.customers", "hr.salaries"]
    copied, left_out = tables_to_copy(sql, "shop", tables)
    assert copied == ["shop.orders", "crm.calls"]
    assert left_out == [
        "information_schema.tables",
        "mysql.user",
        "performance_schema.threads",
        "sys.host_summary",
    ]


def test_a_cte_is_not_a_table_and_only_system_tables_leave_nothing_to_copy() -> None:
    copied, _ = tables_to_copy(
        "WITH recent AS (SELECT * FROM orders) SELECT * FROM recent", "shop", ["shop.orders"]
    )
    assert copied == ["shop.orders"]
    with pytest.raises(SandboxRefused, match=r"names no user table .*\(mysql\.user are never"):
        tables_to_copy("SELECT * FROM mysql.user WHERE User = 'x'", "shop", ["mysql.user"])


MARIADB_A = ServerIdentity(None, "1", "db1", "3306", None)


@pytest.mark.parametrize(
    ("other", "expected"),
    [
        (MARIADB_A, "same hostname db1, port 3306 and server_id 1"),
        (ServerIdentity(None, "1", "db1", "3307", None), None),  # two servers on one host
        (ServerIdentity(None, "1", "db2", "3306", None), None),  # default server_id elsewhere
        (ServerIdentity(None, "2", "db1", "3306", None), None),
        (
            ServerIdentity(None, "7", "db9", "3306", "c0ffee"),
            None,  # a Galera node, but MARIADB_A is in no cluster
        ),
    ],
)
def test_same_mariadb_server(other: ServerIdentity, expected: str | None) -> None:
    assert same_server(MARIADB_A, other) == expected


def test_same_mysql_server_by_uuid_and_same_cluster() -> None:
    mysql = ServerIdentity("3e11fa47-71ca-11e1-9e33-c80aa9429562", "1", "h", "3306", None)
    other = ServerIdentity("8a94f357-aab4-11df-86ab-c80aa9429562", "1", "h", "3306", None)
    assert same_server(mysql, other) is None  # the UUID decides when both have one
    assert same_server(mysql, mysql) == f"same server_uuid {mysql.server_uuid}"
    node1 = ServerIdentity(None, "1", "n1", "3306", "c0ffee")
    node2 = ServerIdentity(None, "2", "n2", "3306", "c0ffee")
    assert same_server(node1, node2) == ("same Galera cluster c0ffee: writes there replicate to it")


def test_identity_from_show_rows() -> None:
    identity = ServerIdentity.from_rows(
        [
            {"Variable_name": "hostname", "Value": "DB1"},
            {"Variable_name": "port", "Value": "3306"},
            {"Variable_name": "server_id", "Value": "1"},
        ],
        [],
    )
    assert identity == ServerIdentity(None, "1", "db1", "3306", None)


def closed_port() -> int:
    """A port nothing listens on: connecting there would fail loudly."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def validate(sql: str, sandbox: ConnectionOptions, *instances: MonitoredServer) -> None:
    validate_indexes(
        monitored=ConnectionOptions(host="127.0.0.1", port=closed_port(), user="ro"),
        sandbox=sandbox,
        instances=instances,
        limits=MonitoredSettings(connect_timeout=1),
        sql=sql,
        default_db="shop",
        tables=["shop.orders"],
        candidates=[],
        sample_rows=100,
    )


def test_an_example_that_may_not_be_explained_is_refused_before_any_server() -> None:
    sql = "SELECT id FROM orders WHERE phone = ?"
    refusal = classify_statement(sql).explain_refusal
    assert refusal is not None
    # Both servers are unreachable: any attempt to connect would say "cannot connect".
    sandbox = ConnectionOptions(host="127.0.0.1", port=closed_port(), user="sbx")
    with pytest.raises(SandboxRefused) as refused:
        validate(sql, sandbox)
    assert str(refused.value) == f"not explained in the sandbox: {refusal}"


@pytest.mark.parametrize(
    ("sandbox", "instance", "what"),
    [
        (("db1.example", 3306, None), ("DB1.example", 3306, None), "host and port"),
        (("localhost", 3307, None), ("127.0.0.1", 3307, None), "host and port"),
        (("localhost", 3306, "/run/mysqld.sock"), ("x", 1, "/run/mysqld.sock"), "socket"),
    ],
)
def test_a_sandbox_dsn_naming_an_instance_server_is_refused_before_connecting(
    sandbox: tuple[str, int, str | None], instance: tuple[str, int, str | None], what: str
) -> None:
    def options(host: str, port: int, sock: str | None) -> ConnectionOptions:
        return ConnectionOptions(host=host, port=port, user="u", unix_socket=sock)

    others = [
        MonitoredServer("db0", options("db0.example", 3306, None)),
        MonitoredServer("db1", options(*instance)),
    ]
    with pytest.raises(SandboxRefused) as refused:
        validate("SELECT id FROM orders WHERE phone = 'x'", options(*sandbox), *others)
    assert f"is the server of instance 'db1' (its DSN names the same {what})" in str(refused.value)


def test_sample_rows_default_is_small_and_bounded() -> None:
    settings = Settings(env="test", database_url=None, redis_url=None)
    assert settings.advice_sandbox_sample_rows == 1_000
    with pytest.raises(ValueError, match="less than or equal to 100000"):
        Settings(env="test", advice_sandbox_sample_rows=1_000_000)


def test_candidate_columns_still_build_the_index_ddl() -> None:
    # The sandbox adds exactly what the advisor wrote; the form check accepts it.
    sandbox = session()
    ddl = index_ddl(
        f"{sandbox.scratch_prefix}_0.orders",
        "idx_orders_phone_amount",
        [AdviceColumn("phone", False, Rule.EQUALITY), AdviceColumn("amount", True, Rule.RANGE)],
    )
    sandbox.check(ddl)
