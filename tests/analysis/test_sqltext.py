"""The one lexical specification of SQL text (quanta.analysis.sqltext): quoting names, the
rules as functions, and the regular-expression fast paths built from them."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quanta.analysis.fingerprint import _TOKEN_RE as FINGERPRINT_TOKEN_RE
from quanta.analysis.fingerprint import fingerprint
from quanta.analysis.redact import _TOKEN_RE as REDACTION_TOKEN_RE
from quanta.analysis.redact import redact
from quanta.analysis.sqltext import (
    LexRefusal,
    SqlMode,
    TokenKind,
    lex,
    quote_ident,
    unquote_ident,
)
from quanta.analysis.sqltext.lenient import SpanKind, scan
from quanta.analysis.sqltext.spec import (
    CommentKind,
    block_comment_end,
    block_comment_kind,
    dash_starts_comment,
    line_comment_end,
    quoted_end,
)
from tests.analysis.test_fingerprint import load_cases
from tests.helpers import parse_yaml

# -- quote_ident / unquote_ident -----------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "quoted"),
    [
        ("orders", "`orders`"),
        ("shop-prod", "`shop-prod`"),
        ("a`b", "`a``b`"),
        ("`", "````"),
        ("``x``", "`````x`````"),
        ("a b", "`a b`"),
        ("db.t1", "`db.t1`"),
        ("", "``"),
        ("café", "`café`"),
        ("表", "`表`"),
        ("emoji😀", "`emoji😀`"),
        ('it\'s "x"', '`it\'s "x"`'),
        ("a\\b", "`a\\b`"),
    ],
)
def test_quote_ident(name: str, quoted: str) -> None:
    assert quote_ident(name) == quoted
    assert quote_ident(name, lenient=True) == quoted
    assert unquote_ident(quoted) == name


def test_quote_ident_refuses_nul_unless_lenient() -> None:
    with pytest.raises(LexRefusal, match="NUL"):
        quote_ident("a\x00b")
    assert quote_ident("a\x00b", lenient=True) == "`a\x00b`"


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("orders", "orders"),  # not quoted: as it is
        ("`t``1`", "t`1"),
        ("`cut", "cut"),  # a truncated statement: runs to the end
        ("`cut``", "cut`"),  # the doubled backtick is no closing one
        ("`a```", "a`"),
        ("``", ""),
        ("`", ""),
    ],
)
def test_unquote_ident(text: str, name: str) -> None:
    assert unquote_ident(text) == name


# Names the server can hold: no NUL, no lone surrogate (not sendable as UTF-8).
SERVER_NAMES = st.text(
    st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=20
)


@given(SERVER_NAMES)
def test_quote_ident_reads_back_as_one_name(name: str) -> None:
    quoted = quote_ident(name)
    assert unquote_ident(quoted) == name
    tokens = lex(f"SELECT {quoted} FROM t")
    assert [t.kind for t in tokens] == [
        TokenKind.WORD,
        TokenKind.QUOTED_NAME,
        TokenKind.WORD,
        TokenKind.WORD,
    ]
    assert tokens[1].text == quoted


# -- sql_mode ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql_mode", "strings", "names", "escapes"),
    [
        ("NO_ENGINE_SUBSTITUTION", "'\"", "`", True),
        ("", "'\"", "`", True),
        ("ANSI_QUOTES", "'", '`"', True),
        ("ansi", "'", '`"', True),
        ("NO_BACKSLASH_ESCAPES,STRICT_TRANS_TABLES", "'\"", "`", False),
        ("ANSI_QUOTES, NO_BACKSLASH_ESCAPES", "'", '`"', False),
    ],
)
def test_sql_mode(sql_mode: str, strings: str, names: str, escapes: bool) -> None:
    mode = SqlMode.parse(sql_mode)
    assert (mode.string_quotes, mode.name_quotes) == (strings, names)
    assert mode.escapes("'") is escapes
    assert mode.escapes("`") is False
    assert mode.escapes('"') is (escapes and '"' in strings)


# -- the rules as functions ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "escapes", "end"),
    [
        ("'abc' x", True, 5),
        ("'it''s' x", True, 7),
        ("'a\\'b' x", True, 6),
        ("'a\\'b' x", False, 4),  # NO_BACKSLASH_ESCAPES: the backslash is a character
        ("'a\\\\' x", True, 5),
        ("'unclosed", True, None),
        ("'ends in backslash\\", True, None),
        ("'ends in a doubled quote''", True, None),
        ("`a``b` c", False, 6),
        ("`a\\`", False, 4),  # no escapes in names
        ('"a""b" c', True, 6),
    ],
)
def test_quoted_end(sql: str, escapes: bool, end: int | None) -> None:
    assert quoted_end(sql, 0, escapes=escapes) == end


@pytest.mark.parametrize(
    ("sql", "comment"),
    [
        ("--", True),
        ("-- x", True),
        ("--\tx", True),
        ("--\nx", True),
        ("--\x01x", True),  # a control character
        ("--\x7fx", True),
        ("--x", False),
        ("--1", False),
        ("--\xa0x", False),  # not the server's whitespace
        ("--\u3000x", False),
        ("- -", False),
    ],
)
def test_dash_starts_comment(sql: str, comment: bool) -> None:
    assert dash_starts_comment(sql, 0) is comment


def test_comment_ends() -> None:
    assert line_comment_end("# a\rb\nc", 0) == 6  # "\r" does not end it
    assert line_comment_end("-- a", 0) == 4
    assert block_comment_end("/* a /* b */ c */", 0) == 12  # no nesting
    assert block_comment_end("/*/ x", 0) is None
    assert block_comment_end("/**/", 0) == 4


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("/* x */", CommentKind.PLAIN),
        ("/**/", CommentKind.PLAIN),
        ("/*! x */", CommentKind.EXECUTABLE),
        ("/*!50100 x */", CommentKind.EXECUTABLE),
        ("/*M! x */", CommentKind.EXECUTABLE),
        ("/*M!100100 x */", CommentKind.EXECUTABLE),
        ("/*m! x */", CommentKind.EXECUTABLE),
        ("/*+ BKA(t) */", CommentKind.HINT),
        ("/*M x */", CommentKind.PLAIN),
    ],
)
def test_block_comment_kind(sql: str, kind: CommentKind) -> None:
    assert block_comment_kind(sql, 0) is kind


# -- the fast paths agree with the spec on the corpora -------------------------------------
#
# The fingerprint and redaction scan a statement with one regular expression each, built from
# the spec's fragments (quoted_pattern, the comment patterns). On every statement of the
# corpora they must find the strings, quoted names and comments the spec's own scan finds.

DATA = Path(__file__).parent / "data"
_YAML_CORPORA = (
    "hostile_statements.yaml",
    "benign_statements.yaml",
    "sqlkind.yaml",
    "redaction.yaml",
    "tags.yaml",
    "own_statements.yaml",
)
_TEXT_KEYS = ("sql", "redacted", "explained", "text")
_EXTRA = (
    "SELECT 1 --\x01 x\nFROM t",  # a control character after -- : a comment
    "SELECT 1 --\xa0 x",  # U+00A0 is no whitespace to the server: no comment
    "SELECT 1 --\u3000 , 'a'",
    "SELECT 1 --\x7f 'x",
    "SELECT `a``b`, 'it''s', \"q\\\"\" /*! 50100 x */ /*M!100100 y */ /*+ BKA(t) */ # end",
    "SELECT 'unclosed",
    "SELECT `unclosed",
    "SELECT 1 /* unclosed",
    "SELECT 'a\\",
    "SELECT _utf8mb4'x' , N'y', x'4142', b'01' --",
)


def corpus() -> list[str]:
    """Every statement of the corpora (and the expected fingerprints, statements too)."""
    texts: list[str] = list(_EXTRA)
    for name in _YAML_CORPORA:
        for case in parse_yaml((DATA / name).read_text(encoding="utf-8")):
            texts += (case[key] for key in _TEXT_KEYS if isinstance(case.get(key), str))
    for name in ("fingerprints.txt", "quoted_names.txt"):
        for case in load_cases(DATA / name):
            texts += (case.sql, case.expected)
    return texts


CORPUS = corpus()
_QUOTES = "'\""


def _spec_spans(sql: str) -> list[tuple[str, int, int]]:
    kinds = {SpanKind.HINT: SpanKind.COMMENT}
    return [(kinds.get(s.kind, s.kind).value, s.start, s.end) for s in scan(sql)]


def _span_of(token: str, start: int) -> tuple[str, int, int] | None:
    """The spec's span of a fast-path token, or None for a token that is none."""
    end = start + len(token)
    if token.startswith("/*"):
        kind = block_comment_kind(token, 0)
        return ("executable" if kind is CommentKind.EXECUTABLE else "comment", start, end)
    if token.startswith(("#", "--")):
        return ("comment", start, end)
    if token.startswith("`"):
        return ("name", start, end)
    quote = min((i for i in (token.find(q) for q in _QUOTES) if i >= 0), default=-1)
    if quote >= 0 and not token.startswith("$"):  # x'..' N'..' _utf8'..': from the quote
        return ("string", start + quote, end)
    return None


