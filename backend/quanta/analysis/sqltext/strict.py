"""The strict lexer: MySQL/MariaDB statements read the way the server does, or refused.

Quanta sends statements from slow logs to monitored servers, so what it checks must be
exactly what the server will run. This lexer follows the server's own rules
(:mod:`quanta.analysis.sqltext.spec`, where every reader of SQL text takes them), under the
session ``sql_mode`` Quanta sets itself (:data:`SESSION_SQL_MODE`: no ANSI_QUOTES, no
NO_BACKSLASH_ESCAPES), and refuses whatever it cannot read the same way:

* whitespace is ASCII only: space, tab, newline, carriage return, vertical tab, form feed
  (not U+00A0, U+0085, U+2028, U+3000 or U+FEFF, which Python's ``isspace`` accepts);
* ``#`` and ``-- `` comments run to the next newline; ``--`` starts a comment only when
  followed by whitespace or a control character (else it is two minus signs);
* ``/* ... */`` comments do not nest; ``/*!``, ``/*M!`` (the server runs their text) and
  ``/*+`` (optimizer hints, which can SET_VAR) are refused;
* ``'...'`` and ``"..."`` are strings with doubled quotes and backslash escapes;
  ```...``` names with doubled backticks;
* outside quoted strings and names only printable ASCII is accepted; a NUL byte (which
  ends a line comment early on the server) is refused anywhere;
* an unterminated string, name or comment is refused (the example was truncated).

Example:
    >>> [t.text for t in lex("SELECT a -- note\\nFROM `t``1` WHERE b = 'x\\\\'y'")]
    ['SELECT', 'a', 'FROM', '`t``1`', 'WHERE', 'b', '=', "'x\\\\'y'"]
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from quanta.analysis.sqltext.spec import (
    WHITESPACE,
    WORD_CHARS,
    CommentKind,
    block_comment_end,
    block_comment_kind,
    dash_starts_comment,
    line_comment_end,
    quoted_end,
)

__all__ = [
    "SESSION_SQL_MODE",
    "LexRefusal",
    "Token",
    "TokenKind",
    "lex",
]

# The sql_mode of every guarded session: the lexing rules above hold under it. No
# ANSI_QUOTES ("..." is a string), no NO_BACKSLASH_ESCAPES (\' escapes a quote), no
# ONLY_FULL_GROUP_BY (examples written for laxer servers still explain); valid on MySQL
# 5.7+ and MariaDB 10+.
SESSION_SQL_MODE = "NO_ENGINE_SUBSTITUTION"

UNCLOSED = "the example is truncated: a string, name or comment is not closed"
_OPERATORS = ("<=>", ":=", "->>", "<=", ">=", "<>", "!=", "<<", ">>", "&&", "||", "->")
_PUNCTUATION = frozenset("(),.;+-*/%=<>!~^&|?@:")
_LAST_CONTROL = 0x1F
_DELETE = 0x7F


class TokenKind(enum.Enum):
    """What a token is; keywords and names are both WORD (the server decides later)."""

    WORD = "word"
    QUOTED_NAME = "quoted name"
    STRING = "string"
    PUNCT = "punctuation"


@dataclass(frozen=True, slots=True)
class Token:
    """One token of a statement.

    Attributes:
        kind: Word, quoted name, string or punctuation.
        text: The token as written (quotes included).
        start: Offset of its first character in the statement.
        end: Offset just after its last character.
        spaced: Whitespace or a comment separates it from the previous token.
    """

    kind: TokenKind
    text: str
    start: int
    end: int
    spaced: bool

    @property
    def upper(self) -> str:
        """The text in upper case (keywords are compared this way)."""
        return self.text.upper()

    def is_word(self, *words: str) -> bool:
        """Whether it is an unquoted word among ``words`` (upper case)."""
        return self.kind is TokenKind.WORD and self.text.upper() in words

    def is_punct(self, text: str) -> bool:
        """Whether it is the punctuation ``text``."""
        return self.kind is TokenKind.PUNCT and self.text == text


class LexRefusal(ValueError):
    """The text cannot be read the same way as the server reads it; ``str()`` says why."""


def lex(sql: str) -> list[Token]:
    """Split ``sql`` into tokens as the server would, comments and whitespace dropped.

    Raises:
        LexRefusal: a character, comment or quote the server could read differently, or
            a string, name or comment that is not closed.

    Example:
        >>> lex("SELECT 1 /*!50000 , SLEEP(1) */")
        Traceback (most recent call last):
        ...
        quanta.analysis.sqltext.strict.LexRefusal: the example has a /*! ... */ comment, ...
    """
    return _Lexer(sql).run()


class _Lexer:
    def __init__(self, sql: str) -> None:
        self.sql = sql
        self.pos = 0
        self.spaced = False
        self.tokens: list[Token] = []

    def run(self) -> list[Token]:
        if "\x00" in self.sql:
            raise LexRefusal(
                "the example has a NUL character: the server ends a comment there, so it "
                "is not sent"
            )
        sql = self.sql
        while self.pos < len(sql):
            char = sql[self.pos]
            if char in WHITESPACE:
                self.pos += 1
                self.spaced = True
            elif char == "#" or dash_starts_comment(sql, self.pos):
                self.pos = line_comment_end(sql, self.pos)
                self.spaced = True
            elif sql.startswith("/*", self.pos):
                self._block_comment()
            elif char in "'\"":
                self._quoted(TokenKind.STRING, escapes=True)
            elif char == "`":
                self._quoted(TokenKind.QUOTED_NAME, escapes=False)
            elif char in WORD_CHARS:
                self._word()
            else:
                self._punctuation(char)
        return self.tokens

    def _emit(self, kind: TokenKind, start: int, end: int) -> None:
        self.tokens.append(Token(kind, self.sql[start:end], start, end, self.spaced))
        self.spaced = False
        self.pos = end

    def _block_comment(self) -> None:
        kind = block_comment_kind(self.sql, self.pos)
        if kind is CommentKind.EXECUTABLE:
            raise LexRefusal(
                "the example has a /*! ... */ or /*M! ... */ comment, whose text the server "
                "runs as part of the statement: it is not sent"
            )
        if kind is CommentKind.HINT:
            raise LexRefusal(
                "the example has a /*+ ... */ optimizer hint, which can change server "
                "settings (SET_VAR): it is not sent"
            )
        end = block_comment_end(self.sql, self.pos)
        if end is None:
            raise LexRefusal(UNCLOSED)
        self.pos = end
        self.spaced = True

    def _quoted(self, kind: TokenKind, *, escapes: bool) -> None:
        start = self.pos
        end = quoted_end(self.sql, start, escapes=escapes)
        if end is None:
            raise LexRefusal(UNCLOSED)
        self._check_code_points(start, end - 1)
        self._emit(kind, start, end)

    def _check_code_points(self, start: int, end: int) -> None:
        # Lone surrogates cannot be sent as UTF-8: refuse rather than let the driver mangle.
        if any(0xD800 <= ord(c) <= 0xDFFF for c in self.sql[start:end]):
            raise LexRefusal("the example has an invalid character (a lone surrogate)")

    def _word(self) -> None:
        end = self.pos
        while end < len(self.sql) and self.sql[end] in WORD_CHARS:
            end += 1
        self._emit(TokenKind.WORD, self.pos, end)

    def _punctuation(self, char: str) -> None:
        for operator in _OPERATORS:
            if self.sql.startswith(operator, self.pos):
                self._emit(TokenKind.PUNCT, self.pos, self.pos + len(operator))
                return
        if char in _PUNCTUATION:
            self._emit(TokenKind.PUNCT, self.pos, self.pos + 1)
            return
        raise LexRefusal(_unexpected(char))


def _unexpected(char: str) -> str:
    code = ord(char)
    name = f"U+{code:04X}"
    if code > _DELETE:
        return (
            f"the example has a non-ASCII character ({name}) outside quoted strings and "
            "names: the server may read it differently, so it is not sent"
        )
    if code <= _LAST_CONTROL or code == _DELETE:
        return (
            f"the example has a control character ({name}) outside quoted strings and "
            "names: it is not sent"
        )
    if char == "\\":
        return "the example has a backslash outside a quoted string: it is not sent"
    return f"the example has the character {char!r} ({name}), which Quanta does not accept"
