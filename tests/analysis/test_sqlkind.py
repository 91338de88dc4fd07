"""Statement classification for EXPLAIN and execution: the cases in data/sqlkind.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from quanta.analysis.sqlkind import (
    PERFORMANCE_SCHEMA_TEXT_LIMIT,
    StatementKind,
    classify_statement,
)

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "sqlkind.yaml").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", CASES, ids=[c["sql"][:50] for c in CASES])
def test_classification(case: dict[str, Any]) -> None:
    result = classify_statement(case["sql"])
    assert (result.kind.value, result.verb) == (case["kind"], case["verb"])
    assert result.explain_refusal == case["explain"]
    assert result.execute_refusal == case["execute"]
    assert result.explainable is (case["explain"] is None)
    assert result.executable is (case["execute"] is None)


def test_a_collector_flag_marks_a_whole_looking_example_truncated() -> None:
    result = classify_statement("SELECT * FROM orders WHERE id = 1", truncated=True)
    assert result.kind is StatementKind.SELECT
    assert result.explain_refusal == (
        "the example is truncated: only a complete statement can be explained"
    )


def test_an_example_of_exactly_the_performance_schema_limit_is_truncated() -> None:
    head = "SELECT * FROM orders WHERE note = '"
    sql = head + "x" * (PERFORMANCE_SCHEMA_TEXT_LIMIT - len(head) - 1) + "'"
    assert len(sql.encode()) == PERFORMANCE_SCHEMA_TEXT_LIMIT
    assert classify_statement(sql).explain_refusal == (
        "the example is exactly 1024 bytes long, performance_schema's limit: "
        "it is probably truncated"
    )
    assert classify_statement(sql[:-2] + "'").explainable
