"""The lexical rules of MySQL/MariaDB statement text, stated once.

Every reader of SQL text in Quanta takes its rules from here: the guard's strict lexer
(:mod:`quanta.analysis.sqltext.strict`), credential redaction, the fingerprint, its cache
key and the tags reader. Redaction and the guard are safe only while all of them agree on
where a string, a name or a comment starts and ends, so each rule is one function (and,
for the regular-expression fast paths, one pattern built from the same rule; tests check
that the two agree on the corpora).

The rules, as the server's lexer (``sql/sql_lex.cc``) applies them:

* whitespace is ASCII only: space, tab, newline, carriage return, vertical tab, form feed;
* ``'...'`` and ``"..."`` are strings: a doubled quote stands for one, a backslash escapes
  the next character; ```...``` is a name: a doubled backtick stands for one, no escapes;
* ``sql_mode`` changes two of them: ANSI_QUOTES makes ``"..."`` a name (doubled quotes,
  no escapes), NO_BACKSLASH_ESCAPES makes ``\\`` an ordinary character in strings;
* ``#`` starts a comment to the next newline (``\\r`` does not end it); so does ``--``,
  but only before whitespace or a control character, or at the end of the text (else it
  is two minus signs);
* ``/* ... */`` comments do not nest; ``/*!``, ``/*!NNNNN`` (MySQL) and ``/*M!``,
  ``/*M!NNNNNN`` (MariaDB) are executable: the server runs their text; ``/*+`` is an
  optimizer hint (which can SET_VAR);
* unquoted names are letters, digits, ``_`` and ``$`` (the readers here take ASCII ones).

Two modes use them: *strict* (the guard) refuses whatever it cannot read exactly as the
server does (an unclosed string, name or comment, an executable comment, a hint, a NUL);
*lenient* (fingerprint, redaction, tags) never refuses: an unclosed string, name or comment
runs to the end of the text, as in a truncated example.

Example:
    >>> quoted_end("'it''s' AND b", 0, escapes=True)
    7
    >>> dash_starts_comment("a -- b", 2), dash_starts_comment("a --b", 2)
    (True, False)
    >>> block_comment_kind("/*!50100 PARTITION */", 0)
    <CommentKind.EXECUTABLE: 'executable'>
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = [
    "BLOCK_COMMENT_PATTERN",
    "DASH_COMMENT_PATTERN",
    "DEFAULT_MODE",
    "EXECUTABLE_OPENER_PATTERN",
    "HASH_COMMENT_PATTERN",
    "NAME_QUOTE",
    "STRING_QUOTES",
    "WHITESPACE",
    "WORD_CHARS",
    "CommentKind",
    "SqlMode",
    "block_comment_end",
    "block_comment_kind",
    "dash_starts_comment",
    "line_comment_end",
    "quoted_end",
    "quoted_pattern",
]

# The server's whitespace (my_isspace in its character tables): ASCII only, unlike
# Python's str.isspace (U+00A0, U+0085, U+2028, U+3000, U+FEFF ...).
WHITESPACE = frozenset(" \t\n\r\x0b\x0c")
WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")
# Under the default sql_mode (no ANSI_QUOTES): both quote a string, the backtick a name.
STRING_QUOTES = "'\""
NAME_QUOTE = "`"

_LAST_CONTROL = 0x20  # "--" needs a character up to here (space and controls) after it
_DELETE = 0x7F


@dataclass(frozen=True, slots=True)
class SqlMode:
    """The two ``sql_mode`` flags that change how text is split into tokens.

    Attributes:
        ansi_quotes: ``"..."`` is a name, not a string.
        no_backslash_escapes: a backslash in a string is an ordinary character.
    """

    ansi_quotes: bool = False
    no_backslash_escapes: bool = False

    @classmethod
    def parse(cls, sql_mode: str) -> SqlMode:
        """The flags of a ``sql_mode`` value (the combination mode ANSI includes ANSI_QUOTES).

        Example:
            >>> SqlMode.parse("ANSI,NO_BACKSLASH_ESCAPES")
            SqlMode(ansi_quotes=True, no_backslash_escapes=True)
        """
        modes = {part.strip().upper() for part in sql_mode.split(",")}
        return cls(
            ansi_quotes=bool(modes & {"ANSI_QUOTES", "ANSI"}),
            no_backslash_escapes="NO_BACKSLASH_ESCAPES" in modes,
        )

    @property
    def string_quotes(self) -> str:
        """The characters that open a string."""
        return "'" if self.ansi_quotes else STRING_QUOTES

    @property
    def name_quotes(self) -> str:
        """The characters that open a quoted name."""
        return '`"' if self.ansi_quotes else NAME_QUOTE

    def escapes(self, quote: str) -> bool:
        """Whether a backslash escapes the next character inside this quote."""
        return quote in self.string_quotes and not self.no_backslash_escapes


DEFAULT_MODE = SqlMode()
"""The session sql_mode Quanta sets on monitored servers reads text this way."""


def quoted_end(sql: str, start: int, *, escapes: bool) -> int | None:
    """Offset just after the quote that closes the one at ``sql[start]``; None if unclosed.

    A doubled quote stands for one; with ``escapes`` a backslash hides the next character.

    Example:
        >>> quoted_end("`a``b` c", 0, escapes=False), quoted_end("'a\\\\'", 0, escapes=True)
        (6, None)
    """
    quote = sql[start]
    length = len(sql)
    index = start + 1
    while index < length:
        char = sql[index]
        if escapes and char == "\\":
            index += 2
        elif char == quote:
            if index + 1 < length and sql[index + 1] == quote:
                index += 2  # a doubled quote stands for one
            else:
                return index + 1
        else:
            index += 1
    return None


def dash_starts_comment(sql: str, position: int) -> bool:
    """Whether ``--`` at ``position`` starts a comment: before whitespace or a control
    character, or at the end of the text (the server reads past the end as NUL)."""
    if not sql.startswith("--", position):
        return False
    after = position + 2
    if after >= len(sql):
        return True
    code = ord(sql[after])
    return code <= _LAST_CONTROL or code == _DELETE


def line_comment_end(sql: str, position: int) -> int:
    """Offset just after the ``#`` or ``--`` comment at ``position``: after its newline
    (``\\r`` does not end it), or the end of the text."""
    newline = sql.find("\n", position)
    return len(sql) if newline < 0 else newline + 1


def block_comment_end(sql: str, position: int) -> int | None:
    """Offset just after the ``*/`` closing the ``/*`` at ``position`` (they do not nest);
    None if unclosed."""
    close = sql.find("*/", position + 2)
    return None if close < 0 else close + 2


