"""What an example statement is, and whether it may be explained or executed on a server.

EXPLAIN and profiles run a real example of a query on a monitored server, so before anything
is sent the example is classified here: a SELECT (explained, and executed for profiles and
ANALYZE when that is allowed), a DML statement (explained, never executed) or anything else
(refused). Examples that were cut short (slow-log or performance_schema limits) or that
hold several statements are refused with a reason a person can act on.

Classification works on sqlglot's MySQL tokens, not on a full parse: tokens are what the
server sees (strings, quoted names and comments are told apart correctly), and sqlglot does
not parse every statement MySQL accepts. A parse is only used to tell a statement that stops
in the middle (a truncated example) from a complete one.

Example:
    >>> classify_statement("SELECT * FROM orders WHERE id = 7").executable
    True
    >>> classify_statement("DELETE FROM orders WHERE id = 7").execute_refusal
    'a DELETE is never executed on a monitored server: it is only explained'
"""

from __future__ import annotations

import enum
import itertools
import re
from dataclasses import dataclass

import sqlglot
from sqlglot.errors import ParseError, SqlglotError, TokenError
from sqlglot.tokenizer_core import Token, TokenType

__all__ = ["Classification", "StatementKind", "classify_statement"]

TRUNCATED_UNCLOSED = "the example is truncated: a string, name or comment is not closed"
ONLY_EXPLAINED = "it is only explained"
PLACEHOLDER_REFUSAL = (
    "the text has ? placeholders: it is a fingerprint or a prepared statement, "
    "and only an example with its values can be explained"
)
# Markers that tools append to text they cut short: pt-query-digest, P_S DIGEST_TEXT.
TRUNCATION_MARKERS = ("...", "\u2026")
# performance_schema keeps at most this many bytes of SQL_TEXT by default
# (performance_schema_max_sql_text_length): an example of exactly that size was cut.
PERFORMANCE_SCHEMA_TEXT_LIMIT = 1024
# Functions with an effect beyond reading rows, or that wait on purpose: a SELECT calling one
# is explained but never run (a read-only transaction does not stop any of them).
SIDE_EFFECT_FUNCTIONS = frozenset(
    (
        "get_lock",
        "release_lock",
        "release_all_locks",
        "sleep",
        "benchmark",
        "nextval",
        "setval",
        "lastval",
        "load_file",
        "master_pos_wait",
        "source_pos_wait",
        "master_gtid_wait",
        "wait_for_executed_gtid_set",
        "wait_until_sql_thread_after_gtids",
    )
)
DML_VERBS = frozenset(("update", "delete", "insert", "replace"))
# MySQL runs the text of /*! ... */ and MariaDB of /*M! ... */ comments: what they hold is
# invisible to a tokenizer, so a statement with one is never executed.
_EXECUTABLE_COMMENT_RE = re.compile(r"/\*M?!")
# sqlglot's MySQL tokenizer turns REPLACE into [REPLACE, STRING(rest of the statement)].
_COMMAND_TOKENS = 2
_MISSING_PREFIXES = ("Required keyword", "Expecting", "Expected")
_MYSQL = sqlglot.Dialect.get_or_raise("mysql")
_VERB_TOKENS = {
    TokenType.SELECT: "select",
    TokenType.UPDATE: "update",
    TokenType.DELETE: "delete",
    TokenType.INSERT: "insert",
    TokenType.REPLACE: "replace",
}


class StatementKind(enum.StrEnum):
    """The three families the analysis treats differently."""

    SELECT = "select"
    DML = "dml"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class Classification:
    """What a statement is, and why it may not be explained or executed (None: it may).

    Attributes:
        kind: SELECT, DML or OTHER.
        verb: The statement's main verb in lower case (``select``, ``update``, ``set``...).
        explain_refusal: Why EXPLAIN must not be run on it, or None.
        execute_refusal: Why it must not be executed (profile, ANALYZE), or None.
    """

    kind: StatementKind
    verb: str
    explain_refusal: str | None
    execute_refusal: str | None

    @property
    def explainable(self) -> bool:
        """Whether EXPLAIN may be run on it."""
        return self.explain_refusal is None

    @property
    def executable(self) -> bool:
        """Whether it may be executed (only plain SELECTs)."""
        return self.execute_refusal is None


def classify_statement(sql: str, *, truncated: bool = False) -> Classification:
    """Classify one example statement for EXPLAIN and execution.

    Args:
        sql: The example as the server saw it.
        truncated: The collector already knows the text was cut (the agent marks it).

    Returns:
        The classification; a refused statement has both refusals set to the same reason
        unless only execution is refused.

    Example:
        >>> c = classify_statement("SELECT * FROM t WHERE a = 1; DROP TABLE t")
        >>> c.kind, c.explain_refusal  # doctest: +ELLIPSIS
        (<StatementKind.SELECT: 'select'>, 'the example holds several statements: only one ...')
    """
    try:
        tokens = _tokenize(sql)
    except TokenError:
        return _refused(
            "other", "the example is truncated: a string, name or comment is not closed"
        )
    if not tokens:
        return _refused("other", "the example is empty")
    problem = _shape_problem(sql, tokens, truncated)
    verb = _main_verb(tokens)
    if problem:
        return _refused(verb, problem)
    if verb == "select":
        return Classification(StatementKind.SELECT, verb, None, _select_refusal(sql, tokens))
    if verb in DML_VERBS:
        return _classify_dml(verb, tokens)
    return _refused(
        verb,
        f"only SELECT, UPDATE, DELETE, INSERT ... SELECT and REPLACE are explained; "
        f"this is {_article(verb)} {verb.upper()} statement",
    )


