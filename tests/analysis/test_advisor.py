"""Index advisor tests: the cases in data/advisor/*.yaml, plus the CLI and bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from typer.testing import CliRunner

from quanta.analysis.advisor import (
    AdviceError,
    Schema,
    SchemaError,
    TableAdvice,
    advise,
    normalise_fingerprint,
    parse_schema,
)
from quanta.analysis.advisor.schema import type_width
from quanta.cli import app
from tests.helpers import parse_yaml

DATA = Path(__file__).parent / "data" / "advisor"
SCHEMAS: dict[str, Any] = parse_yaml((DATA / "schemas.yaml").read_text(encoding="utf-8"))
MIN_CASES = 60


class Case(NamedTuple):
    id: str
    spec: dict[str, Any]


def load_cases() -> list[Case]:
    """Every case of every fixture file but schemas.yaml, named file:case."""
    cases = []
    for path in sorted(DATA.glob("*.yaml")):
        if path.name == "schemas.yaml":
            continue
        for spec in parse_yaml(path.read_text(encoding="utf-8")):
            cases.append(Case(f"{path.stem}:{spec['case']}", spec))
    return cases


CASES = load_cases()


def case_schema(spec: dict[str, Any]) -> Schema:
    """The case's schema, with its server and indexes swapped as the case says."""
    data = dict(SCHEMAS[spec.get("schema", "shop")])
    if "server" in spec:
        flavor, version = spec["server"].split()
        data["server"] = {"flavor": flavor, "version": version}
    if "indexes" in spec:
        data["tables"] = {name: dict(table) for name, table in data["tables"].items()}
        for name, indexes in spec["indexes"].items():
            data["tables"][name]["indexes"] = indexes
    return parse_schema(data)


def as_fixture(advice: TableAdvice, *, nested: bool = False) -> dict[str, Any]:
    """An advice in the fixture's compact shape (columns as 'name [desc ]rule, ...')."""
    entry: dict[str, Any] = {"table": advice.table, "action": advice.action.value}
    if advice.columns:
        entry["columns"] = ", ".join(
            f"{c.name}{' desc' if c.desc else ''} {c.rule.value}" for c in advice.columns
        )
    if advice.ddl:
        entry["ddl"] = advice.ddl
    if advice.redundant:
        entry["redundant"] = list(advice.redundant)
    if advice.rows_after is not None:
        entry["rows"] = f"{advice.rows_before} -> {advice.rows_after}"
        entry["bytes"] = advice.index_bytes
    entry["reason"] = advice.reason
    if advice.notes:
        entry["notes"] = list(advice.notes)
    if advice.alternative is not None and not nested:
        entry["alternative"] = as_fixture(advice.alternative, nested=True)
    return entry


def test_fixtures_have_enough_cases() -> None:
    assert len(CASES) >= MIN_CASES


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_advice(case: Case) -> None:
    spec = case.spec
    advice = advise(spec["sql"], case_schema(spec), spec.get("database", "shop"))
    assert [as_fixture(a) for a in advice] == spec["expect"]


@pytest.mark.parametrize(
    ("fingerprint", "sql"),
    [
        ("select * from t where a in(?+)", "select * from t where a IN (?, ?)"),
        ("insert into t (a, b) values(?+)", "insert into t (a, b) VALUES (?)"),
        ("insert into t (a, b) value(?+)", "insert into t (a, b) VALUES (?)"),
        ("select ?, ... from t", "select ?, ? from t"),
        ("SELECT `a` FROM `t` WHERE `a` IN (...)", "SELECT `a` FROM `t` WHERE `a` IN (?, ?)"),
    ],
)
def test_normalise_fingerprint(fingerprint: str, sql: str) -> None:
    assert normalise_fingerprint(fingerprint) == sql


SHOP = case_schema({})