def _fingerprint_spans(sql: str) -> list[tuple[str, int, int]]:
    spans = (_span_of(m.group(1), m.start(1)) for m in FINGERPRINT_TOKEN_RE.finditer(sql))
    return [span for span in spans if span is not None]


def _redaction_spans(sql: str) -> list[tuple[str, int, int]]:
    spans = []
    for match in REDACTION_TOKEN_RE.finditer(sql):
        kind = match.lastgroup
        if kind in ("exec", "comment", "str", "name", "hex"):
            span = _span_of(match.group(kind), match.start(kind))
            if span is not None:
                spans.append(span)
    return spans


def test_corpus_is_large() -> None:
    assert len(CORPUS) > 900


@pytest.mark.parametrize("sql", CORPUS)
def test_fingerprint_tokenizer_agrees_with_the_spec(sql: str) -> None:
    text = sql.lower()  # the fingerprint reads lower-cased text
    assert _fingerprint_spans(text) == _spec_spans(text)


@pytest.mark.parametrize("sql", CORPUS)
def test_redaction_tokenizer_agrees_with_the_spec(sql: str) -> None:
    assert _redaction_spans(sql) == _spec_spans(sql)


# -- the readings the spec changed in the fast paths (issue 46) ----------------------------


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        # "--" before a control character or DEL is a comment on the server
        ("SELECT a --\x01 b\nFROM t", "select a from t"),
        ("SELECT a --\x7f b\nFROM t", "select a from t"),
        # ... and before U+00A0 or U+3000 (Python's whitespace, not the server's) it is not
        ("SELECT a --\xa0b FROM t", "select a - -b from t"),
        ("SELECT a --\u3000 b FROM t", "select a - -b from t"),
        # an unclosed string ending in a backslash runs to the end: one literal
        ("SELECT * FROM t WHERE note = 'abc\\", "select * from t where note=?"),
    ],
)
def test_fingerprint_reads_comments_and_strings_by_the_spec(sql: str, expected: str) -> None:
    assert fingerprint(sql) == expected


@pytest.mark.parametrize(
    ("sql", "redacted"),
    [
        ("CREATE USER u IDENTIFIED BY 'abc\\", "CREATE USER u IDENTIFIED BY '<redacted>'"),
        (
            "CREATE USER u IDENTIFIED BY 'sekret' --\xa0 x",
            "CREATE USER u IDENTIFIED BY '<redacted>' --\xa0 x",
        ),
        ("SELECT 1 --\x01 IDENTIFIED BY 'x'", "SELECT 1 --\x01 IDENTIFIED BY 'x'"),  # a comment
    ],
)
def test_redaction_reads_comments_and_strings_by_the_spec(sql: str, redacted: str) -> None:
    assert redact(sql) == redacted
