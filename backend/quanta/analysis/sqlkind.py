"""What an example statement is, whether it may be sent to a server, and what to EXPLAIN.

EXPLAIN and profiles use a real example of a query, read from a slow log or
performance_schema: hostile input, since anyone who can reach the server can put a
statement there. Before anything is sent the example is classified here, by ALLOWLIST on
the tokens of :mod:`quanta.analysis.sqltext` (a lexer that reads text as the server does):

* the statement is one SELECT (with WITH, UNION, subqueries) or one UPDATE, DELETE,
  INSERT ... SELECT or REPLACE ... SELECT;
* every function call is a built-in on :data:`~quanta.analysis.sqlfunctions.ALLOWED_FUNCTIONS`
  (EXPLAIN evaluates constant expressions, so a stored function or UDF would run even
  there), written so the server resolves it to the built-in (not ``db.f(``, ```f`(`` or
  ``COUNT (``);
* no user or system variables, no INTO, no PROCEDURE, no sequences, no locking clause
  except a trailing one on the SELECT (left out of what is explained);
* the example is complete: not cut by the collector, not exactly performance_schema's
  1024 bytes, parentheses balanced, not ending mid-statement, no ``?`` placeholders.

DML is never sent: it is explained as its equivalent SELECT (:func:`equivalent_select`), so
no session is ever read-write and the monitoring account needs no write privilege.

Example:
    >>> c = classify_statement("UPDATE orders SET amount = 1 WHERE id = 7")
    >>> c.kind.value, c.explain_text
    ('dml', 'SELECT * FROM orders WHERE id = 7')
    >>> classify_statement("SELECT * FROM t WHERE id = fgd()").explain_refusal  # doctest: +ELLIPSIS
    'the example calls FGD(), which is not a built-in function known to be free of side ...'
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

import sqlglot
from sqlglot.errors import ParseError, SqlglotError

from quanta.analysis.sqlfunctions import (
    ALLOWED_FUNCTIONS,
    CAST_TYPES,
    DENIED_FUNCTIONS,
    PAREN_KEYWORDS,
    SUBQUERY_QUANTIFIERS,
)
from quanta.analysis.sqltext import LexRefusal, Token, TokenKind, lex, unquote_ident

__all__ = [
    "Classification",
    "StatementKind",
    "StatementRefusal",
    "calls_default",
    "classify_statement",
    "definition_refusal",
    "equivalent_select",
    "object_names",
    "plain_select_refusal",
    "show_refusal",
]

ONLY_EXPLAINED = "it is only explained"
PLACEHOLDER_REFUSAL = (
    "the text has ? placeholders: it is a fingerprint or a prepared statement, "
    "and only an example with its values can be explained"
)
SEVERAL = "the example holds several statements: only one statement can be explained"
# Markers that tools append to text they cut short: pt-query-digest, P_S DIGEST_TEXT.
TRUNCATION_MARKERS = ("...", "\u2026")
# performance_schema keeps at most this many bytes of SQL_TEXT by default
# (performance_schema_max_sql_text_length): an example of exactly that size was cut.
PERFORMANCE_SCHEMA_TEXT_LIMIT = 1024
DML_VERBS = frozenset(("update", "delete", "insert", "replace"))
_VERBS = frozenset(("SELECT", "UPDATE", "DELETE", "INSERT", "REPLACE"))
_MISSING_PREFIXES = ("Required keyword", "Expecting", "Expected")
_SEQUENCE_WORDS = frozenset(("NEXTVAL", "LASTVAL", "SETVAL", "CURRVAL"))
_LOCKING_TAIL_WORDS = frozenset(("OF", "NOWAIT", "SKIP", "LOCKED", "WAIT"))
_INSERT_MODIFIERS = ("LOW_PRIORITY", "DELAYED", "HIGH_PRIORITY", "IGNORE")
_UPDATE_MODIFIERS = ("LOW_PRIORITY", "IGNORE")
_DELETE_MODIFIERS = ("LOW_PRIORITY", "QUICK", "IGNORE")
_WHERE_ON = ("WHERE", "ORDER", "LIMIT")


class StatementKind(enum.StrEnum):
    """The three families the analysis treats differently."""

    SELECT = "select"
    DML = "dml"
    OTHER = "other"


class StatementRefusal(ValueError):
    """An example Quanta will not send; ``str()`` is the one-line reason."""


@dataclass(frozen=True, slots=True)
class Classification:
    """What a statement is, what to EXPLAIN for it, and why it may not be sent (None: it may).

    Attributes:
        kind: SELECT, DML or OTHER.
        verb: The statement's main verb in lower case (``select``, ``update``, ``set``...).
        explain_refusal: Why it must not be explained, or None.
        execute_refusal: Why it must not be executed (profile, ANALYZE), or None.
        explain_text: The SELECT to EXPLAIN for it (DML as its equivalent SELECT, a
            trailing locking clause left out), or None when it is refused.
        explain_note: What differs between the example and ``explain_text``, or None.
    """

    kind: StatementKind
    verb: str
    explain_refusal: str | None
    execute_refusal: str | None
    explain_text: str | None = None
    explain_note: str | None = None

    @property
    def explainable(self) -> bool:
        """Whether EXPLAIN may be run on it (on ``explain_text``)."""
        return self.explain_refusal is None

    @property
    def executable(self) -> bool:
        """Whether it may be executed on an execution target (only plain SELECTs)."""
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
        tokens = lex(sql)
    except LexRefusal as exc:
        return _refused("other", str(exc))
    if not tokens:
        return _refused("other", "the example is empty")
    verb = _main_verb(tokens)
    problem = _shape_problem(sql, tokens, truncated)
    if problem:
        return _refused(verb, problem)
    if verb != "select" and verb not in DML_VERBS:
        return _refused(
            verb,
            "only SELECT, UPDATE, DELETE, INSERT ... SELECT and REPLACE ... SELECT are "
            f"explained; this is {_article(verb)} {verb.upper()} statement",
        )
    body = _body(tokens)
    try:
        header_end = _check_tokens(body, verb)
        if verb == "select":
            text, note = _select_text(sql, body)
        else:
            text, note = _dml_select(sql, body, verb, header_end), None
    except StatementRefusal as exc:
        return _refused(verb, str(exc))
    if _ends_mid_statement(sql.rstrip()):
        return _refused(verb, "the example is truncated: it ends in the middle of the statement")
    if verb == "select":
        execute = None if note is None else f"the SELECT locks rows: {ONLY_EXPLAINED}"
        return Classification(StatementKind.SELECT, verb, None, execute, text, note)
    statement = f"{_article(verb)} {verb.upper()}"
    return Classification(
        StatementKind.DML,
        verb,
        None,
        f"{statement} is never executed on a monitored server: {ONLY_EXPLAINED}",
        text,
        f"{statement} is explained as its equivalent SELECT",
    )


def equivalent_select(sql: str) -> str:
    """The SELECT whose plan is the plan of an UPDATE, DELETE or INSERT/REPLACE ... SELECT.

    UPDATE and DELETE read the rows their FROM/JOIN and WHERE (ORDER BY, LIMIT) pick, as
    ``SELECT *`` over the same tables does; INSERT/REPLACE ... SELECT reads what its SELECT
    reads. A SELECT is returned as it is (less a trailing locking clause).

    Raises:
        StatementRefusal: the statement may not be explained (the reason says why).

    Example:
        >>> equivalent_select("DELETE FROM orders WHERE created_at < '2020-01-01' LIMIT 10")
        "SELECT * FROM orders WHERE created_at < '2020-01-01' LIMIT 10"
        >>> equivalent_select("INSERT INTO a (x) SELECT id FROM b WHERE id > 3")
        'SELECT id FROM b WHERE id > 3'
    """
    classification = classify_statement(sql)
    if classification.explain_text is None:
        raise StatementRefusal(classification.explain_refusal or "not explainable")
    return classification.explain_text


def plain_select_refusal(sql: str, *, executes: bool) -> str | None:
    """Why ``sql`` is not a SELECT Quanta may send as it is, or None (the final gate).

    The text must classify as an explainable SELECT that needs no rewriting (DML and
    locking clauses are rewritten before they get here); ``executes``
    (ANALYZE, profiles, Quanta's own reads) also needs it to be executable.

    Example:
        >>> plain_select_refusal("SELECT * FROM t WHERE id = 1", executes=True) is None
        True
        >>> plain_select_refusal("DELETE FROM t", executes=False)
        'only a SELECT is sent: a DML statement is explained as its equivalent SELECT'
    """
    classification = classify_statement(sql)
    if not classification.explainable:
        return classification.explain_refusal
    if classification.kind is not StatementKind.SELECT:
        return "only a SELECT is sent: a DML statement is explained as its equivalent SELECT"
    if classification.explain_note is not None:
        return f"only the SELECT Quanta explains is sent ({classification.explain_note})"
    if executes and not classification.executable:
        return classification.execute_refusal
    return None


def show_refusal(sql: str) -> str | None:
    """Why a SHOW statement may not be sent, or None: same lexer, same call allowlist.

    Example:
        >>> show_refusal("SHOW INDEX FROM `shop`.`my;table`") is None
        True
        >>> show_refusal("SHOW VARIABLES WHERE SLEEP(1)")  # doctest: +ELLIPSIS
        'the example calls SLEEP(), which waits on purpose: it is not sent'
    """
    try:
        tokens = lex(sql)
    except LexRefusal as exc:
        return str(exc)
    if not tokens or not tokens[0].is_word("SHOW"):
        return "not a SHOW statement"
    body = _body(tokens)
    if any(token.is_punct(";") for token in body):
        return SEVERAL
    try:
        _check_tokens(body, "show")
    except StatementRefusal as exc:
        return str(exc)
    return None


def definition_refusal(text: str) -> str | None:
    """Why a definition stored on the server may not be evaluated for Quanta, or None.

    A view's SELECT (``information_schema.VIEWS.VIEW_DEFINITION``), a generated column's or
    a DEFAULT expression: the server evaluates them when a statement reaches them, even under
    EXPLAIN, with their definer's rights. The same lexer and allowlist as for an example
    decide (the server writes these in its canonical form: backticked names, backslash
    escapes, which the lexer reads under Quanta's sql_mode).

    Example:
        >>> definition_refusal("select `shop`.`t`.`id` AS `id` from `shop`.`t`") is None
        True
        >>> definition_refusal("select 1 AS `a` from `shop`.`t` where `shop`.`t`.`id` = `f`()")
        'its definition calls `f`(), a quoted name that can only be a stored function or a UDF'
    """
    try:
        tokens = lex(text)
    except LexRefusal as exc:
        return _of_definition(str(exc))
    body = _body(tokens) if tokens else tokens
    if any(token.is_punct(";") for token in body):
        return "its definition holds several statements"
    try:
        _check_tokens(body, "select")
    except StatementRefusal as exc:
        return _of_definition(str(exc))
    return None


def _of_definition(reason: str) -> str:
    """An example's refusal said of a stored definition."""
    reason = reason.removesuffix(": it is not sent").removesuffix(", so it is not sent")
    return reason.replace("the example", "its definition", 1)


def object_names(sql: str, default_db: str | None) -> set[tuple[str, str]]:
    """Every (database, name) the text could name as a table, view or sequence, as written.

    Each name alone (in ``default_db``, when there is one) and each ``a.b`` (``a`` a
    database): more than the statement names (columns, aliases, keywords too), never fewer,
    whatever the grammar; the server's own catalog then says which exist. Text the lexer
    refuses names nothing here (it is never sent).

    Example:
        >>> sorted(object_names("SELECT o.id FROM `shop`.`Ord``ers` o", None))
        [('o', 'id'), ('shop', 'Ord`ers')]
        >>> ("App", "o") in object_names("SELECT * FROM o", "App")
        True
    """
    try:
        tokens = lex(sql)
    except LexRefusal:
        return set()
    names: set[tuple[str, str]] = set()
    for index, token in enumerate(tokens):
        name = _name(token)
        if name is None:
            continue
        if default_db:
            names.add((default_db, name))
        if index + 2 < len(tokens) and tokens[index + 1].is_punct("."):
            qualified = _name(tokens[index + 2])
            if qualified is not None:
                names.add((name, qualified))
    return names


def calls_default(sql: str) -> bool:
    """Whether the text calls ``DEFAULT(col)``, which evaluates the column's DEFAULT
    expression (MariaDB: even under EXPLAIN; ``DEFAULT (NEXT VALUE FOR s)`` advances ``s``).

    Example:
        >>> calls_default("SELECT DEFAULT(v) FROM t"), calls_default("SELECT v FROM t")
        (True, False)
    """
    try:
        tokens = lex(sql)
    except LexRefusal:
        return True  # not read: assume the worst
    return any(
        token.is_word("DEFAULT") and index + 1 < len(tokens) and tokens[index + 1].is_punct("(")
        for index, token in enumerate(tokens)
    )


def _name(token: Token) -> str | None:
    if token.kind is TokenKind.WORD:
        return token.text
    if token.kind is TokenKind.QUOTED_NAME:
        return unquote_ident(token.text)
    return None


# --------------------------------------------------------------------------- shape


def _refused(verb: str, reason: str) -> Classification:
    return Classification(_kind(verb), verb, reason, reason)


def _kind(verb: str) -> StatementKind:
    if verb == "select":
        return StatementKind.SELECT
    return StatementKind.DML if verb in DML_VERBS else StatementKind.OTHER


def _body(tokens: list[Token]) -> list[Token]:
    return tokens[:-1] if tokens[-1].is_punct(";") else tokens


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
    body = _body(tokens)
    if any(t.is_punct(";") for t in body):
        return SEVERAL
    if any(t.is_punct("?") for t in body):
        return PLACEHOLDER_REFUSAL
    if not _balanced(body):
        return "the example is truncated: its parentheses do not balance"
    return None


def _balanced(tokens: Sequence[Token]) -> bool:
    depth = 0
    for token in tokens:
        depth += _step(token)
        if depth < 0:
            return False
    return depth == 0


def _step(token: Token) -> int:
    if token.is_punct("("):
        return 1
    return -1 if token.is_punct(")") else 0


def _depths(tokens: Sequence[Token]) -> list[int]:
    """The nesting level of each token; a parenthesis belongs to the outer level."""
    depths, depth = [], 0
    for token in tokens:
        if token.is_punct(")"):
            depth -= 1
        depths.append(depth)
        if token.is_punct("("):
            depth += 1
    return depths


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
    """The verb of the statement: the first one at its level after leading ( and WITH."""
    start = 0
    while start < len(tokens) and tokens[start].is_punct("("):
        start += 1
    if start == len(tokens):
        return "other"
    first = tokens[start]
    if first.is_word("WITH"):
        depths = _depths(tokens)
        for index in range(start + 1, len(tokens)):
            if depths[index] == start and tokens[index].upper in _VERBS:
                return tokens[index].text.lower()
        return "with"
    if first.kind is TokenKind.WORD:
        return first.text.lower()
    return "other"


# --------------------------------------------------------------------------- allowlist


def _check_tokens(body: list[Token], verb: str) -> int:
    """Refuse what the allowlist does not accept; returns where an INSERT's SELECT starts.

    Raises:
        StatementRefusal: the first thing refused, with its reason.
    """
    header_end = _insert_select_start(body) if verb in ("insert", "replace") else 0
    cte_names = _cte_names_with_columns(body)
    for index, token in enumerate(body):
        if token.kind is TokenKind.PUNCT:
            _check_punct(body, index)
        elif token.kind is TokenKind.WORD:
            _check_word(body, index, into_allowed=index < header_end)
        if _before_paren(body, index):
            if index < header_end or index in cte_names or _column_list(body, index):
                continue  # a table's or a CTE's column list, not a call
            _check_call(body, index)
    return header_end


def _before_paren(body: list[Token], index: int) -> bool:
    named = body[index].kind in (TokenKind.WORD, TokenKind.QUOTED_NAME)
    return named and index + 1 < len(body) and body[index + 1].is_punct("(")


def _cte_names_with_columns(body: list[Token]) -> set[int]:
    """Indexes of CTE names followed by a column list: ``WITH [RECURSIVE] c (a, b) AS``."""
    found: set[int] = set()
    for index, token in enumerate(body):
        if not token.is_word("WITH"):
            continue
        at = index + 1
        if at < len(body) and body[at].is_word("RECURSIVE"):
            at += 1
        while at + 1 < len(body):
            if body[at + 1].is_punct("("):
                found.add(at)
                at = _closing(body, at + 1) + 1
            if not (at + 1 < len(body) and body[at].is_word("AS") and body[at + 1].is_punct("(")):
                break
            at = _closing(body, at + 1) + 1
            if not (at < len(body) and body[at].is_punct(",")):
                break
            at += 1
    return found


def _closing(body: list[Token], open_at: int) -> int:
    """The index of the ")" closing the "(" at ``open_at`` (the last token if none)."""
    depth = 0
    for index in range(open_at, len(body)):
        depth += _step(body[index])
        if depth == 0:
            return index
    return len(body) - 1


def _check_punct(body: list[Token], index: int) -> None:
    token = body[index]
    if token.text == "@":
        following = body[index + 1] if index + 1 < len(body) else None
        if following is not None and following.is_punct("@"):
            raise StatementRefusal("the example reads a system variable (@@name): it is not sent")
        raise StatementRefusal(
            "the example uses a user variable (@name), which it could set: it is not sent"
        )
    if token.text == ":=":
        raise StatementRefusal("the example assigns a variable (:=): it is not sent")
    if token.text == ":":
        raise StatementRefusal("the example has the character ':', which Quanta does not accept")


def _check_word(body: list[Token], index: int, *, into_allowed: bool) -> None:
    word = body[index].upper
    if word == "INTO" and not into_allowed:
        raise StatementRefusal(
            "the example has INTO (OUTFILE, DUMPFILE or variables), which writes: it is not sent"
        )
    if word == "PROCEDURE":
        raise StatementRefusal(
            "the example has PROCEDURE (ANALYSE), which runs code: it is not sent"
        )
    if word in _SEQUENCE_WORDS or (word in ("NEXT", "PREVIOUS") and _value_for(body, index)):
        raise StatementRefusal(
            "the example uses a sequence (NEXT VALUE FOR, NEXTVAL...), which changes its "
            "state: it is not sent"
        )


def _value_for(body: list[Token], index: int) -> bool:
    following = body[index + 1 : index + 3]
    return len(following) == 2 and following[0].is_word("VALUE") and following[1].is_word("FOR")


def _column_list(body: list[Token], index: int) -> bool:
    """Whether the name at ``index`` is a derived table's alias: ``(...) [AS] name (cols)``."""
    before = body[index - 1] if index >= 1 else None
    if before is not None and before.is_word("AS"):
        before = body[index - 2] if index >= 2 else None
    return before is not None and before.is_punct(")")


def _check_call(body: list[Token], index: int) -> None:
    token, paren = body[index], body[index + 1]
    shown = token.text.upper() if token.kind is TokenKind.WORD else token.text
    if index >= 1 and body[index - 1].is_punct("."):
        raise StatementRefusal(
            f"the example calls {_qualified(body, index)}(), a stored function: it is not sent"
        )
    if token.kind is TokenKind.QUOTED_NAME:
        raise StatementRefusal(
            f"the example calls {shown}(), a quoted name that can only be a stored function "
            "or a UDF: it is not sent"
        )
    if token.kind is not TokenKind.WORD:
        return  # a string or ")" before "(": not a call
    name = token.text.lower()
    if name in PAREN_KEYWORDS or (name in CAST_TYPES and _after_as(body, index)):
        return
    if name in SUBQUERY_QUANTIFIERS and _subquery_follows(body, index):
        return
    if name in DENIED_FUNCTIONS:
        raise StatementRefusal(
            f"the example calls {shown}(), which {DENIED_FUNCTIONS[name]}: it is not sent"
        )
    if name not in ALLOWED_FUNCTIONS:
        raise StatementRefusal(
            f"the example calls {shown}(), which is not a built-in function known to be free "
            "of side effects (a stored function or UDF runs even under EXPLAIN): it is not sent"
        )
    if paren.spaced:
        raise StatementRefusal(
            f"the example writes {shown} (...) with a space before '(': the server may then "
            "call a stored function of that name: it is not sent"
        )
    if name == "last_insert_id" and not (index + 2 < len(body) and body[index + 2].is_punct(")")):
        raise StatementRefusal(
            "the example calls LAST_INSERT_ID(expr), which sets the session's value: it is not sent"
        )


def _subquery_follows(body: list[Token], index: int) -> bool:
    return index + 2 < len(body) and body[index + 2].is_word("SELECT", "WITH")


def _after_as(body: list[Token], index: int) -> bool:
    return index >= 1 and body[index - 1].is_word("AS")


def _qualified(body: list[Token], index: int) -> str:
    start = index
    while start >= 2 and body[start - 1].is_punct("."):
        start -= 2
    return ".".join(body[i].text for i in range(start, index + 1, 2))


# --------------------------------------------------------------------------- what to explain


def _select_text(sql: str, body: list[Token]) -> tuple[str, str | None]:
    """The SELECT to explain: the example, less a trailing locking clause."""
    depths = _depths(body)
    for index in range(len(body)):
        length = _locking_clause(body, index)
        if not length:
            continue
        tail = body[index + length :]
        if depths[index] != 0 or not _locking_tail(tail):
            raise StatementRefusal(
                "the example has a locking clause (FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE) "
                "inside a subquery or before the end: it is not sent"
            )
        text = sql[body[0].start : body[index - 1].end] if index else ""
        words = " ".join(t.upper for t in body[index : index + length])
        return text, f"the SELECT's locking clause ({words}) is left out of what is explained"
    return sql[body[0].start : body[-1].end], None


def _locking_clause(body: list[Token], index: int) -> int:
    """How many tokens the locking clause starting at ``index`` has (0: none there)."""
    token = body[index]
    following = body[index + 1 : index + 4]
    if token.is_word("FOR") and following and following[0].is_word("UPDATE", "SHARE"):
        return 2
    words = [t.upper for t in following if t.kind is TokenKind.WORD]
    if token.is_word("LOCK") and words[:3] == ["IN", "SHARE", "MODE"]:
        return 4
    return 0


def _locking_tail(tail: Sequence[Token]) -> bool:
    """Whether what follows a locking clause is only its options (OF t, NOWAIT, WAIT n)."""
    for token in tail:
        if token.kind is TokenKind.PUNCT and token.text not in (",", "."):
            return False
        if token.kind is TokenKind.STRING:
            return False
    return not tail or tail[0].upper in _LOCKING_TAIL_WORDS


def _dml_select(sql: str, body: list[Token], verb: str, header_end: int) -> str:
    if any(_locking_clause(body, i) for i in range(len(body))):
        raise StatementRefusal(
            f"the {verb.upper()} has a locking clause (FOR UPDATE, LOCK IN SHARE MODE): "
            "it is not sent"
        )
    depths = _depths(body)
    verb_at = next(i for i, t in enumerate(body) if depths[i] == 0 and t.is_word(verb.upper()))
    prefix = sql[body[0].start : body[verb_at].start] if verb_at else ""
    if verb == "update":
        return prefix + _update_select(sql, body, depths, verb_at)
    if verb == "delete":
        return prefix + _delete_select(sql, body, depths, verb_at)
    return _insert_select(sql, body, depths, header_end)


def _find(
    body: list[Token], depths: list[int], start: int, *words: str, default: int | None = None
) -> int | None:
    for index in range(start, len(body)):
        if depths[index] == 0 and body[index].is_word(*words):
            return index
    return default


def _skip(body: list[Token], index: int, modifiers: tuple[str, ...]) -> int:
    while index < len(body) and body[index].is_word(*modifiers):
        index += 1
    return index


def _span(sql: str, body: list[Token], first: int, last: int) -> str:
    """The text from token ``first`` to token ``last`` inclusive."""
    return sql[body[first].start : body[last].end]


def _from_where(sql: str, body: list[Token], refs: tuple[int, int], tail: int | None) -> str:
    first, last = refs
    if last < first:
        raise StatementRefusal("the statement names no table: there is no plan to explain")
    text = f"SELECT * FROM {_span(sql, body, first, last)}"
    end = _find(body, _depths(body), tail or 0, "RETURNING", default=len(body))
    if tail is not None and end is not None and end > tail:
        text += f" {_span(sql, body, tail, end - 1)}"
    return text


def _update_select(sql: str, body: list[Token], depths: list[int], verb_at: int) -> str:
    first = _skip(body, verb_at + 1, _UPDATE_MODIFIERS)
    set_at = _find(body, depths, first, "SET")
    if set_at is None:
        raise StatementRefusal("the UPDATE has no SET: it is not a statement Quanta reads")
    tail = _find(body, depths, set_at + 1, *_WHERE_ON)
    return _from_where(sql, body, (first, set_at - 1), tail)


def _delete_select(sql: str, body: list[Token], depths: list[int], verb_at: int) -> str:
    first = _skip(body, verb_at + 1, _DELETE_MODIFIERS)
    if first < len(body) and body[first].is_word("FROM"):
        using = _find(body, depths, first + 1, "USING")
        start = (using if using is not None else first) + 1
    else:
        from_at = _find(body, depths, first, "FROM")
        if from_at is None:
            raise StatementRefusal("the DELETE has no FROM: it is not a statement Quanta reads")
        start = from_at + 1
    tail = _find(body, depths, start, *_WHERE_ON, "RETURNING")
    end = (tail if tail is not None else len(body)) - 1
    return _from_where(sql, body, (start, end), tail)


def _insert_select_start(body: list[Token]) -> int:
    """Where the SELECT of INSERT/REPLACE ... SELECT starts (its index in ``body``)."""
    depths = _depths(body)
    for index in range(1, len(body)):
        token = body[index]
        if depths[index] != 0:
            continue
        if token.is_word("SELECT", "WITH"):
            return index
        nxt = body[index + 1] if index + 1 < len(body) else None
        if token.is_punct("(") and nxt is not None and nxt.is_word("SELECT", "WITH"):
            return index
        if token.is_word("VALUES", "VALUE", "SET", "TABLE"):
            break
    verb = body[0].upper
    raise StatementRefusal(
        f"{_article(verb.lower())} {verb} without a SELECT reads no table: there is no plan "
        "to explain"
    )


def _insert_select(sql: str, body: list[Token], depths: list[int], start: int) -> str:
    end = len(body)
    for index in range(start, len(body)):
        token = body[index]
        duplicate = index + 1 < len(body) and body[index + 1].is_word("DUPLICATE")
        if depths[index] == 0 and (
            token.is_word("RETURNING") or (token.is_word("ON") and duplicate)
        ):
            end = index
            break
    return _span(sql, body, start, end - 1)


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"
