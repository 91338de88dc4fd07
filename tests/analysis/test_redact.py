"""Credential redaction: the cases in data/redaction.yaml, and what every case must keep."""

from __future__ import annotations

import random
import re
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quanta.analysis.fingerprint import fingerprint
from quanta.analysis.redact import MARKER, might_hold_secret, redact
from tests.helpers import parse_yaml

CASES: list[dict[str, Any]] = parse_yaml(
    (Path(__file__).parent / "data" / "redaction.yaml").read_text(encoding="utf-8")
)
SECRETS = ("sekret", "s3cret", "2470C0C06DEE42FD", "ZIgUREUg5PVg", "0123456789", "736b", "12345")


def test_the_corpus_covers_the_forms() -> None:
    assert len(CASES) >= 70
    assert sum("redacted" in case for case in CASES) >= 60


@pytest.mark.parametrize("case", CASES, ids=[c["form"] for c in CASES])
def test_redaction(case: dict[str, Any]) -> None:
    expected = case.get("redacted", case["sql"])
    assert redact(case["sql"]) == expected


@pytest.mark.parametrize("case", CASES, ids=[c["form"] for c in CASES])
def test_no_secret_survives_and_the_fingerprint_is_unchanged(case: dict[str, Any]) -> None:
    redacted = redact(case["sql"])
    if "redacted" in case:
        assert MARKER in redacted
        assert not any(secret.lower() in redacted.lower() for secret in SECRETS)
    assert fingerprint(redacted) == fingerprint(case["sql"])


@pytest.mark.parametrize("case", CASES, ids=[c["form"] for c in CASES])
def test_redaction_is_idempotent(case: dict[str, Any]) -> None:
    once = redact(case["sql"])
    assert redact(once) == once


def test_a_statement_without_any_credential_word_is_returned_as_is() -> None:
    sql = "SELECT o.id FROM shop.orders o WHERE o.status = 'new' AND o.total > 10"
    assert not might_hold_secret(sql)
    assert redact(sql) is sql


# Pieces of credential statements; random sequences of them are hostile, often invalid, SQL.
PIECES = (
    "CREATE USER", "u", "@", "'h'", "IDENTIFIED", "BY", "PASSWORD", "(", ")", "'x'", '"y"',
    "'a''b'", "'c\\'d'", "0x1F", "b'01'", "-", "5", ",", ";", "SET", "FOR", "=", ":=", "AS",
    "USING", "VIA", "OR", "AES_ENCRYPT", "/*!80000", "*/", "/* c */", "-- z\n", "#k\n",
    "master_password", "REPLACE", "_utf8mb4", "N'q'", "`password`", "mysql", ".", "user",
    "INSERT", "UPDATE", "PREPARE", "s", "FROM", "'CREATE USER u IDENTIFIED BY ''p'''",
    "CONNECTION", "'mysql://a:b@c/d'", "\n", "x'AB'", "KDF", "DECODE", "1.5e3", "?",
    "ENCRYPT", "'unterminated",
)  # fmt: skip


def _two_literals_in_a_row(sql: str) -> bool:
    """Literals side by side that the server refuses (only strings concatenate), comments
    between them or not."""
    sql = re.sub(r"/\* c \*/|-- z\n|#k\n|/\*!80000|\*/", " ", sql)
    tokens = re.findall(r"'(?:[^'\\]|\\.|'')*'?|\S+", sql)
    return any(
        _literal(a) and _literal(b) and not (a[0] == b[0] == "'") for a, b in pairwise(tokens)
    ) or bool(re.search(r"_utf8mb4\s+[\d.-]", sql))


def _literal(token: str) -> bool:
    return token[0] in "'\"0123456789" or token[:2] in ("x'", "b'", "N'")


def test_random_statements_keep_their_fingerprint_and_redact_once() -> None:
    rng = random.Random(7)
    checked = 0
    while checked < 3000:
        sql = " ".join(rng.choice(PIECES) for _ in range(rng.randint(1, 14)))
        if _two_literals_in_a_row(sql):
            continue
        redacted = redact(sql)
        assert fingerprint(redacted) == fingerprint(sql), sql
        assert redact(redacted) == redacted, sql
        checked += 1


