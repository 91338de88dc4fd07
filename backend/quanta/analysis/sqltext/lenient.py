"""The lenient reading of SQL text: where its strings, names and comments are, never refused.

For text that is only read, never sent (fingerprints, redaction, tags): whatever the text
holds, it is read by the rules of :mod:`quanta.analysis.sqltext.spec`, and a string, name or
comment left open (a truncated example) runs to the end of the text. The fast paths
(the fingerprint's and redaction's one regular expression) are built from the same rules;
this scan is their reference, and tests check that they find the same spans.

Example:
    >>> [(s.kind.value, s.text) for s in scan("SELECT 'a' /* b */ FROM `t` -- c")]
    [('string', "'a'"), ('comment', '/* b */'), ('name', '`t`'), ('comment', '-- c')]
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass

from quanta.analysis.sqltext.spec import (
    DEFAULT_MODE,
    WORD_CHARS,
    CommentKind,
    SqlMode,
    block_comment_end,
    block_comment_kind,
    dash_starts_comment,
    line_comment_end,
    quoted_end,
)

__all__ = ["Span", "SpanKind", "scan"]


class SpanKind(enum.Enum):
    """What a span of text is."""

    STRING = "string"
    NAME = "name"
    COMMENT = "comment"  # leaves no trace: /* */, # and -- comments
    HINT = "hint"  # /*+ ... */
    EXECUTABLE = "executable"  # the opener /*!NNNNN or /*M!NNNNNN: the text after it is read


@dataclass(frozen=True, slots=True)
class Span:
    """A quoted string or name, or a comment, of a statement.

    Attributes:
        kind: What it is.
        text: As written (quotes and comment marks included).
        start: Offset of its first character.
        end: Offset just after its last character.
    """

    kind: SpanKind
    text: str
    start: int
    end: int


def scan(sql: str, mode: SqlMode = DEFAULT_MODE) -> Iterator[Span]:
    """The strings, quoted names and comments of ``sql``, in order; never refuses.

    Args:
        sql: Any text.
        mode: The sql_mode flags that change the quotes (ANSI_QUOTES, NO_BACKSLASH_ESCAPES).
    """
    position, length = 0, len(sql)
    strings, names = mode.string_quotes, mode.name_quotes
    while position < length:
        char = sql[position]
        end: int | None
        if char in strings or char in names:
            kind = SpanKind.STRING if char in strings else SpanKind.NAME
            end = quoted_end(sql, position, escapes=mode.escapes(char))
        elif char == "#" or dash_starts_comment(sql, position):
            kind, end = SpanKind.COMMENT, line_comment_end(sql, position)
            end -= sql.startswith("\n", end - 1)  # the newline is not the comment's
        elif sql.startswith("/*", position):
            kind, end = _block_comment(sql, position)
        else:
            position = _skip_word(sql, position) if char in WORD_CHARS else position + 1
            continue
        end = length if end is None else end
        yield Span(kind, sql[position:end], position, end)
        position = end


def _block_comment(sql: str, position: int) -> tuple[SpanKind, int | None]:
    comment = block_comment_kind(sql, position)
    if comment is CommentKind.EXECUTABLE:
        end = position + 2
        end += 1 if sql[end] == "!" else 2  # "!" or "M!"
        while end < len(sql) and sql[end] in "0123456789":
            end += 1
        return SpanKind.EXECUTABLE, end
    kind = SpanKind.HINT if comment is CommentKind.HINT else SpanKind.COMMENT
    return kind, block_comment_end(sql, position)


def _skip_word(sql: str, position: int) -> int:
    # A word is read whole so that nothing inside it starts a token ("a--b" aside: "-" is
    # no word character, so "--" is checked where it stands).
    while position < len(sql) and sql[position] in WORD_CHARS:
        position += 1
    return position
