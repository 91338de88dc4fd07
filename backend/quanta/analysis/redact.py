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

__all__ = ["MARKER", "REDACTED_LITERAL", "TRIGGER_WORDS", "might_hold_secret", "redact"]

MARKER = "<redacted>"
REDACTED_LITERAL = f"'{MARKER}'"
# N'..' keeps its N: the fingerprint reads "_utf8mb4 N'x'" as two tokens, "_utf8mb4 'x'" as one.
_NATIONAL_LITERAL = f"N{REDACTED_LITERAL}"
_MARKERS = (REDACTED_LITERAL, _NATIONAL_LITERAL)

# Any credential form holds one of these (lower case); a statement without any is returned
# as it is. Substring tests of the lower-cased text: several times faster than one
# case-insensitive regular expression, which matters on the agent's per-event path.
TRIGGER_WORDS = (
    "identified", "pass", "pwd", "secret", "crypt", "encode", "decode", "kdf", "keyring",
    "asymmetric", "challenge_response", "mysql", "prepare", "immediate", "://",
)  # fmt: skip

_TOKEN_RE = re.compile(
    r"""
      (?P<ws>\s+)
    | (?P<exec>/\*(?:m?!\d*))                                   # executable comment: read on
    | (?P<comment>/\*.*?(?:\*/|\Z) | \#[^\n]* | --(?=\s|\Z)[^\n]*)
    | (?P<close>\*/)                                            # an executable comment's end
    | (?P<str>n?(?:'[^'\\]*(?:(?:\\.|'')[^'\\]*)*'? | "[^"\\]*(?:(?:\\.|"")[^"\\]*)*"?))
    | (?P<hex>[xb]'[^']*'? | 0x[0-9a-f]+(?![\w$]) | 0b[01]+(?![\w$]))
    | (?P<num>(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?(?![\w$]))
    | (?P<name>`[^`]*(?:``[^`]*)*`?)
    | (?P<word>[^\W\d][\w$]* | \d[\w$]*)
    | (?P<op>:= | [=(),;.@+-] | \S)
    """,
    re.VERBOSE | re.IGNORECASE | re.DOTALL,
)
_LITERAL_KINDS = frozenset(("str", "hex", "num"))
_STRINGISH_KINDS = frozenset(("str", "hex"))

# Name of an option, variable or column that holds a secret.
_SECRET_NAME_RE = re.compile(r"passw|pwd|secret|passphrase", re.IGNORECASE)
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
# Inside a string: the password of a URL, and password=x / password "x" / "password": "x".
_URL_PASSWORD_RE = re.compile(r"([a-z][\w+.-]*://[^:/@\s'\"]*:)([^@\s'\"/]+)(@)", re.IGNORECASE)
_KEY_VALUE_PASSWORD_RE = re.compile(
    r"""((?<![a-z0-9])(?:pass(?:word|wd)?|pwd)(?![a-z0-9])["']?(?:\s*[=:]\s*|\s+(?=["'])))"""
    r"""("[^"]*"|'[^']*'|[^\s,;&'"]+)""",
    re.IGNORECASE,
)


@dataclass(slots=True)
class _Token:
    kind: str
    start: int
    end: int
    upper: str  # the word, upper case ("" for other kinds but operators, which keep theirs)


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
    lowered = sql.lower()
    for word in TRIGGER_WORDS:  # noqa: SIM110 (a loop: a third faster than any() here)
        if word in lowered:
            return True
    return False


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
    if not might_hold_secret(sql):
        return sql
    tokens = _tokenize(sql)
    spans = _secret_spans(sql, tokens)
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


def _tokenize(sql: str) -> list[_Token]:
    """The tokens that matter: no blanks, no comments, executable comment marks dropped."""
    tokens = []
    for match in _TOKEN_RE.finditer(sql):
        kind = match.lastgroup or "op"
        if kind in ("ws", "comment", "exec", "close"):
            continue
        text = match.group()
        upper = text.upper() if kind in ("word", "op") else ""
        if kind == "name":
            upper = text.strip("`").replace("``", "`").upper()
        tokens.append(_Token(kind, match.start(), match.end(), upper))
    return tokens


def _secret_spans(sql: str, tokens: list[_Token]) -> list[tuple[int, int, str]]:
    spans: list[tuple[int, int, str]] = []
    state = _Statement()
    redacted_before = False  # the previous token was a literal replaced whole
    for i, token in enumerate(tokens):
        previous = tokens[i - 1] if i else None
        if token.kind in ("word", "name", "op"):
            state = _follow_word(state, tokens, i)
            redacted_before = False
            continue
        if redacted_before and token.kind in _STRINGISH_KINDS:
            # 'a' 'b' is one literal: the whole of it is the secret, one marker.
            start, _, marker = spans[-1]
            spans[-1] = (start, token.end, marker)
            continue
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
        and tokens[i - 2].kind == "op"
        and tokens[i - 2].upper in ("(", ",", "=", ":=")
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
    if j < 0 or tokens[j].kind not in ("word", "name"):
        return False
    return _SECRET_NAME_RE.search(tokens[j].upper) is not None


def _after_connection_word(tokens: list[_Token], i: int) -> bool:
    j = i - 1
    if j >= 0 and tokens[j].upper == "=":
        j -= 1
    return j >= 0 and tokens[j].kind == "word" and tokens[j].upper in _CONNECTION_WORDS


def _string_secret(text: str, token: _Token, *, connection: bool) -> tuple[int, int, str] | None:
    """A string holding a URL with a password, or ``password=x``: that part replaced."""
    redacted = _URL_PASSWORD_RE.sub(rf"\g<1>{MARKER}\g<3>", text)
    redacted = _KEY_VALUE_PASSWORD_RE.sub(_key_value_marker, redacted)
    if connection and _SECRET_NAME_RE.search(_KEY_VALUE_PASSWORD_RE.sub("", redacted)):
        # A password in a quoting the patterns above do not follow: the whole spec goes.
        return (token.start, token.end, _marker(text))
    if redacted == text:
        return None
    return (token.start, token.end, redacted)


def _key_value_marker(match: re.Match[str]) -> str:
    value = match.group(2)
    quote = value[0] if value[0] in "\"'" else ""
    return f"{match.group(1)}{quote}{MARKER}{quote}"


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
