"""Credential redaction: the secret of every credential-bearing statement replaced by a marker.

MariaDB logs ``CREATE USER ... IDENTIFIED BY 'secret'`` as written, and MySQL rewrites only
some forms in some logs, so a statement read from a slow log or performance_schema may hold
a password. :func:`redact` replaces each such secret with ``'<redacted>'`` whatever the
example policy; the agent calls it before a statement leaves the host and the server before
it stores an example (for agents that did not).

The secret is always a literal (a string, hex, bit or number) and the marker is a string
literal, so the fingerprint, and with it the query_id, is the same before and after.

Forms (MySQL 5.7/8.x, Percona Server, MariaDB):

* ``IDENTIFIED`` clauses of CREATE USER, ALTER USER, GRANT (5.7, MariaDB) and CLONE:
  from ``IDENTIFIED`` to the end of the statement, the literal after ``BY [PASSWORD]``,
  ``AS``, ``USING`` and ``REPLACE``: ``IDENTIFIED BY 'x' REPLACE 'old'``, ``IDENTIFIED WITH
  plugin BY 'x' | AS 'hash'``, MariaDB's ``IDENTIFIED VIA p USING 'x' OR q USING ...``,
  several users and factors (``AND IDENTIFIED ...``, ``INITIAL AUTHENTICATION ...``).
* ``SET PASSWORD [FOR user] = 'x' [REPLACE 'old']`` and ``... FINISH REGISTRATION SET
  CHALLENGE_RESPONSE AS 'x'``.
* Password options and variables, whatever the statement: a name holding ``passw``,
  ``pwd``, ``secret`` or ``passphrase`` followed by ``=``, ``:=`` or nothing and a string:
  ``MASTER_PASSWORD=``, ``SOURCE_PASSWORD=``, ``START SLAVE|REPLICA ... PASSWORD=``,
  ``START GROUP_REPLICATION ... PASSWORD=``, ``CREATE|ALTER SERVER ... OPTIONS (PASSWORD
  'x')``, ``SET GLOBAL authentication_ldap_simple_bind_root_pwd = 'x'``, a ``password``
  column compared or assigned.
* Every literal in the key arguments of ``PASSWORD()``, ``OLD_PASSWORD()``, ``ENCRYPT()``,
  ``AES_ENCRYPT/AES_DECRYPT/DES_ENCRYPT/DES_DECRYPT(str, key, ...)``, ``ENCODE/DECODE(str,
  key)``, ``VALIDATE_PASSWORD_STRENGTH()``, MariaDB's ``KDF()``, ``keyring_key_store()``,
  the enterprise ``asymmetric_*`` functions and ``audit_log_encryption_password_set()``.
* Inside strings: the password of a URL (FEDERATED ``CONNECTION='mysql://u:x@h/db/t'``) and
  ``password=x`` / ``password "x"`` (CONNECT ``OPTION_LIST``, Spider ``COMMENT``).
* INSERT, UPDATE and REPLACE on ``mysql.user`` / ``mysql.global_priv``: every string.
* ``PREPARE ... FROM '...'`` and ``EXECUTE IMMEDIATE '...'``: the whole string, when the
  statement in it holds a secret.

And by meaning, whatever the statement: a literal given to a column, variable, option or
JSON key whose name is a secret name (``secret_names.ini``, matched by word parts: see
:mod:`quanta.analysis.secret_names`; ``password``, ``api_key``, ``authToken``, ``pin`` but
not ``pinned`` or ``author``):

* assigned: ``SET password = ...``, ``ON DUPLICATE KEY UPDATE token = ...``, ``SET @pin :=``;
* an INSERT/REPLACE column list mapped onto every ``VALUES [ROW](...)`` row or the SELECT
  list: ``INSERT INTO users (login, password) VALUES ('alice', '<redacted>')``;
* compared, either way round: ``=``, ``<=>``, ``<>``, ``<``..., ``[NOT] LIKE``, ``REGEXP``,
  ``[NOT] IN (...)``, ``BETWEEN``, a simple ``CASE password WHEN ...``; row constructors
  position by position (``(login, password) = ('alice', '<redacted>')``); a subquery's
  literals when it is compared with a secret;
* every literal of the other side, functions and all: ``password = SHA2('<redacted>',
  '<redacted>')``, ``IF(...)``, ``CASE ... END``, ``CONCAT(...)``;
* passed to a function with a secret column or key, or to a function named for a secret:
  ``CONCAT(salt, '<redacted>')``, ``JSON_SET(doc, '$.password', '<redacted>')``,
  ``CALL set_password('<redacted>')``;
* key/value rows and statements whose key string is a secret name: ``VALUES
  ('smtp_password', '<redacted>')``, ``SET value = '<redacted>' WHERE name =
  'smtp_password'``; and ``key=value`` pairs inside any string (``?token=<redacted>``).

Not redacted, since nothing in the statement says where the secret is: an INSERT without a
column list (``INSERT INTO users VALUES ('alice', 'x')``: the table's columns are not in the
text), a procedure's positional arguments (``CALL create_user('alice', 'x')``) and a column
whose name is not a secret name (``pw``, ``hash``). A literal near a secret name is redacted
even when it is not one (``token_id = 5`` is not, ``LENGTH(password) > 8`` is): the rules
err on the side of the secret.

The scan works on tokens as the server reads them: both quote styles with doubled quotes and
backslash escapes, comments (``/* */``, ``#``, ``-- ``) skipped, executable comments
(``/*!50700 ... */``, ``/*M! ... */``) read through, keywords in any case and on any line.
A string the server would read shorter (``NO_BACKSLASH_ESCAPES``) is redacted as the longer
one, never less. Most statements hold none of the keywords: :func:`redact` returns them as
they are after one regular-expression search.

Example:
    >>> redact("CREATE USER 'app'@'%' IDENTIFIED BY 'sekret'")
    "CREATE USER 'app'@'%' IDENTIFIED BY '<redacted>'"
    >>> redact("SELECT * FROM t WHERE id = 1")
    'SELECT * FROM t WHERE id = 1'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import accumulate

from quanta.analysis.secret_names import SECRET_NAMES, is_secret_name, trie_pattern
from quanta.analysis.sqltext import unquote_ident
from quanta.analysis.sqltext.spec import (
    BLOCK_COMMENT_PATTERN,
    DASH_COMMENT_PATTERN,
    EXECUTABLE_OPENER_PATTERN,
    HASH_COMMENT_PATTERN,
    quoted_pattern,
)

__all__ = ["MARKER", "REDACTED_LITERAL", "TRIGGER_WORDS", "might_hold_secret", "redact"]

MARKER = "<redacted>"
REDACTED_LITERAL = f"'{MARKER}'"
# N'..' keeps its N: the fingerprint reads "_utf8mb4 N'x'" as two tokens, "_utf8mb4 'x'" as one.
_NATIONAL_LITERAL = f"N{REDACTED_LITERAL}"
_MARKERS = (REDACTED_LITERAL, _NATIONAL_LITERAL)

# Any credential form holds one of these (lower case), or a secret name holds one of
# SECRET_NAMES' trigger words: a statement without any is returned as it is. The pre-check
# is one search of the lower-cased text with the words as a trie (one branch per first
# letter): three times faster than testing each word as a substring, and several times
# faster than a case-insensitive search, which matters on the agent's per-event path
# (bench/redaction_cost.py). TRIGGER_WORDS spells them for SQL filters (LIKE '%word%').
_FORM_WORDS = (
    "identified", "crypt", "encode", "decode", "kdf", "keyring", "asymmetric",
    "challenge_response", "mysql", "prepare", "immediate", "://",
)  # fmt: skip
TRIGGER_WORDS = (*SECRET_NAMES.trigger_words, *_FORM_WORDS)
_TRIGGER_RE = re.compile(
    trie_pattern(sorted({*_FORM_WORDS, *SECRET_NAMES.trigger_words_with_gaps}))
)
# The words of the credential forms (IDENTIFIED, SET PASSWORD, PASSWORD(), AES_ENCRYPT(),
# mysql.user, PREPARE ...): a statement without any needs only the rules by meaning and the
# look into strings, not the form scan's state (which costs a step per word).
_FORMS_RE = re.compile(trie_pattern(sorted({*_FORM_WORDS, "pass", "pwd", "secret"})))

# Strings, quoted names and comments by the rules of quanta.analysis.sqltext.spec (lenient:
# an unclosed one runs to the end); tests/analysis/test_sqltext.py checks on the corpora that
# this expression finds the spans sqltext's own scan does.
_SINGLE = quoted_pattern("'", escapes=True, closed=False)
_DOUBLE = quoted_pattern('"', escapes=True, closed=False)
_BACKTICK = quoted_pattern("`", escapes=False, closed=False)
# Blanks before a token are part of its match (\s*+): one match a token, not two.
_TOKEN_RE = re.compile(
    rf"""\s*+(?:
      (?P<exec>{EXECUTABLE_OPENER_PATTERN})                     # executable comment: read on
    | (?P<comment>{BLOCK_COMMENT_PATTERN} | {HASH_COMMENT_PATTERN} | {DASH_COMMENT_PATTERN})
    | (?P<close>\*/)                                            # an executable comment's end
    | (?P<str>n?(?:{_SINGLE} | {_DOUBLE}))
    | (?P<hex>[xb]'[^']*'? | 0x[0-9a-f]+(?![\w$]) | 0b[01]+(?![\w$]))
    | (?P<num>(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?(?![\w$]))
    | (?P<name>{_BACKTICK})
    | (?P<word>[^\W\d][\w$]* | \d[\w$]*)
    | (?P<op>:= | <=> | <= | >= | <> | != | ->> | -> | \|\| | && | << | >> | [=(),;.@+-] | \S)
    )""",
    re.VERBOSE | re.IGNORECASE | re.DOTALL,
)
_LITERAL_KINDS = frozenset(("str", "hex", "num"))
_STRINGISH_KINDS = frozenset(("str", "hex"))

# After IDENTIFIED (or SET PASSWORD, CHALLENGE_RESPONSE) the literal after these is a secret.
_SECRET_AFTER = frozenset(("BY", "AS", "USING", "REPLACE", "="))
_CREDENTIAL_CLAUSE_WORDS = frozenset(("IDENTIFIED", "CHALLENGE_RESPONSE"))
# Function name -> index of its first secret argument (every later one is secret too).
_SECRET_ARGUMENTS = {
    "PASSWORD": 0,
    "OLD_PASSWORD": 0,
    "ENCRYPT": 0,
    "VALIDATE_PASSWORD_STRENGTH": 0,
    "KDF": 0,
    "AUDIT_LOG_ENCRYPTION_PASSWORD_SET": 0,
    "AES_ENCRYPT": 1,
    "AES_DECRYPT": 1,
    "DES_ENCRYPT": 1,
    "DES_DECRYPT": 1,
    "ENCODE": 1,
    "DECODE": 1,
    "CREATE_ASYMMETRIC_PUB_KEY": 1,
    "ASYMMETRIC_DERIVE": 1,
    "ASYMMETRIC_DECRYPT": 2,
    "ASYMMETRIC_ENCRYPT": 2,
    "ASYMMETRIC_SIGN": 2,
    "KEYRING_KEY_STORE": 2,
}
_GRANT_TABLES = frozenset(("USER", "GLOBAL_PRIV"))
_WRITE_VERBS = frozenset(("INSERT", "UPDATE", "REPLACE"))
# Strings after these words (FEDERATED, Spider, CONNECT table options) are connection specs.
_CONNECTION_WORDS = frozenset(("CONNECTION", "COMMENT", "OPTION_LIST"))
_EMBEDDED_SQL_WORDS = frozenset(("FROM", "IMMEDIATE"))
# Inside a string: the password of a URL, and key=x / key "x" / "key": "x" where the key is
# a secret name (password=x, smtp_password=x, "api_key": "x", token=x).
_URL_PASSWORD_RE = re.compile(r"([a-z][\w+.-]*://[^:/@\s'\"]*:)([^@\s'\"/]+)(@)", re.IGNORECASE)
_KEY_VALUE_RE = re.compile(
    r"""((?<![\w$.-])([a-z_$][\w$.-]*)["']?(?:\s*[=:]\s*|\s+(?=["'])))"""
    r"""("[^"]*"|'[^']*'|[^\s,;&'"]+)""",
    re.IGNORECASE,
)
_WORD_RE = re.compile(r"[\w$.-]+")


@dataclass(slots=True)
class _Token:
    kind: str
    start: int
    end: int
    upper: str  # the word, upper case ("" for other kinds but operators, which keep theirs)
    hit: bool = False  # a trigger word overlaps it: it may be (or hold) a secret name


@dataclass(slots=True)
class _Frame:
    """An open parenthesis: the secret-argument index of its function, if any."""

    first_secret: int | None
    argument: int = 0


@dataclass(slots=True)
class _Statement:
    """What the scan knows about the current statement."""

    verb: str = ""
    credential_clause: bool = False  # past IDENTIFIED, SET PASSWORD or CHALLENGE_RESPONSE
    grant_table_write: bool = False
    frames: list[_Frame] = field(default_factory=list)


def might_hold_secret(sql: str) -> bool:
    """Whether ``sql`` holds a word of some credential form (cheap; :func:`redact` uses it).

    Example:
        >>> might_hold_secret("SELECT 1"), might_hold_secret("SET PASSWORD = 'x'")
        (False, True)
    """
    return _TRIGGER_RE.search(sql.lower()) is not None


def redact(sql: str) -> str:
    """``sql`` with the secret of every credential-bearing form replaced by ``'<redacted>'``.

    Args:
        sql: One statement, or several separated by ``;``, possibly cut short.

    Returns:
        The text with each secret literal replaced (everything else as it was); ``sql``
        itself when it holds none.

    Example:
        >>> redact("SET PASSWORD FOR 'u'@'%' = PASSWORD('x')")
        "SET PASSWORD FOR 'u'@'%' = PASSWORD('<redacted>')"
        >>> redact("CHANGE MASTER TO MASTER_HOST='db1', MASTER_PASSWORD='x'")
        "CHANGE MASTER TO MASTER_HOST='db1', MASTER_PASSWORD='<redacted>'"
    """
    lowered = sql.lower()
    if _TRIGGER_RE.search(lowered) is None:
        return sql
    tokens = _tokenize(sql, [match.span() for match in _TRIGGER_RE.finditer(lowered)])
    spans = _secret_spans(sql, tokens, forms=_FORMS_RE.search(lowered) is not None)
    if not spans:
        return sql
    out: list[str] = []
    position = 0
    for start, end, replacement in sorted(spans):
        if start < position:  # nested in a span already replaced
            continue
        out.append(sql[position:start])
        out.append(replacement)
        position = end
    out.append(sql[position:])
    return "".join(out)


def _tokenize(sql: str, hits: list[tuple[int, int]]) -> list[_Token]:
    """The tokens that matter: no blanks, no comments, executable comment marks dropped;
    those a trigger word (of ``hits``, in order) overlaps are marked."""
    tokens: list[_Token] = []
    append = tokens.append  # a hot loop: every token of every statement with a trigger word
    next_hit, last_hit = 0, len(hits)
    for match in _TOKEN_RE.finditer(sql):
        kind = match.lastgroup
        if kind is None or kind == "comment" or kind == "exec" or kind == "close":
            continue
        start, end = match.start(kind), match.end()
        while next_hit < last_hit and hits[next_hit][1] <= start:
            next_hit += 1
        if kind == "word" or kind == "op":
            upper = sql[start:end].upper()
        elif kind == "name":
            upper = unquote_ident(sql[start:end]).upper()
        else:
            upper = ""
        append(_Token(kind, start, end, upper, next_hit < last_hit and hits[next_hit][0] < end))
    return tokens


def _secret_spans(sql: str, tokens: list[_Token], *, forms: bool) -> list[tuple[int, int, str]]:
    """The spans to replace; without ``forms`` (no credential form's word in the text) the
    statement's state stays blank, as no word of the text could change it."""
    spans: list[tuple[int, int, str]] = []
    by_meaning = _Meaning(sql, tokens).secret_literals()
    state = _Statement()
    redacted_before = False  # the previous token was a literal replaced whole
    for i, token in enumerate(tokens):
        previous = tokens[i - 1] if i else None
        if token.kind in ("word", "name", "op"):
            if forms:
                state = _follow_word(state, tokens, i)
            redacted_before = False
            continue
        if redacted_before and token.kind in _STRINGISH_KINDS:
            # 'a' 'b' is one literal: the whole of it is the secret, one marker.
            start, _, marker = spans[-1]
            spans[-1] = (start, token.end, marker)
            continue
        span: tuple[int, int, str] | None = None
        if i in by_meaning:
            text = sql[token.start : token.end]
            span = (_signed_start(tokens, i), token.end, _marker(text))
        elif forms or any(t.hit for t in tokens[max(i - 3, 0) : i + 1]):
            # Without the forms' words, only a literal holding a trigger word or right after
            # a name holding one (password 'x', token = 'x') can be a secret.
            span = _literal_secret(sql, tokens, i, state, previous)
        redacted_before = span is not None and span[2] in _MARKERS
        if span is not None:
            spans.append(span)
    return spans


def _follow_word(state: _Statement, tokens: list[_Token], i: int) -> _Statement:
    """Update what is known of the statement after the word or operator ``tokens[i]``."""
    token = tokens[i]
    word = token.upper
    if word == ";" and token.kind == "op":
        return _Statement()
    if not state.verb and token.kind == "word":
        state.verb = word
    if token.kind == "word" and (
        word in _CREDENTIAL_CLAUSE_WORDS
        or (word == "PASSWORD" and _is_set_password(state, tokens, i))
    ):
        state.credential_clause = True
    elif word in _GRANT_TABLES and _word_at(tokens, i - 2) == "MYSQL" and _op_at(tokens, i - 1):
        state.grant_table_write = state.verb in _WRITE_VERBS
    elif word == "(" and token.kind == "op":
        name = _word_at(tokens, i - 1)
        state.frames.append(_Frame(_SECRET_ARGUMENTS.get(name) if name else None))
    elif word == ")" and token.kind == "op" and state.frames:
        state.frames.pop()
    elif word == "," and token.kind == "op" and state.frames:
        state.frames[-1].argument += 1
    return state


def _is_set_password(state: _Statement, tokens: list[_Token], i: int) -> bool:
    """SET PASSWORD as a statement (also in a routine's body or after MariaDB's SET
    STATEMENT ... FOR), not the SET of an UPDATE or INSERT whose column is called password."""
    if _word_at(tokens, i - 1) != "SET":
        return False
    return _word_at(tokens, i + 1) in ("FOR", "TO") or state.verb not in _WRITE_VERBS


def _literal_secret(
    sql: str, tokens: list[_Token], i: int, state: _Statement, previous: _Token | None
) -> tuple[int, int, str] | None:
    """The span to replace if the literal ``tokens[i]`` is (or holds) a secret."""
    token = tokens[i]
    text = sql[token.start : token.end]
    if _in_secret_argument(state):
        return (_signed_start(tokens, i), token.end, _marker(text))
    if token.kind not in _STRINGISH_KINDS:
        return None  # a password, hash or key outside a function call is a string or hex
    before = _skip_introducer(tokens, i - 1)
    if (state.credential_clause and before in _SECRET_AFTER) or (
        state.grant_table_write or _follows_secret_name(tokens, i)
    ):
        return (token.start, token.end, _marker(text))
    if token.kind != "str" or previous is None:
        return None
    if before in _EMBEDDED_SQL_WORDS and _embedded_sql_secret(text):
        return (token.start, token.end, _marker(text))
    return _string_secret(text, token, connection=_after_connection_word(tokens, i))


def _marker(text: str) -> str:
    return _NATIONAL_LITERAL if text[:1] in ("n", "N") else REDACTED_LITERAL


def _in_secret_argument(state: _Statement) -> bool:
    return any(
        frame.first_secret is not None and frame.argument >= frame.first_secret
        for frame in state.frames
    )


def _signed_start(tokens: list[_Token], i: int) -> int:
    """Where a number's unary sign starts, so that ``-5`` is replaced as one literal."""
    token = tokens[i]
    if (
        token.kind == "num"
        and i >= 2
        and tokens[i - 1].upper in ("-", "+")
        and (
            (tokens[i - 2].kind == "op" and tokens[i - 2].upper in _SIGN_AFTER)
            or (tokens[i - 2].kind == "word" and tokens[i - 2].upper in _NOT_CALLS)
        )
    ):
        return tokens[i - 1].start
    return token.start


def _skip_introducer(tokens: list[_Token], j: int) -> str:
    """The word or operator before a literal, past a character set introducer (_utf8mb4)."""
    if j >= 0 and tokens[j].kind == "word" and tokens[j].upper.startswith("_"):
        j -= 1
    if j >= 1 and tokens[j].upper == "PASSWORD" and tokens[j - 1].upper == "BY":
        return "BY"  # IDENTIFIED BY PASSWORD 'hash'
    return tokens[j].upper if j >= 0 and tokens[j].kind in ("word", "op") else ""


def _follows_secret_name(tokens: list[_Token], i: int) -> bool:
    """Whether the literal is the value of a password-like option, variable or column."""
    j = i - 1
    if j >= 0 and tokens[j].kind == "word" and tokens[j].upper.startswith("_"):
        j -= 1
    if j >= 0 and tokens[j].kind == "op" and tokens[j].upper in ("=", ":="):
        j -= 1
    if j < 0 or tokens[j].kind not in ("word", "name") or not tokens[j].hit:
        return False
    return is_secret_name(tokens[j].upper)


def _after_connection_word(tokens: list[_Token], i: int) -> bool:
    j = i - 1
    if j >= 0 and tokens[j].upper == "=":
        j -= 1
    return j >= 0 and tokens[j].kind == "word" and tokens[j].upper in _CONNECTION_WORDS


def _string_secret(text: str, token: _Token, *, connection: bool) -> tuple[int, int, str] | None:
    """A string holding a URL with a password, or ``password=x``: that part replaced."""
    if not token.hit:
        return None  # no secret name and no URL in it (most strings)
    redacted = _URL_PASSWORD_RE.sub(rf"\g<1>{MARKER}\g<3>", text)
    redacted = _KEY_VALUE_RE.sub(_key_value_marker, redacted)
    if connection and _mentions_secret(_KEY_VALUE_RE.sub(_drop_secret_pair, redacted)):
        # A password in a quoting the patterns above do not follow: the whole spec goes.
        return (token.start, token.end, _marker(text))
    if redacted == text:
        return None
    return (token.start, token.end, redacted)


def _key_value_marker(match: re.Match[str]) -> str:
    if not is_secret_name(match.group(2)):
        return match.group()
    value = match.group(3)
    quote = value[0] if value[0] in "\"'" else ""
    return f"{match.group(1)}{quote}{MARKER}{quote}"


def _drop_secret_pair(match: re.Match[str]) -> str:
    return "" if is_secret_name(match.group(2)) else match.group()


def _mentions_secret(text: str) -> bool:
    return any(is_secret_name(word) for word in _WORD_RE.findall(text))


def _embedded_sql_secret(text: str) -> bool:
    """Whether the SQL in a PREPARE / EXECUTE IMMEDIATE string holds a secret."""
    body = text[1:] if text[:1] in ("n", "N") else text
    quote = body[0]
    closed = len(body) >= 2 and body.endswith(quote)
    inner = body[1:-1] if closed else body[1:]
    inner = inner.replace(quote * 2, quote).replace("\\" + quote, quote)
    return might_hold_secret(inner) and redact(inner) != inner


def _word_at(tokens: list[_Token], j: int) -> str:
    if not 0 <= j < len(tokens) or tokens[j].kind not in ("word", "name"):
        return ""
    return tokens[j].upper


def _op_at(tokens: list[_Token], j: int) -> bool:
    return j >= 0 and tokens[j].kind == "op" and tokens[j].upper == "."


# --------------------------------------------------------------------------- by meaning
# A literal is a secret by what it is given to: a secret-named column (or variable, or
# option) it is assigned to, compared with, or passed to a function with; the position of
# such a column in an INSERT's column list or a row constructor; a key/value row whose key
# string is a secret name. The scan below finds operands on the token list (no parse
# tree): a term is a literal, a name, a call, a parenthesised group or CASE ... END, with
# its prefix operators; an operand is terms joined by arithmetic, bit, concatenation or
# JSON operators. What it cannot place it leaves to the form rules above.

_COMPARISONS = frozenset(("=", ":=", "<=>", "<>", "!=", "<", ">", "<=", ">="))
_KEY_LOOKUPS = frozenset(("=", ":=", "<=>", "IN"))
_WORD_COMPARISONS = frozenset(("LIKE", "REGEXP", "RLIKE", "IN", "BETWEEN"))
_NEGATIONS = frozenset(("NOT", "SOUNDS"))  # a NOT LIKE b, a SOUNDS LIKE b
_SIGN_AFTER = _COMPARISONS | {"(", ","}
_JOINING = frozenset(("+", "-", "*", "/", "%", "||", "|", "&", "^", "<<", ">>", "->", "->>"))
_JOINING_WORDS = frozenset(("DIV", "MOD", "COLLATE"))
_PREFIXES = frozenset(("-", "+", "~", "!"))
_PREFIX_WORDS = frozenset(("NOT", "BINARY", "INTERVAL", "DISTINCT"))
_LITERAL_INTRODUCERS = frozenset(("DATE", "TIME", "TIMESTAMP"))
# Words a parenthesis follows without being a call's: keywords, and a table named before
# its column list (INSERT INTO t (a, b), CREATE TABLE t (...), KEY k (a), ... ON t (a)).
_NOT_CALLS = frozenset((
    "IN", "VALUES", "VALUE", "EXISTS", "ANY", "SOME", "ALL", "AND", "OR", "XOR", "NOT",
    "WHERE", "ON", "USING", "AS", "SELECT", "FROM", "JOIN", "INTO", "TABLE", "SET", "HAVING",
    "WHEN", "THEN", "ELSE", "BY", "LIKE", "BETWEEN", "IS", "RETURN", "UNION", "WITH", "OVER",
    "OPTIONS",
))  # fmt: skip
_BEFORE_TABLE = frozenset((
    "INTO", "TABLE", "REFERENCES", "INSERT", "REPLACE", "UPDATE", "FROM", "JOIN", "EXISTS",
    "KEY", "INDEX", "ON", "WITH", "STRAIGHT_JOIN", "VIEW",
))  # fmt: skip
_SELECT_LIST_ENDS = frozenset((
    "FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "UNION", "INTO", "FOR", "LOCK",
    "WINDOW", "ON",
))  # fmt: skip
_SUBQUERY_WORDS = frozenset(("SELECT", "WITH", "VALUES", "TABLE"))
# A string that is a name ('smtp_password', '$.auth.token', 'X-API-KEY'): a key, not a value.
_KEY_STRING_RE = re.compile(r"[$@a-z_][\w$.\-\[\]*]{0,127}", re.IGNORECASE)

_Range = tuple[int, int]  # token indices [start, end)


class _Meaning:
    """The literals of ``tokens`` that are secrets by meaning (see above)."""

    def __init__(self, sql: str, tokens: list[_Token]) -> None:
        self.sql = sql
        self.tokens = tokens
        self.partner = _partners(tokens)  # "(" <-> ")", CASE <-> END
        # Tokens a trigger word overlaps, counted before each index: every rule needs a
        # secret name or key, which only such a token can be, so a span without one is
        # skipped in one subtraction (most rows of a multi-row INSERT, most statements).
        self.hits_before = list(accumulate((token.hit for token in tokens), initial=0))
        self.found: set[int] = set()
        self._secret: dict[int, bool] = {}
        self.end = len(tokens)  # the current statement's end (statements are split at ;)

    def secret_literals(self) -> set[int]:
        """Indices of the literal tokens to redact whole."""
        for start, end in _statements(self.tokens):
            if self._any_hit(start, end):
                self.end = end
                self._statement(start, end)
        return self.found

    # ----------------------------------------------------------------- rules

    def _statement(self, start: int, end: int) -> None:
        pairs: list[tuple[_Range, _Range]] = []
        keyed = False  # a key string names a secret: name = 'smtp_password'
        self._insert_columns(start, end)
        for i in range(start, end):
            token = self.tokens[i]
            if token.kind == "op" and token.upper in _COMPARISONS:
                pair = self._comparison(i, i + 1, self._operand_end(i + 1))
            elif token.kind == "word" and token.upper in _WORD_COMPARISONS:
                pair = self._word_comparison(i)
            elif token.kind == "op" and token.upper == "(":
                keyed = self._group(i) or keyed
                continue
            elif token.kind == "word" and token.upper == "CASE":
                self._simple_case(i)
                continue
            else:
                continue
            if pair is not None:
                pairs.append(pair)
                # A key is looked up by equality: v <> 'secret' compares a value.
                keyed = keyed or (token.upper in _KEY_LOOKUPS and self._is_key_pair(pair))
        if keyed:
            # A key/value statement (WHERE name = 'smtp_password', VALUES ('api_token', ..)):
            # every value it assigns or compares is the secret's, its keys aside.
            for left, right in pairs:
                self._mark(left, keep=self._key_strings(left))
                self._mark(right, keep=self._key_strings(right))

    def _comparison(self, op: int, right: int, right_end: int) -> tuple[_Range, _Range] | None:
        """``left op right``: each side's literals are secret when the other side names one;
        row constructors (a, b) = (x, y) position by position."""
        left_last = op - 1
        while left_last >= 0 and self._is_word(left_last, _NEGATIONS):
            left_last -= 1
        left_start = self._operand_start(left_last)
        if left_start is None or right_end <= right:
            return None
        left, right_range = (left_start, left_last + 1), (right, right_end)
        if not self._rows_compared(left, right_range):
            if self._names_secret(left):
                self._mark(right_range)
            if self._names_secret(right_range):
                self._mark(left)
        return left, right_range

    def _word_comparison(self, i: int) -> tuple[_Range, _Range] | None:
        word = self.tokens[i].upper
        end = self._operand_end(i + 1)
        if word == "BETWEEN" and self._is_word(end, {"AND"}):
            end = self._operand_end(end + 1)
        return self._comparison(i, i + 1, end)

    def _rows_compared(self, left: _Range, right: _Range) -> bool:
        """(a, b) = (x, y), (a, b) IN ((x, y), ...): map positions; False if not rows."""
        names = self._row_items(left)
        if names is None:
            return False
        rows = self._row_items(right)
        if rows is None:
            return False
        if all(self._row_items(item) is not None for item in rows):
            lists = [self._row_items(item) or [] for item in rows]  # IN ((x, y), (z, w))
        else:
            lists = [rows]
        for values in lists:
            for name, value in zip(names, values, strict=False):
                if self._names_secret(name):
                    self._mark(value)
                if self._names_secret(value):
                    self._mark(name)
        return True

    def _group(self, i: int) -> bool:
        """A parenthesised group: a call's arguments are secret with a secret-named
        argument or function; a row holding a key string is a key/value row (True)."""
        close = min(self.partner.get(i, self.end), self.end)
        if not self._any_hit(i - 1, close):
            return False  # no secret name or key in it, nor in its function's name
        items = _split_items(self.tokens, self.partner, i + 1, close)
        keys = {key for item in items if (key := self._key_string(item)) is not None}
        if keys and len(items) > 1:
            self._mark((i + 1, close), keep=keys)
        name = self._call_name(i)
        if name is not None and (
            is_secret_name(self.tokens[name].upper) or self._names_secret((i + 1, close))
        ):
            self._mark((i + 1, close), keep=self._key_strings((i + 1, close)))
        return bool(keys) and len(items) > 1

    def _simple_case(self, i: int) -> None:
        """CASE password WHEN 'x' THEN ...: the WHENs compare with the CASE operand."""
        end = self._operand_end(i + 1)
        if end > i + 1 and self._names_secret((i + 1, end)):
            self._mark((end, self.partner.get(i, self.end)))

    def _insert_columns(self, start: int, end: int) -> None:
        """INSERT/REPLACE (a, b) VALUES (x, y), ... or SELECT x, y: each value is its
        column's."""
        if not self._is_word(start, {"INSERT", "REPLACE"}):
            return
        group = next(
            (i for i in range(start, end) if self.tokens[i].upper == "(" and self._is_op(i)),
            None,
        )
        if (
            group is None
            or group not in self.partner
            or self.tokens[group - 1].kind not in ("word", "name")
            or self._is_word(group - 1, _NOT_CALLS)  # INSERT INTO t VALUES (...)
            or self._call_name(group) is not None
        ):
            return
        close = self.partner[group]
        if not self._any_hit(group, close):
            return  # no secret-named column
        columns = _split_items(self.tokens, self.partner, group + 1, close)
        if any(self._subquery(item[0]) for item in columns):
            return  # INSERT INTO t (SELECT ...)
        secret = [self._names_secret(column) for column in columns]
        for row in self._value_rows(close + 1, end):
            for is_secret, value in zip(secret, row, strict=False):
                if is_secret:
                    self._mark(value)

    def _value_rows(self, i: int, end: int) -> list[list[_Range]]:
        """The rows after an INSERT's column list: VALUES [ROW](..), ... or a SELECT list."""
        if self._is_word(i, {"SELECT"}):
            stop = i + 1
            while stop < end and not (
                self._is_word(stop, _SELECT_LIST_ENDS) or self.tokens[stop].upper == ";"
            ):
                stop = self.partner.get(stop, stop) + 1 if self._is_op(stop) else stop + 1
            return [_split_items(self.tokens, self.partner, i + 1, min(stop, end))]
        if not self._is_word(i, {"VALUES", "VALUE"}):
            return []
        rows = []
        i += 1
        while i < end:
            if self._is_word(i, {"ROW"}):
                i += 1
            if i >= end or not (self._is_op(i) and self.tokens[i].upper == "("):
                break
            close = self.partner.get(i, end)
            rows.append(_split_items(self.tokens, self.partner, i + 1, min(close, end)))
            i = close + 1
            if i >= end or self.tokens[i].upper != ",":
                break
            i += 1
        return rows

    # ----------------------------------------------------------------- operands

    def _operand_end(self, i: int) -> int:
        """Past the operand that starts at ``i`` (``i`` itself when none does)."""
        end = self._term_end(i)
        while end > i and end < self.end and self._joins(end):
            after = self._term_end(end + 1)
            if after == end + 1:
                break
            end = after
        return end

    def _term_end(self, i: int) -> int:
        tokens, start = self.tokens, i
        while i < self.end and (
            (self._is_op(i) and tokens[i].upper in _PREFIXES) or self._is_word(i, _PREFIX_WORDS)
        ):
            i += 1
        if i >= self.end:
            return start
        token = tokens[i]
        if token.kind in _LITERAL_KINDS:
            i += 1
            while i < self.end and tokens[i].kind in _STRINGISH_KINDS:
                i += 1  # 'a' 'b'
            return i
        if token.kind == "op":
            if token.upper == "(":
                return min(self.partner.get(i, self.end), self.end - 1) + 1
            if token.upper == "?":
                return i + 1
            if token.upper == "@":
                return self._name_end(i + 2 if self._is_op(i + 1) else i + 1)
            return start
        if token.upper == "CASE" and token.kind == "word":
            return min(self.partner.get(i, self.end), self.end - 1) + 1
        if self._introduces_literal(i):
            return self._term_end(i + 1)
        end = self._name_end(i)
        if end < self.end and self._is_op(end) and tokens[end].upper == "(":
            return min(self.partner.get(end, self.end), self.end - 1) + 1  # a call
        return end

    def _name_end(self, i: int) -> int:
        """Past a possibly qualified name (db.t.col, @@session.x) starting at ``i``."""
        if i >= self.end or self.tokens[i].kind not in ("word", "name", "str"):
            return i
        i += 1
        while i + 1 < self.end and self.tokens[i].upper == "." and self._is_op(i):
            i += 2
        return i

    def _operand_start(self, last: int) -> int | None:
        """The first token of the operand that ends with ``tokens[last]``, None if none."""
        start = self._term_start(last)
        while start is not None and start >= 2 and self._joins(start - 1):
            before = self._term_start(start - 2)
            if before is None:
                break
            start = before
        return start

    def _term_start(self, last: int) -> int | None:
        if last < 0:
            return None
        tokens = self.tokens
        token = tokens[last]
        if self._is_op(last) and token.upper == ")":
            first = self.partner.get(last, 0)
            name = self._call_name(first)
            first = name if name is not None else first
        elif token.kind in _LITERAL_KINDS:
            first = last
            while first > 0 and tokens[first - 1].kind in _STRINGISH_KINDS:
                first -= 1
            if first > 0 and self._introduces_literal(first - 1):
                first -= 1
        elif token.kind == "word" and token.upper == "END" and last in self.partner:
            first = self.partner[last]
        elif token.kind in ("word", "name") or (self._is_op(last) and token.upper == "?"):
            first = self._name_start(last)
        else:
            return None
        while first > 0 and self._is_prefix_at(first - 1):
            first -= 1
        return first

    def _name_start(self, last: int) -> int:
        first = last
        while first >= 2 and self._is_op(first - 1) and self.tokens[first - 1].upper == ".":
            first -= 2
        while first > 0 and self._is_op(first - 1) and self.tokens[first - 1].upper == "@":
            first -= 1
        return first

    def _is_prefix_at(self, i: int) -> bool:
        """A sign or ! at ``i`` that is unary: nothing that ends an operand before it."""
        if not (self._is_op(i) and self.tokens[i].upper in _PREFIXES):
            return False
        if i == 0:
            return True
        before = self.tokens[i - 1]
        ends_operand = (
            before.kind in ("str", "hex", "num", "name")
            or (before.kind == "word" and before.upper not in _NOT_CALLS)
            or before.upper in (")", "?")
        )
        return not ends_operand

    def _call_name(self, paren: int) -> int | None:
        """The index of the function name before ``(``, None when it is not a call."""
        name = paren - 1
        if name < 0 or self.tokens[name].kind not in ("word", "name"):
            return None
        if self.tokens[name].kind == "word" and self.tokens[name].upper in _NOT_CALLS:
            return None
        before = self._name_start(name) - 1
        if before >= 0 and self._is_word(before, _BEFORE_TABLE):
            return None
        return name

    def _joins(self, i: int) -> bool:
        token = self.tokens[i]
        return (token.kind == "op" and token.upper in _JOINING) or (
            token.kind == "word" and token.upper in _JOINING_WORDS
        )

    def _introduces_literal(self, i: int) -> bool:
        """_utf8mb4'x', DATE '2024-01-01': a word that belongs to the literal after it."""
        token = self.tokens[i]
        if token.kind != "word" or i + 1 >= len(self.tokens):
            return False
        after = self.tokens[i + 1].kind
        if token.upper.startswith("_"):
            return after in _LITERAL_KINDS
        return token.upper in _LITERAL_INTRODUCERS and after == "str"

    # ----------------------------------------------------------------- what is secret

    def _names_secret(self, span: _Range) -> bool:
        """Whether the tokens name a secret: a secret-named column or variable (not a table,
        not a function), or a key string ('$.password')."""
        return self._any_hit(*span) and any(self._is_secret(i) for i in range(*span))

    def _any_hit(self, start: int, end: int) -> bool:
        """Whether a token of ``tokens[start:end]`` is overlapped by a trigger word."""
        start = max(start, 0)
        end = max(min(end, len(self.tokens)), start)
        return self.hits_before[end] > self.hits_before[start]

    def _is_secret(self, i: int) -> bool:
        """A secret-named column or variable, or a key string (cached per token)."""
        known = self._secret.get(i)
        if known is None:
            token = self.tokens[i]
            if not token.hit:
                known = False  # no trigger word in it: not a secret name (most tokens)
            elif token.kind in ("word", "name"):
                # Not a table, not a function (a call's own rule covers its arguments).
                known = (
                    is_secret_name(token.upper)
                    and not self._is_table(i)
                    and not (self._is_op(i + 1) and self.tokens[i + 1].upper == "(")
                )
            elif token.kind == "str":
                content = _string_content(self.sql, token)
                known = bool(_KEY_STRING_RE.fullmatch(content)) and is_secret_name(content)
            else:
                known = False
            self._secret[i] = known
        return known

    def _is_table(self, i: int) -> bool:
        before = self._name_start(i) - 1
        return before >= 0 and self._is_word(before, _BEFORE_TABLE)

    def _key_string(self, span: _Range) -> int | None:
        """The index of the string when ``span`` is just a secret-named key string."""
        start, end = span
        if end - start == 2 and self._introduces_literal(start):
            start += 1
        if end - start != 1 or self.tokens[start].kind != "str" or not self._is_secret(start):
            return None
        return start

    def _is_key_pair(self, pair: tuple[_Range, _Range]) -> bool:
        """``name = 'smtp_password'`` (either way round): a column keyed by a secret name."""
        return any(
            self._key_string(this) is not None and not self._holds_literal(other)
            for this, other in (pair, pair[::-1])
        )

    def _key_strings(self, span: _Range) -> set[int]:
        """The key strings in ``span`` ('$.password' in JSON_SET, 'smtp_password'): they
        name a secret, they are not one."""
        return {i for i in range(*span) if self.tokens[i].kind == "str" and self._is_secret(i)}

    def _holds_literal(self, span: _Range) -> bool:
        return any(self.tokens[i].kind in _LITERAL_KINDS for i in range(*span))

    def _mark(self, span: _Range, keep: set[int] | frozenset[int] = frozenset()) -> None:
        for i in range(*span):
            if self.tokens[i].kind in _LITERAL_KINDS and i not in keep:
                self.found.add(i)

    def _row_items(self, span: _Range) -> list[_Range] | None:
        """The items of ``(a, b)`` or ``ROW(a, b)`` when ``span`` is exactly that."""
        start, end = span
        if self._is_word(start, {"ROW"}):
            start += 1
        if not (start < end and self._is_op(start) and self.tokens[start].upper == "("):
            return None
        if self.partner.get(start) != end - 1 or self._subquery(start + 1):
            return None
        if start == span[0] and self._call_name(start) is not None:
            return None
        return _split_items(self.tokens, self.partner, start + 1, end - 1)

    def _subquery(self, i: int) -> bool:
        return self._is_word(i, _SUBQUERY_WORDS)

    def _is_word(self, i: int, words: frozenset[str] | set[str]) -> bool:
        return (
            0 <= i < len(self.tokens)
            and self.tokens[i].kind == "word"
            and (self.tokens[i].upper in words)
        )

    def _is_op(self, i: int) -> bool:
        return 0 <= i < len(self.tokens) and self.tokens[i].kind == "op"


def _statements(tokens: list[_Token]) -> list[_Range]:
    """The statements of the text, split at every ``;`` (routine bodies too)."""
    ranges, start = [], 0
    for i, token in enumerate(tokens):
        if token.kind == "op" and token.upper == ";":
            ranges.append((start, i))
            start = i + 1
    ranges.append((start, len(tokens)))
    return ranges


def _partners(tokens: list[_Token]) -> dict[int, int]:
    """Each ``(`` with its ``)`` and each CASE with its END, both ways (unclosed: absent)."""
    partner: dict[int, int] = {}
    parens: list[int] = []
    cases: list[int] = []
    for i, token in enumerate(tokens):
        if token.kind == "op" and token.upper == "(":
            parens.append(i)
        elif token.kind == "op" and token.upper == ")" and parens:
            opened = parens.pop()
            partner[opened], partner[i] = i, opened
        elif token.kind == "op" and token.upper == ";":
            parens.clear()
            cases.clear()
        elif token.kind == "word" and token.upper == "CASE":
            if i and tokens[i - 1].kind == "word" and tokens[i - 1].upper == "END":
                continue  # END CASE closes a CASE statement
            cases.append(i)
        elif token.kind == "word" and token.upper == "END" and cases:
            opened = cases.pop()
            partner[opened], partner[i] = i, opened
    return partner


def _split_items(
    tokens: list[_Token], partner: dict[int, int], start: int, end: int
) -> list[_Range]:
    """The comma-separated items of tokens[start:end], commas in nested groups aside."""
    items, first, i = [], start, start
    while i < end:
        token = tokens[i]
        if token.kind == "op" and token.upper == ",":
            items.append((first, i))
            first = i + 1
        elif token.kind == "op" and token.upper == "(" and i in partner:
            i = partner[i]
        i += 1
    if first < end:
        items.append((first, end))
    return items


def _string_content(sql: str, token: _Token) -> str:
    """A string literal's text without its quotes (escapes as written)."""
    text = sql[token.start : token.end]
    if text[:1] in ("n", "N"):
        text = text[1:]
    quote = text[:1]
    return text[1:-1] if len(text) >= 2 and text.endswith(quote) else text[1:]
