"""Statement classification for EXPLAIN and execution: the cases in data/sqlkind.yaml, the
hostile corpus (data/hostile_statements.yaml) and the benign one (data/benign_statements.yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from quanta.analysis.sqlkind import (
    PERFORMANCE_SCHEMA_TEXT_LIMIT,
    StatementKind,
    StatementRefusal,
    classify_statement,
    equivalent_select,
)
from quanta.analysis.sqltext import LexRefusal, lex
from tests.helpers import parse_yaml

DATA = Path(__file__).parent / "data"
OUTDIR = "/var/lib/mysql-files"


def load(name: str) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = parse_yaml((DATA / name).read_text(encoding="utf-8"))
    return cases


def hostile_cases() -> list[dict[str, Any]]:
    """The hostile corpus, with %OUTDIR% made a directory (the integration test's own)."""
    return [{**case, "sql": case["sql"].replace("%OUTDIR%", OUTDIR)} for case in load(
        "hostile_statements.yaml")]  # fmt: skip


CASES = load("sqlkind.yaml")
HOSTILE = hostile_cases()
BENIGN = load("benign_statements.yaml")


def _id(case: dict[str, Any]) -> str:
    return ascii(case["sql"][:60])


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_classification(case: dict[str, Any]) -> None:
    result = classify_statement(case["sql"])
    assert (result.kind.value, result.verb) == (case["kind"], case["verb"])
    assert result.explain_refusal == case["explain"]
    assert result.execute_refusal == case["execute"]
    assert result.explainable is (case["explain"] is None)
    assert result.executable is (case["execute"] is None)
    assert result.explain_text == case.get("text")


@pytest.mark.parametrize("case", HOSTILE, ids=[_id(c) for c in HOSTILE])
def test_hostile_statements_are_refused_or_explained_harmlessly(case: dict[str, Any]) -> None:
    result = classify_statement(case["sql"])
    if "refused" in case:
        assert result.explain_refusal is not None, result
        assert case["refused"].lower() in result.explain_refusal.lower()
        assert result.execute_refusal is not None
        assert result.explain_text is None
    else:
        assert result.explain_refusal is None
        assert result.explain_text == case["explained"]
        if "execute_refused" in case:
            assert result.execute_refusal is not None
            assert case["execute_refused"] in result.execute_refusal
        # What is explained is itself accepted as it is: nothing left to rewrite.
        again = classify_statement(result.explain_text)
        assert (again.explain_text, again.explain_note) == (result.explain_text, None)


@pytest.mark.parametrize("case", BENIGN, ids=[_id(c) for c in BENIGN])
def test_benign_statements_are_explained(case: dict[str, Any]) -> None:
    result = classify_statement(case["sql"])
    assert result.explain_refusal is None
    assert result.explain_text == case["explain"]
    assert equivalent_select(case["sql"]) == case["explain"]
    again = classify_statement(case["explain"])
    assert again.kind is StatementKind.SELECT
    assert (again.explain_text, again.explain_note) == (case["explain"], None)
    if result.kind is StatementKind.SELECT:
        assert result.executable
    else:
        assert result.explain_note is not None
        assert result.explain_note.endswith(" is explained as its equivalent SELECT")


def test_equivalent_select_refuses_with_the_reason() -> None:
    with pytest.raises(StatementRefusal, match=r"INSERT without a SELECT reads no table"):
        equivalent_select("INSERT INTO t VALUES (1)")


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


@pytest.mark.parametrize(
    ("sql", "texts"),
    [
        ("SELECT a -- c\nFROM t", ["SELECT", "a", "FROM", "t"]),
        ("SELECT 1--1", ["SELECT", "1", "-", "-", "1"]),
        ("SELECT 1 --", ["SELECT", "1"]),
        ("SELECT 'a''b', \"c\\\"d\", `e``f`", ["SELECT", "'a''b'", ",", '"c\\"d"', ",", "`e``f`"]),
        ("SELECT 1 # x\r, 2\n+ 3", ["SELECT", "1", "+", "3"]),
        ("SELECT 1 /* a /* b */ + 2", ["SELECT", "1", "+", "2"]),
        ("SELECT a->>'$.b' <=> 1", ["SELECT", "a", "->>", "'$.b'", "<=>", "1"]),
        ("SELECT '\u00e9', `\u00a0`", ["SELECT", "'\u00e9'", ",", "`\u00a0`"]),
    ],
)
def test_lexer_reads_as_the_server_does(sql: str, texts: list[str]) -> None:
    assert [token.text for token in lex(sql)] == texts


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("SELECT 1 --\u00a0x", "non-ASCII character (U+00A0)"),
        ("SELECT 1 /*!1 x */", "/*!"),
        ("SELECT 1 /*m! x */", "/*M!"),
        ("SELECT 1 /*+ x */", "optimizer hint"),
        ("SELECT 'a\\'", "not closed"),
        ("SELECT `a", "not closed"),
        ("SELECT 1 /* a", "not closed"),
        ("SELECT '\ud800'", "lone surrogate"),
        ("SELECT 1\x7f", "control character (U+007F)"),
    ],
)
def test_lexer_refuses_what_the_server_could_read_differently(sql: str, reason: str) -> None:
    with pytest.raises(LexRefusal) as refused:
        lex(sql)
    assert reason in str(refused.value)
