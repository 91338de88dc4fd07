"""The caching fingerprinter must answer exactly what fingerprint() answers."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from quanta.analysis import fingerprinter as fingerprinter_module
from quanta.analysis.fingerprint import PT_CHECKSUM_RE, fingerprint, query_id
from quanta.analysis.fingerprinter import Fingerprinter, literal_mask
from quanta.analysis.grouping import parse_rules
from tests.analysis.test_fingerprint import CASES
from tests.analysis.test_quoted_names import CASES as QUOTED_NAME_CASES
from tests.fixtures.servers import native_unavailable


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"line{case.line}")
def test_same_answer_as_fingerprint(case: object) -> None:
    sql = case.sql  # type: ignore[attr-defined]
    fingerprinter = Fingerprinter()
    expected = (fingerprint(sql), query_id(fingerprint(sql)))
    assert fingerprinter(sql) == expected
    assert fingerprinter(sql) == expected  # from the cache this time


def test_statements_sharing_a_key_share_a_fingerprint() -> None:
    by_key: dict[str, set[str]] = defaultdict(set)
    for case in [*CASES, *QUOTED_NAME_CASES]:
        by_key[literal_mask(case.sql)].add(fingerprint(case.sql))
    assert {key: fps for key, fps in by_key.items() if len(fps) > 1} == {}


def test_literals_are_masked_and_names_are_not() -> None:
    sql = "SELECT 'a', \"b\", 1.5e3, .5, 0x1f FROM t1 WHERE `c2` = -3 /* 4 */ AND x=1 -- 5"
    assert literal_mask(sql) == (
        "SELECT \x00, \x01, \x04 FROM t1 WHERE `c2` = -\x02 \x03 AND x=\x02 -- 5"
    )
    assert (
        literal_mask("SELECT /*!40001 SQL_NO_CACHE */ 1") == "SELECT /*!40001 SQL_NO_CACHE */ \x02"
    )


def test_percona_toolkit_checksum_queries_are_recognised_whatever_else_was_seen() -> None:
    fingerprinter = Fingerprinter()
    assert fingerprinter("SELECT a FROM t /*x*/")[0] == "select a from t"
    assert fingerprinter("SELECT a FROM t /*db.t:1/2*/")[0] == "percona-toolkit"
    assert fingerprinter("SELECT '/*db.t:1/2*/'")[0] == fingerprint("SELECT '/*db.t:1/2*/'")


# Statement templates whose slots take literals in every form the tokenizer knows; whatever
# fills them, statements with one key must have one fingerprint.
TEMPLATES = [
    "SELECT * FROM t WHERE a = {} AND b IN ({}, {}) LIMIT {}",
    "select x{} from `t{}`.c where y={}",
    "INSERT INTO t (a, b) VALUES ({}, {}), ({},{})",
    "INSERT INTO t VALUES ({}, 'a'), (-1, {}), ({}) ON DUPLICATE KEY UPDATE a=VALUES(a), b={}",
    "REPLACE INTO t VALUE ({}),({}),({} ),( {}, {})",
    "INSERT INTO t VALUES ({}, {}), (NOW(), {}), (/* {} */ 1)",
    "UPDATE t SET a={} WHERE b{}c AND d = -{}",
    "SELECT {}{} FROM t /* {} */ WHERE a = {} # {}",
    "SELECT t.{} FROM t WHERE a LIKE {} ESCAPE {}",
    "call p({}, {})",
]
LITERALS = st.sampled_from(
    [
        "1", "42", "1.5", "1.", ".5", "1e5", "1E-3", "0x1F", "0x1f", "0b101", "-1", "+2",
        "'a'", "'it''s'", "'a\\'b'", "''", '"x"', "x'AB'", "b'01'", "N'z'", "_utf8mb4'q'",
        "NULL", "TRUE", "?", "@v", "a", "`q`", "1abc", "1.2.3", "1..3", "'unterminated",
        "/* c */", "/*x*/", "/*+ NO_ICP(t) */", "/*!50000 1 */", "/*M! 2 */", "/*db.t:1/2*/",
        "'/*db.t:1/2*/'", "/* 'q */", "/* unterminated", "-- c\n", "# c\n",
        # Quoted names whose backticks a fingerprint keeps (issue 24), and 1e5abc (1e5 abc).
        "`a b`", "`shop-prod`", "`null`", "`select`", "`1e5abc`", "1e5abc", "1.5abc", "`a``b`",
        "`value`", "`mid`", "`offset`", "`?`", "`it's`", "`a/*b`", "`--`",
    ]
)  # fmt: skip


@settings(max_examples=400)
@given(st.sampled_from(TEMPLATES), st.lists(LITERALS, min_size=5, max_size=5), st.data())
@example(TEMPLATES[1], ["1", "1", "1", "1", "1"], None)
def test_cache_never_merges_different_fingerprints(
    template: str, first: list[str], data: st.DataObject | None
) -> None:
    second = first if data is None else data.draw(st.lists(LITERALS, min_size=5, max_size=5))
    a, b = template.format(*first), template.format(*second)
    fingerprinter = Fingerprinter()
    assert fingerprinter(a) == (fingerprint(a), query_id(fingerprint(a)))
    checksum_query = any(PT_CHECKSUM_RE.search(sql) for sql in (a, b))  # never cached
    if literal_mask(a) == literal_mask(b) and not checksum_query:
        assert fingerprint(a) == fingerprint(b), (a, b)
    assert fingerprinter(b) == (fingerprint(b), query_id(fingerprint(b)))


# A run of two or more numbers is one key marker, so its fingerprint must not depend on the
# run's length in any context where a run can stand.
RUN_CONTEXTS = [
    "SELECT * FROM t WHERE id IN ({})",
    "SELECT {} FROM t",
    "SELECT a FROM t LIMIT {}",
    "INSERT INTO t VALUES ({}), ({})",
    "INSERT INTO t VALUES ({}), ({}), ({}) ON DUPLICATE KEY UPDATE a=VALUES(a)",
    "SELECT f(a, {}) - b FROM t",
    "SELECT a FROM t WHERE (a, b) IN (({}), (1, 2))",
    "SELECT @x:={}",
    "CALL p({})",
    "SELECT a FROM t ORDER BY {}",
]
NUMBERS = st.sampled_from(["1", "22", "3.5", ".5", "1e3", "0x1f", "0b1", "7."])


@settings(max_examples=300)
@given(
    st.sampled_from(RUN_CONTEXTS),
    st.lists(NUMBERS, min_size=2, max_size=6),
    st.lists(NUMBERS, min_size=2, max_size=6),
    st.sampled_from([",", ", ", " , ", ",\n"]),
)
def test_runs_of_numbers_of_any_length_share_a_fingerprint(
    context: str, first: list[str], second: list[str], comma: str
) -> None:
    a = context.format(*[comma.join(first)] * context.count("{}"))
    b = context.format(*[", ".join(second)] * context.count("{}"))
    assert literal_mask(a) == literal_mask(b)
    assert fingerprint(a) == fingerprint(b)
    assert Fingerprinter()(a) == (fingerprint(a), query_id(fingerprint(a)))


def test_grouping_rules_apply_to_the_fingerprint_and_the_query_id() -> None:
    fingerprinter = Fingerprinter(parse_rules(["orders_[0-9]+=orders_N"]))
    a = fingerprinter("SELECT * FROM shop.orders_17 WHERE id = 1")
    b = fingerprinter("SELECT * FROM shop.orders_18 WHERE id = 2")
    assert a == b == ("select * from shop.orders_N where id=?", query_id(a[0]))


def test_cache_is_bounded() -> None:
    fingerprinter = Fingerprinter(cache_size=3)
    for n in range(10):
        assert fingerprinter(f"SELECT c{n} FROM t")[0] == f"select c{n} from t"
    assert len(fingerprinter._cache) <= 3


# -- the C masker ------------------------------------------------------------------------------
# literal_mask uses quanta.analysis._literal_mask when it is built (make install builds it) for
# ASCII statements; the regular expression is the reference. Both must give the same key.


@pytest.fixture(scope="module")
def c_masker() -> Callable[[str], str | None]:
    masker = fingerprinter_module._literal_mask_c
    if masker is None:
        native_unavailable("_literal_mask", "the C literal masker")
    return masker


def test_c_masker_gives_the_regex_key_on_every_fingerprint_case(
    c_masker: Callable[[str], str | None],
) -> None:
    ascii_cases = [case.sql for case in [*CASES, *QUOTED_NAME_CASES] if case.sql.isascii()]
    assert len(ascii_cases) > 350
    for sql in ascii_cases:
        assert c_masker(sql) == fingerprinter_module._literal_mask_python(sql), sql


def test_c_masker_leaves_text_that_is_not_ascii_to_the_regex(
    c_masker: Callable[[str], str | None],
) -> None:
    sql = "SELECT 'é' FROM t WHERE a = 1"
    assert c_masker(sql) is None
    assert literal_mask(sql) == "SELECT \x00 FROM t WHERE a = \x02"


# Fragments that start, end or break every alternative of the masking expression.
FRAGMENTS = st.sampled_from(
    [
        "VALUES", "values", "Value", "vALUEs", "xvalues", "(", ")", ",", " ", "\t", "\n", "\x1c",
        "'", "''", "\\", '"', '""', "`", "/*", "*/", "/*!", "/*M!", "/*m", "!", "#", "--", "-",
        "1", "0", "0x", "0b", "1f", "ab", "e", "E", "+", ".", "..", "5", "a", "_", "$", "=", "<",
        ";", "@", "?", "*", "/", "%", "|", "x", "b", "SELECT ", " IN (", "\x00",
    ]
)  # fmt: skip


@settings(max_examples=3000)
@given(st.lists(FRAGMENTS, max_size=40))
@example(["values", "(", "1", ")", ",", "(", "'", ")"])
@example(["values", " ", "(", "1", ",", "'", "''", "'", ")", " ", ",", "(", "2", ")"])
def test_c_masker_gives_the_regex_key_on_random_text(
    c_masker: Callable[[str], str | None], fragments: list[str]
) -> None:
    sql = "".join(fragments)
    assert c_masker(sql) == fingerprinter_module._literal_mask_python(sql)


@settings(max_examples=300)
@given(st.sampled_from(TEMPLATES), st.lists(LITERALS, min_size=5, max_size=5))
def test_c_masker_gives_the_regex_key_on_statements(
    c_masker: Callable[[str], str | None], template: str, literals: list[str]
) -> None:
    sql = template.format(*literals)
    assert c_masker(sql) == fingerprinter_module._literal_mask_python(sql)
