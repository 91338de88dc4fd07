"""Fingerprint tests: the cases in data/fingerprints.txt, plus the properties every input has."""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quanta.analysis.fingerprint import fingerprint, query_id

CASES_FILE = Path(__file__).parent / "data" / "fingerprints.txt"


class Case(NamedTuple):
    line: int
    sql: str
    expected: str


def load_cases(path: Path) -> list[Case]:
    """Read the fixture: blocks of SQL lines closed by a '=> expected' line.

    '##' lines are comments; blank lines separate blocks.
    """
    cases: list[Case] = []
    sql_lines: list[str] = []
    start = 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("##") or (not line.strip() and not sql_lines):
            continue
        if line.startswith("=>"):
            assert sql_lines, f"{path.name}:{number}: expected value without SQL"
            cases.append(Case(start, "\n".join(sql_lines), line[2:].strip()))
            sql_lines = []
        else:
            if not sql_lines:
                start = number
            sql_lines.append(line)
    assert not sql_lines, f"{path.name}:{start}: SQL without '=> expected'"
    return cases


CASES = load_cases(CASES_FILE)


def test_fixture_has_enough_cases() -> None:
    assert len(CASES) >= 100


@pytest.mark.parametrize("case", CASES, ids=[f"line{c.line}" for c in CASES])
def test_fingerprint(case: Case) -> None:
    assert fingerprint(case.sql) == case.expected


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"line{c.line}")
def test_fingerprint_of_a_fingerprint_is_itself(case: Case) -> None:
    assert fingerprint(case.expected) == case.expected


def cut_texts() -> list[str]:
    """Every case's SQL cut after each blank, as a digest cut short is, bare and with '...'.

    Cuts inside a quoted string or name or a comment are left out: the server cuts between
    tokens.
    """
    texts = []
    for case in CASES:
        words = case.sql.split(" ")
        for end in range(1, len(words) + 1):
            text = " ".join(words[:end])
            if any(text.count(quote) % 2 for quote in "`'\"") or re.search(r"/\*|--|#", text):
                continue
            texts += [text, f"{text} ..."]
    return texts


def test_a_cut_text_is_fingerprinted_to_a_fixed_point() -> None:
    # So a DIGEST_TEXT cut short gets one stable query_id, and the mark never turns into values.
    texts = cut_texts()
    assert len(texts) > 5000
    fingerprints = {text: fingerprint(text) for text in texts}
    not_fixed = {text: fp for text, fp in fingerprints.items() if fingerprint(fp) != fp}
    assert not_fixed == {}
    # A mark after anything but a comma (where '...' is more values) stays a mark, unless it
    # is cut off with what it follows: CALL's arguments, later VALUES rows, OFFSET's value.
    marked = [t for t in texts if t.endswith(" ...") and not t.endswith((", ...", "... ..."))]
    dropped = [t for t in marked if not fingerprint(t).endswith(" ...")]
    assert len(marked) > 1000
    assert [
        t
        for t in dropped
        if not re.match(r"call\b", t, re.IGNORECASE)
        and not re.search(r"VALUES \(.*\) , \(", t)
        and not t.endswith("OFFSET ...")
    ] == []


def test_slow_log_text_and_digest_text_agree() -> None:
    # The fixture lists each MySQL 8.0 DIGEST_TEXT section case and, in the next section, the
    # same statements as a client sends them; both sections must give the same fingerprints.
    text = CASES_FILE.read_text(encoding="utf-8")
    digest_part = text.split("## performance_schema DIGEST_TEXT as MySQL 8.0 writes it")[1]
    digest_part, slow_part = digest_part.split("## The same statements as slow-log text")
    slow_part = slow_part.split("\n## ")[0]
    digest = re.findall(r"^=> (.*)$", digest_part, re.MULTILINE)
    slow = re.findall(r"^=> (.*)$", slow_part, re.MULTILINE)
    assert digest == slow


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("", ""),
        ("   \n\t ", ""),
        ("/* just a comment */", ""),
        (";", ""),
        ("...", "..."),  # a DIGEST_TEXT cut before its first token: the mark alone
    ],
)
def test_empty_statements(sql: str, expected: str) -> None:
    assert fingerprint(sql) == expected


def test_spacing_does_not_matter() -> None:
    variants = [
        "SELECT * FROM t WHERE id=1 AND name='x'",
        "SELECT * FROM t WHERE id = 1 AND name = 'x'",
        "select *\n from   t\nwhere id =\t1 and name= 'x' ;",
        "SELECT * FROM `t` WHERE `id` = ? AND `name` = ?",
    ]
    assert {fingerprint(v) for v in variants} == {"select * from t where id=? and name=?"}


def test_identifier_digits_are_kept() -> None:
    assert fingerprint("SELECT * FROM users_2009") != fingerprint("SELECT * FROM users_2010")
    assert fingerprint("SELECT t1.id FROM t1") == "select t1.id from t1"


def test_query_id_is_16_upper_hex_digits_of_md5() -> None:
    # md5("select ?") = 1fe1379fe2a31b8d...
    assert query_id("select ?") == "1FE1379FE2A31B8D"
    assert re.fullmatch(r"[0-9A-F]{16}", query_id(fingerprint("SELECT 1")))


def test_query_id_of_non_ascii_fingerprint() -> None:
    assert re.fullmatch(r"[0-9A-F]{16}", query_id("select * from café"))


def test_long_multi_row_insert() -> None:
    rows = ", ".join(f"({i}, 'name {i}', {i}.5, NULL)" for i in range(20_000))
    sql = f"INSERT INTO t (a, b, c, d) VALUES {rows} ON DUPLICATE KEY UPDATE b = VALUES(b)"
    expected = "insert into t (a, b, c, d) values(?+) on duplicate key update b=values(b)"
    assert fingerprint(sql) == expected


@given(st.text())
def test_any_text_gives_a_string(sql: str) -> None:
    assert isinstance(fingerprint(sql), str)


SQL_TOKENS = (
    "SELECT", "a", "`b`", "t1.c", "=", "!=", "-", "+", "1", "-2.5e3", "'x'", "'it''s'", "0xff",
    "NULL", "IS", "NOT", "IN", "(", ")", ",", "VALUES", "LIMIT", "OFFSET", "?", "...", "/* c */",
    "-- c\n", "# c\n", "@", "@@", "ASC", "ORDER", "BY", ";", "*",
)  # fmt: skip


@given(st.lists(st.sampled_from(SQL_TOKENS), max_size=30))
def test_token_soup_does_not_depend_on_whitespace(tokens: list[str]) -> None:
    assert fingerprint(" ".join(tokens)) == fingerprint("\n\t ".join(tokens))
