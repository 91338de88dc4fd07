"""Plan findings: real plans from MariaDB 10.11 and MySQL 8.0's documented format.

Each file of data/explain/ holds a statement, its tabular EXPLAIN rows, its FORMAT=JSON (or
ANALYZE FORMAT=JSON) document and the findings expected from them as [kind, table, severity].
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from quanta.analysis.explain import (
    Finding,
    FindingKind,
    Severity,
    explain_findings,
    findings_for_plan,
    plan_from_json,
    plan_from_rows,
)

DATA = Path(__file__).parent / "data" / "explain"
CASES = {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in DATA.glob("*.json")}
MIN_CASES = 20


def triples(findings: list[Finding]) -> list[list[Any]]:
    return [[f.kind.value, f.table, f.severity.value] for f in findings]


def test_there_are_cases_from_both_servers() -> None:
    assert len(CASES) >= MIN_CASES
    assert any(name.startswith("mysql8_") for name in CASES)
    assert any(name.endswith("_analyze") for name in CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_findings(name: str) -> None:
    case = CASES[name]
    findings = explain_findings(
        rows=case["tabular"],
        document=case["json"],
        rows_sent=case["rows_sent"],
        rows_examined=case["rows_examined"],
    )
    assert triples(findings) == case["findings"]
    assert all(f.message and "\n" not in f.message for f in findings)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tabular_and_json_agree_on_table_findings(name: str) -> None:
    """Both forms of one plan give the same per-table findings (the ratio needs numbers)."""
    case = CASES[name]
    tabular = findings_for_plan(plan_from_rows(case["tabular"]))
    document = findings_for_plan(plan_from_json(case["json"]))

    def per_table(findings: list[Finding]) -> set[tuple[str, str | None]]:
        return {(f.kind.value, f.table) for f in findings if f.kind != FindingKind.ROWS_EXAMINED}

    assert per_table(tabular) == per_table(document)


def test_messages_name_the_table_and_the_reason() -> None:
    case = CASES["mariadb_full_scan_filesort_analyze"]
    messages = [f.message for f in explain_findings(rows=case["tabular"], document=case["json"])]
    assert messages == [
        "full table scan of orders: every row is read (type ALL, about 19,844 rows)",
        "no usable key on orders: no index matches its conditions or joins "
        "(possible_keys is empty)",
        "filesort on orders: rows are sorted after they are read, because no index gives "
        "the ORDER BY or GROUP BY order",
        "rows examined far above rows sent: about 20,000 rows read to return 20 "
        "(1,000 per row sent, measured)",
    ]


def test_key_choice_messages() -> None:
    chosen = explain_findings(rows=CASES["mariadb_key_choice"]["tabular"])
    assert [f.message for f in chosen] == [
        "key chosen on orders: idx_customer out of the possible keys idx_customer, "
        "idx_status_created"
    ]
    unused = explain_findings(rows=CASES["mariadb_possible_keys_unused"]["tabular"])
    assert unused[1] == Finding(
        FindingKind.KEY_CHOICE,
        "orders",
        Severity.WARNING,
        "no key used on orders: possible keys idx_status_created were considered, "
        "but reading the table looked cheaper",
    )


def test_dependent_subquery_message_names_the_block() -> None:
    case = CASES["mariadb_dependent_subquery"]
    (finding,) = explain_findings(document=case["json"])
    assert finding.message == (
        "dependent subquery on o: it runs again for every row of the outer query (select #2)"
    )


def test_metrics_decide_rows_examined_over_the_plan() -> None:
    """A ref lookup of 10 rows, but the query's metrics say 5,000 rows read for 2 sent."""
    case = CASES["mariadb_key_choice"]
    findings = explain_findings(
        rows=case["tabular"], document=case["json"], rows_sent=2, rows_examined=5000
    )
    assert findings[-1] == Finding(
        FindingKind.ROWS_EXAMINED,
        None,
        Severity.WARNING,
        "rows examined far above rows sent: about 5,000 rows read to return 2 "
        "(2,500 per row sent, measured)",
    )


@pytest.mark.parametrize(
    ("examined", "sent", "found"),
    [
        (999, 0, False),  # too few rows to matter
        (1000, 0, True),  # nothing sent: counted as 1
        (10_000, 1000, False),  # exactly 10 per row: MySQL's default 10% guess, no finding
        (10_001, 1000, True),
    ],
)
def test_rows_examined_threshold(examined: int, sent: int, found: bool) -> None:
    plan = plan_from_rows([{"id": 1, "table": "t", "type": "ref", "key": "a", "rows": "1"}])
    findings = findings_for_plan(plan, rows_sent=sent, rows_examined=examined)
    assert (FindingKind.ROWS_EXAMINED in {f.kind for f in findings}) is found


def test_estimated_rows_of_a_join_follow_the_nested_loop() -> None:
    """o: 19,844 rows read; c: one eq_ref lookup per o row, 2% kept -> 397 rows out."""
    case = CASES["mariadb_join_no_index"]
    (finding,) = [
        f
        for f in findings_for_plan(plan_from_json(case["json"]))
        if f.kind == FindingKind.ROWS_EXAMINED
    ]
    assert finding.message == (
        "rows examined far above rows sent: about 39,688 rows read to return 397 "
        "(100 per row sent, estimated)"
    )


def test_tables_without_access_are_skipped() -> None:
    rows = [{"id": 1, "select_type": "SIMPLE", "table": None, "type": None,
             "Extra": "No tables used"}]  # fmt: skip
    assert plan_from_rows(rows).tables == ()
    assert explain_findings(rows=rows) == []


def test_to_dict() -> None:
    finding = Finding(FindingKind.FILESORT, "t", Severity.WARNING, "m")
    assert finding.to_dict() == {
        "kind": "filesort",
        "table": "t",
        "severity": "warning",
        "message": "m",
    }
