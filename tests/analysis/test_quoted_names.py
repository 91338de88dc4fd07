"""Quoted names: data/quoted_names.txt, and the properties every statement's query id has.

A fingerprint keeps the backticks of a name that needs them, so that it is its own fingerprint
(the agent ships fingerprints and the server fingerprints them again) and names the server
keeps apart are never merged.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from quanta.analysis.fingerprint import fingerprint, query_id, quote_name
from quanta.analysis.fingerprinter import Fingerprinter
from tests.analysis.test_fingerprint import Case, load_cases

CASES_FILE = Path(__file__).parent / "data" / "quoted_names.txt"
CASES = load_cases(CASES_FILE)
_TEXT = CASES_FILE.read_text(encoding="utf-8")
_PAIRS_HEADER = "## Pairs the server keeps apart"
_STATEMENTS_END = "## performance_schema DIGEST_TEXT"


def _line_of(header: str) -> int:
    """The line number of a section header of the fixture."""
    lines = _TEXT.splitlines()
    return next(n for n, line in enumerate(lines, 1) if line.startswith(header))


def statement_cases() -> list[Case]:
    """The first section: statements as a client sends them (run live by the integration test)."""
    end = _line_of(_STATEMENTS_END)
    return [case for case in CASES if case.line < end]


def pair_cases() -> list[tuple[Case, Case]]:
    """The last section's cases, two by two."""
    start = _line_of(_PAIRS_HEADER)
    cases = [case for case in CASES if case.line > start]
    assert len(cases) % 2 == 0, "the pairs section must hold an even number of cases"
    return list(zip(cases[::2], cases[1::2], strict=True))


def test_fixture_has_enough_cases() -> None:
    assert len(CASES) >= 60
    assert len(statement_cases()) >= 35
    assert len(pair_cases()) >= 11


@pytest.mark.parametrize("case", CASES, ids=[f"line{c.line}" for c in CASES])
def test_fingerprint(case: Case) -> None:
    assert fingerprint(case.sql) == case.expected


@pytest.mark.parametrize("case", CASES, ids=[f"line{c.line}" for c in CASES])
def test_a_fingerprint_is_its_own_fingerprint(case: Case) -> None:
    assert fingerprint(case.expected) == case.expected
    assert Fingerprinter()(case.expected) == (case.expected, query_id(case.expected))


@pytest.mark.parametrize(
    "pair", pair_cases(), ids=[f"line{a.line}-line{b.line}" for a, b in pair_cases()]
)
def test_names_the_server_keeps_apart_are_not_merged(pair: tuple[Case, Case]) -> None:
    a, b = pair
    assert query_id(fingerprint(a.sql)) != query_id(fingerprint(b.sql))
    # ... nor on the agent's path, where the fingerprint is fingerprinted again.
    assert fingerprint(fingerprint(a.sql)) != fingerprint(fingerprint(b.sql))


@pytest.mark.parametrize(
    ("name", "written"),
    [
        ("orders", "orders"),
        ("users_2009", "users_2009"),
        ("1abc", "1abc"),
        ("café", "café"),
        ("$x", "$x"),
        ("value", "value"),  # a non-reserved keyword: bare, it names the same column
        ("shop-prod", "`shop-prod`"),
        ("a b", "`a b`"),
        ("db.t1", "`db.t1`"),
        ("a`b", "`a``b`"),
        ("", "``"),
        ("123", "`123`"),
        ("1e5", "`1e5`"),
        ("1e5abc", "`1e5abc`"),
        ("0x1f", "`0x1f`"),
        ("²x", "`²x`"),  # a digit that is not a letter: read as an operator bare
        ("?", "`?`"),
        ("null", "`null`"),
        ("asc", "`asc`"),
        ("schema", "`schema`"),
        ("select", "`select`"),
        ("left", "`left`"),
    ],
)
def test_quote_name(name: str, written: str) -> None:
    assert quote_name(name) == written


# -- random statements with quoted names -------------------------------------------------------

NAMES = st.one_of(
    st.sampled_from(
        [
            "a", "t1", "shop-prod", "shard-1", "a b", "db.t1", "a`b", "`", "123", "1e5", "1e5abc",
            "1abc", "0x1f", "schema", "null", "true", "asc", "in", "values", "value", "offset",
            "limit", "select", "left", "mid", "std", "_utf8mb4", "where", "is", "not", "?",
            "it's", 'a"b', "a#b", "a--b", "a/*b", "café", "日 本", "", " ", "fields", "all",
            "union", "into", "interval", "over", "escape", "call", "use", "session_user",
        ]
    ),
    st.text(min_size=0, max_size=6),
)  # fmt: skip
TOKENS = st.one_of(
    st.sampled_from(
        [
            "SELECT", "FROM", "WHERE", "a", "t1", ".", ",", "(", ")", "=", "-", "+", "1", "-2",
            "'x'", "NULL", "IS", "NOT", "IN", "VALUES", "VALUE", "LIMIT", "OFFSET", "ASC", "?",
            "...", "@", "@@", "ORDER", "BY", "UNION", "ALL", "CALL", "USE", "INTO", "TABLE", "*",
            "1e5abc", "/* c */", ";", "SQL_NO_CACHE", "LEFT", "JOIN", "_utf8mb4", "MID", "AS",
        ]
    ),
    NAMES.map(lambda name: "`" + name.replace("`", "``") + "`"),
)  # fmt: skip
STATEMENTS = st.lists(TOKENS, max_size=25).map(" ".join)


@settings(max_examples=2000)
@given(STATEMENTS)
@example("SELECT `in` ( 1 , 2 )")
@example("SELECT `select` - 1")
@example("LIMIT 1 `offset` 2")
@example("INSERT INTO `into` t ( a ) VALUES ( 1 )")
@example("SELECT `a b` UNION SELECT `a b`")
def test_a_fingerprint_is_its_own_fingerprint_for_any_statement(sql: str) -> None:
    once = fingerprint(sql)
    assert fingerprint(once) == once
    assert Fingerprinter()(once) == Fingerprinter()(sql)


@settings(max_examples=2000)
@given(NAMES, NAMES)
def test_two_quoted_names_have_two_fingerprints(a: str, b: str) -> None:
    def statement(name: str) -> str:
        return "SELECT x FROM `" + name.replace("`", "``") + "` WHERE id = 1"

    if a.lower() != b.lower():  # a fingerprint is lower case, as names are on most servers
        assert fingerprint(statement(a)) != fingerprint(statement(b))
        assert fingerprint(fingerprint(statement(a))) != fingerprint(fingerprint(statement(b)))