def _tokenize(sql: str) -> list[Token]:
    tokens = _MYSQL.tokenize(sql)
    if len(tokens) == _COMMAND_TOKENS and tokens[0].token_type == TokenType.REPLACE:
        # sqlglot reads REPLACE as a command with the rest as one string; REPLACE has
        # INSERT's syntax, so the rest is tokenized as an INSERT's.
        rest = _MYSQL.tokenize(f"INSERT {tokens[1].text}")
        return [tokens[0], *rest[1:]]
    return tokens


def _refused(verb: str, reason: str) -> Classification:
    return Classification(_kind(verb), verb, reason, reason)


def _kind(verb: str) -> StatementKind:
    if verb == "select":
        return StatementKind.SELECT
    return StatementKind.DML if verb in DML_VERBS else StatementKind.OTHER


def _shape_problem(sql: str, tokens: list[Token], truncated: bool) -> str | None:
    """Why the text is not one whole statement, or None."""
    text = sql.rstrip()
    if truncated or text.endswith(TRUNCATION_MARKERS):
        return "the example is truncated: only a complete statement can be explained"
    if len(sql.encode("utf-8", "surrogatepass")) == PERFORMANCE_SCHEMA_TEXT_LIMIT:
        return (
            f"the example is exactly {PERFORMANCE_SCHEMA_TEXT_LIMIT} bytes long, "
            "performance_schema's limit: it is probably truncated"
        )
    body = tokens[:-1] if tokens[-1].token_type == TokenType.SEMICOLON else tokens
    if any(t.token_type == TokenType.SEMICOLON for t in body):
        return "the example holds several statements: only one statement can be explained"
    if any(t.token_type == TokenType.PLACEHOLDER for t in body):
        return PLACEHOLDER_REFUSAL
    depth = _final_depth(body)
    if depth != 0:
        return "the example is truncated: its parentheses do not balance"
    if _ends_mid_statement(text):
        return "the example is truncated: it ends in the middle of the statement"
    return None


def _final_depth(tokens: list[Token]) -> int:
    depth = 0
    for token in tokens:
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
            if depth < 0:
                return depth
    return depth


def _ends_mid_statement(text: str) -> bool:
    """Whether sqlglot's first complaint is at the very end: the text stops mid-statement."""
    try:
        sqlglot.parse(text, read="mysql")
    except ParseError as exc:
        if not exc.errors:
            return False
        first = exc.errors[0]
        lines = text.splitlines() or [""]
        at_end = first.get("line") == len(lines) and first.get("col", 0) >= len(lines[-1])
        # "Required keyword ... missing", "Expecting )": something should follow.
        wants_more = str(first.get("description", "")).startswith(_MISSING_PREFIXES)
        return bool(at_end and wants_more)
    except (SqlglotError, RecursionError, ValueError):
        return False
    return False


def _main_verb(tokens: list[Token]) -> str:
    """The verb of the statement: the first one at depth 0 after any WITH list."""
    first = tokens[0]
    if first.token_type == TokenType.L_PAREN:
        return _VERB_TOKENS.get(_first_inside(tokens), "other")
    if first.token_type == TokenType.WITH:
        depth = 0
        for token in tokens[1:]:
            depth += _depth_step(token)
            if depth == 0 and token.token_type in _VERB_TOKENS:
                return _VERB_TOKENS[token.token_type]
        return "with"
    if first.token_type in _VERB_TOKENS:
        return _VERB_TOKENS[first.token_type]
    word = first.text.split(None, 1)[0] if first.text.strip() else ""
    return "".join(c for c in word.lower() if c.isalpha() or c == "_") or "other"


def _first_inside(tokens: list[Token]) -> TokenType:
    """The first token type after the leading parentheses of ``((SELECT ...``."""
    inner = (t.token_type for t in tokens if t.token_type != TokenType.L_PAREN)
    return next(inner, TokenType.UNKNOWN)


def _depth_step(token: Token) -> int:
    if token.token_type == TokenType.L_PAREN:
        return 1
    if token.token_type == TokenType.R_PAREN:
        return -1
    return 0


def _select_refusal(sql: str, tokens: list[Token]) -> str | None:
    """Why a SELECT must not be executed, or None."""
    if _EXECUTABLE_COMMENT_RE.search(sql):
        return f"the SELECT holds a /*! ... */ comment the server would run: {ONLY_EXPLAINED}"
    types = [t.token_type for t in tokens]
    if TokenType.INTO in types:
        return f"a SELECT ... INTO writes to a file or variables: {ONLY_EXPLAINED}"
    if _locks_rows(tokens):
        return (
            f"the SELECT locks rows (FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE): {ONLY_EXPLAINED}"
        )
    for index, token in enumerate(tokens[:-1]):
        name = token.text.lower()
        if name in SIDE_EFFECT_FUNCTIONS and tokens[index + 1].token_type == TokenType.L_PAREN:
            return f"the SELECT calls {name.upper()}(), which does more than read: {ONLY_EXPLAINED}"
    return None


def _locks_rows(tokens: list[Token]) -> bool:
    words = [t.text.upper() for t in tokens]
    pairs = set(itertools.pairwise(words))
    return bool(pairs & {("FOR", "UPDATE"), ("FOR", "SHARE"), ("LOCK", "IN")})


def _classify_dml(verb: str, tokens: list[Token]) -> Classification:
    statement = f"{_article(verb)} {verb.upper()}"
    never = f"{statement} is never executed on a monitored server: {ONLY_EXPLAINED}"
    if verb in ("insert", "replace") and not any(t.token_type == TokenType.SELECT for t in tokens):
        reason = f"{statement} ... VALUES reads no table: there is no plan to explain"
        return Classification(StatementKind.DML, verb, reason, never)
    return Classification(StatementKind.DML, verb, None, never)


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"