# Statements built from the forms redaction by meaning reads (assignments, comparisons,
# calls, rows, INSERT column lists, CASE, subqueries), with secret names and others: the
# fingerprint (and so the query_id) must not see the difference.
_NAMES = st.sampled_from((
    "password", "`api_key`", "u.token", "login", "id", "pin", "pinned", "salt", "doc",
    "name", "value", "authToken", "@auth_token", "password_changed_at",
))  # fmt: skip
_STRINGS = st.text(alphabet="ab'\\%_ $.", max_size=6).map(
    lambda text: "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"
)
_LITERALS = st.one_of(
    _STRINGS,
    st.integers(-(10**6), 10**6).map(str),
    st.sampled_from((
        "1.5", "-2.5e3", ".5", "0x1F", "x'AB'", "b'01'", "N'q'", "_utf8mb4'x'", "'a' 'b'",
        "'smtp_password'", "'$.auth.token'", "NULL", "TRUE", "?", "DATE '2024-01-01'",
    )),
)  # fmt: skip


def _call(parts: tuple[str, list[str]]) -> str:
    return f"{parts[0]}({', '.join(parts[1])})"


_EXPRESSIONS = st.recursive(
    _LITERALS | _NAMES,
    lambda inner: st.one_of(
        st.tuples(
            st.sampled_from(("SHA2", "MD5", "LOWER", "CONCAT", "IF", "JSON_SET", "check_pin")),
            st.lists(inner, min_size=1, max_size=3),
        ).map(_call),
        st.tuples(inner, st.sampled_from(("+", "-", "*", "||", "->>", "DIV")), inner).map(" ".join),
        st.lists(inner, min_size=1, max_size=3).map(lambda items: f"({', '.join(items)})"),
        inner.map(lambda item: f"(SELECT {item})"),
        st.tuples(inner, inner).map(lambda pair: f"CASE WHEN {pair[0]} THEN {pair[1]} END"),
        st.tuples(_NAMES, inner, inner).map(
            lambda triple: f"CASE {triple[0]} WHEN {triple[1]} THEN {triple[2]} END"
        ),
    ),
    max_leaves=8,
)
_PREDICATES = st.one_of(
    st.tuples(
        _EXPRESSIONS,
        st.sampled_from(("=", "<=>", "<>", "!=", "<", ">=", "LIKE", "NOT LIKE", "REGEXP")),
        _EXPRESSIONS,
    ).map(" ".join),
    st.tuples(_EXPRESSIONS, st.lists(_EXPRESSIONS, min_size=1, max_size=3)).map(
        lambda pair: f"{pair[0]} IN ({', '.join(pair[1])})"
    ),
    st.tuples(_EXPRESSIONS, _EXPRESSIONS, _EXPRESSIONS).map(
        lambda triple: f"{triple[0]} BETWEEN {triple[1]} AND {triple[2]}"
    ),
)
_WHERE = st.lists(_PREDICATES, min_size=1, max_size=3).map(" AND ".join)
_ASSIGNMENTS = st.lists(
    st.tuples(_NAMES, _EXPRESSIONS).map(lambda pair: f"{pair[0]} = {pair[1]}"),
    min_size=1,
    max_size=3,
).map(", ".join)


def _insert(parts: tuple[list[str], list[list[str]], str]) -> str:
    columns, rows, update = parts
    values = ", ".join(f"({', '.join(row)})" for row in rows)
    tail = f" ON DUPLICATE KEY UPDATE {update}" if update else ""
    return f"INSERT INTO t ({', '.join(columns)}) VALUES {values}{tail}"


_STATEMENTS = st.one_of(
    _WHERE.map(lambda where: f"SELECT * FROM t WHERE {where}"),
    st.tuples(_ASSIGNMENTS, _WHERE).map(lambda pair: f"UPDATE t SET {pair[0]} WHERE {pair[1]}"),
    st.tuples(
        st.lists(_NAMES, min_size=1, max_size=3),
        st.lists(st.lists(_EXPRESSIONS, min_size=1, max_size=3), min_size=1, max_size=2),
        _ASSIGNMENTS | st.just(""),
    ).map(_insert),
    st.tuples(st.lists(_NAMES, min_size=1, max_size=3), st.lists(_EXPRESSIONS, max_size=3)).map(
        lambda pair: f"INSERT INTO t ({', '.join(pair[0])}) SELECT {', '.join(pair[1]) or 1}"
    ),
)


@settings(max_examples=200)
@given(_STATEMENTS)
def test_redaction_never_changes_the_fingerprint(sql: str) -> None:
    redacted = redact(sql)
    assert fingerprint(redacted) == fingerprint(sql)
    assert redact(redacted) == redacted