@pytest.mark.parametrize(
    ("sql", "database", "message"),
    [
        ("select from where", "shop", "cannot parse the statement"),
        ("select * from nope", "shop", "table nope is not in the schema snapshot"),
        ("select * from nope", None, "table nope is not in the schema snapshot (pass the default"),
        ("select * from orders where bogus = 1", "shop", "column bogus is not in any table"),
        ("select 1; select 2", "shop", "expected one statement, got 2"),
        ("select * from orders where id = ? and ...", "shop", "cut short"),
        ("show tables", "shop", "reads no rows to index"),
    ],
)
def test_bad_statements(sql: str, database: str | None, message: str) -> None:
    with pytest.raises(AdviceError, match=re.escape(message)):
        advise(sql, SHOP, database)


def test_unqualified_table_unique_in_snapshot_needs_no_database() -> None:
    assert [a.table for a in advise("select id from events where kind = ?", SHOP)] == [
        "shop.events"
    ]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "snapshot must be an object"),
        ({"server": {"flavor": "oracle", "version": "1"}, "tables": {}}, "server.flavor"),
        ({"server": {"flavor": "mysql", "version": "x"}, "tables": {}}, "server.version"),
        ({"server": {"flavor": "mysql", "version": "8.0"}, "tables": {"t": {}}}, "database.table"),
        (
            {"server": {"flavor": "mysql", "version": "8.0"},
             "tables": {"d.t": {"columns": {"a": {"type": "int"}}, "primary_key": ["b"]}}},
            "index column 'b' is not among its columns",
        ),
        (
            {"server": {"flavor": "mysql", "version": "8.0"},
             "tables": {"d.t": {"columns": {"a": {}}}}},
            "needs a string 'type'",
        ),
    ],
)  # fmt: skip
def test_bad_snapshots(data: Any, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        parse_schema(data)


@pytest.mark.parametrize(
    ("flavor", "version", "descending"),
    [("mysql", "5.7.44", False), ("mysql", "8.0.36", True), ("mariadb", "10.6.12", False),
     ("mariadb", "10.8.1", True), ("mariadb", "11.4.2-MariaDB-log", True)],
)  # fmt: skip
def test_descending_index_support(flavor: str, version: str, descending: bool) -> None:
    schema = parse_schema({"server": {"flavor": flavor, "version": version}, "tables": {}})
    assert schema.server.descending_indexes is descending


@pytest.mark.parametrize(
    ("column_type", "width"),
    [("tinyint(1)", 1), ("smallint unsigned", 2), ("mediumint", 3), ("int(11)", 4),
     ("bigint(20) unsigned", 8), ("float", 4), ("double", 8), ("decimal(10,2)", 5),
     ("decimal(18,9)", 8), ("decimal(20,0)", 9), ("date", 3), ("datetime", 5),
     ("datetime(6)", 8), ("timestamp(3)", 6), ("time", 3), ("year", 1), ("char(2)", 2),
     ("varchar(20)", 21), ("varchar(300)", 302), ("binary(16)", 16), ("varbinary(8)", 9),
     ("enum('a','b')", 1), ("set('a','b')", 1), ("bit(10)", 2), ("text", 20), ("json", 20),
     ("mediumblob", 20), ("uuid", 16), ("inet6", 16), ("geometry", 20), ("mystery", 8)],
)  # fmt: skip
def test_type_widths(column_type: str, width: int) -> None:
    """Bytes per value, per the manual's storage requirements (one byte per character)."""
    assert type_width(column_type) == width


# --------------------------------------------------------------------------- CLI


@pytest.fixture
def schema_file(tmp_path: Path) -> Path:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(SCHEMAS["shop"]))
    return path