class CommentKind(enum.Enum):
    """What a ``/*`` opens."""

    PLAIN = "plain"  # leaves no trace
    EXECUTABLE = "executable"  # /*! /*!NNNNN /*M! /*M!NNNNNN: the server runs the text
    HINT = "hint"  # /*+ an optimizer hint


def block_comment_kind(sql: str, position: int) -> CommentKind:
    """The kind of the ``/*`` comment at ``position``.

    ``/*m!`` counts as executable too: MariaDB reads only ``M``, but a reader that
    lower-cases text first cannot tell, and reading on is the careful side.
    """
    third = sql[position + 2 : position + 4]
    if third.startswith("!") or third.upper() == "M!":
        return CommentKind.EXECUTABLE
    if third.startswith("+"):
        return CommentKind.HINT
    return CommentKind.PLAIN


# The same rules as regular-expression fragments, for the fast paths (fingerprint, cache
# key, redaction) that scan a whole statement with one expression. Compile with
# re.DOTALL; possessive where a token never gives characters back.
BLOCK_COMMENT_PATTERN = r"/\*.*?(?:\*/|\Z)"
"""A ``/* */`` comment; unclosed, it runs to the end (lenient)."""
EXECUTABLE_OPENER_PATTERN = r"/\*[mM]?![0-9]*+"
"""The opener of an executable comment, with its version: the text after it is read on."""
HASH_COMMENT_PATTERN = r"\#[^\n]*+"
"""A ``#`` comment, its newline not included."""
DASH_COMMENT_PATTERN = r"--(?=[\x00-\x20\x7f]|\Z)[^\n]*+"
"""A ``--`` comment (see :func:`dash_starts_comment`), its newline not included."""


def quoted_pattern(quote: str, *, escapes: bool, closed: bool = True) -> str:
    """The regular expression of a quoted string or name (see :func:`quoted_end`).

    Args:
        quote: The quote character: ``'``, ``"`` or a backtick.
        escapes: A backslash escapes the next character (strings, without
            NO_BACKSLASH_ESCAPES).
        closed: The closing quote is required; else an unclosed one runs to the end.

    Example:
        >>> quoted_pattern("`", escapes=False, closed=False)
        '`[^`]*+(?:``[^`]*+)*+`?'
    """
    if escapes:
        # Unclosed, a backslash ending the text is the string's too (quoted_end reads it so).
        escape = r"\\." if closed else r"\\.?"
        body = rf"{quote}[^{quote}\\]*+(?:(?:{escape}|{quote}{quote})[^{quote}\\]*+)*+"
    else:
        body = rf"{quote}[^{quote}]*+(?:{quote}{quote}[^{quote}]*+)*+"
    return body + (quote if closed else f"{quote}?")