def test_cli_json(schema_file: Path) -> None:
    sql = "select id, email from customers where country = ? and name = ?"
    result = CliRunner().invoke(
        app, ["advise", "--schema", str(schema_file), "--sql", sql, "-d", "shop", "--json"]
    )
    assert result.exit_code == 0, result.output
    [entry] = json.loads(result.stdout)
    assert entry["table"] == "shop.customers"
    assert entry["action"] == "replace"
    # Not covering since issue 26: the query reads about one row, one lookup is cheap.
    assert entry["columns"] == [
        {"name": "country", "desc": False, "rule": "equality"},
        {"name": "name", "desc": False, "rule": "equality"},
    ]
    assert entry["ddl"] == (
        "ALTER TABLE shop.customers DROP INDEX idx_country, "
        "ADD INDEX idx_customers_country_name (country, name)"
    )
    assert entry["notes"] == [
        "Not covering: the query is estimated to read about 1 row per call through the index; "
        "1 primary-key lookup costs less than a 3-column index."
    ]
    # char(2) + varchar(100) + the int primary key; 5,000 rows per country before, so the
    # change saves more than cost.MIN_ROWS_SAVED (issue 41).
    assert (entry["rows_before"], entry["rows_after"], entry["index_bytes"]) == (5000, 1, 107)
    assert entry["redundant"] == ["idx_country"]
    assert entry["alternative"] is None
    assert entry["existing"] == []


def test_cli_text_with_usage(schema_file: Path, tmp_path: Path) -> None:
    usage = tmp_path / "usage.json"
    usage.write_text(json.dumps([{"table": "shop.orders", "index": "idx_customer", "count": 7}]))
    result = CliRunner().invoke(
        app,
        ["advise", "--schema", str(schema_file), "--usage", str(usage), "-d", "shop",
         "--sql", "select id from orders where phone = ? and amount > ? order by shipped_at"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "-- shop.orders: add index on phone (equality), amount (range).",
        "-- The index finds the rows by phone, then the range on amount.",
        "--   The range on amount and the ORDER BY on shipped_at compete: after a range an index is"
        " not in ORDER BY order, so this index still sorts; the alternative index avoids the sort"
        " but reads the whole range (better with a small LIMIT).",
        "--   Not covering: the query is estimated to read about 1 row per call through the index;"
        " 1 primary-key lookup costs less than a 3-column index.",
        "--   Rows examined per call, estimated: about 10,000,000 now, about 1 with the index; the"
        " index takes 34 bytes per row.",
        "ALTER TABLE shop.orders ADD INDEX idx_orders_phone_amount (phone, amount);",
        "-- Alternative, to avoid the sort instead:",
        "-- -- shop.orders: add index on phone (equality), shipped_at (order_by).",
        "-- -- The index finds the rows by phone and returns them in ORDER BY order (shipped_at),"
        " with no sort.",
        "-- --   Not covering: the query is estimated to read about 2 rows per call through the"
        " index; 2 primary-key lookups cost less than a 3-column index.",
        "-- --   Rows examined per call, estimated: about 10,000,000 now, about 2 with the index;"
        " the index takes 34 bytes per row.",
        "-- ALTER TABLE shop.orders ADD INDEX idx_orders_phone_shipped_at (phone, shipped_at);",
        "-- Existing indexes that can go:",
        "-- shop.orders.idx_status_created (unused): idx_status_created has not been read since"
        " the statistics began; check replicas and monthly jobs before dropping it.",
        "ALTER TABLE shop.orders DROP INDEX idx_status_created;",
    ]


@pytest.mark.parametrize(
    ("schema_text", "sql", "message"),
    [
        ("{", "select 1", "cannot read the schema snapshot"),
        ('{"server": {}, "tables": {}}', "select 1", "server.flavor must be one of"),
        (None, "select * from nope", "table nope is not in the schema snapshot"),
        (None, "select from where", "cannot parse the statement"),
    ],
)
def test_cli_bad_input_exits_2(
    schema_file: Path, schema_text: str | None, sql: str, message: str
) -> None:
    if schema_text is not None:
        schema_file.write_text(schema_text)
    result = CliRunner().invoke(app, ["advise", "--schema", str(schema_file), "--sql", sql])
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.output
