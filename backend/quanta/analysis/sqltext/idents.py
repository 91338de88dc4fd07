"""Quoting names: the one way Quanta writes a name into SQL and reads it back.

A name is written in backticks with inner backticks doubled, which the server reads back
as the same name under every ``sql_mode`` (ANSI_QUOTES changes ``"``, never the backtick).

Example:
    >>> quote_ident("shop-prod"), quote_ident("a`b")
    ('`shop-prod`', '`a``b`')
    >>> unquote_ident("`a``b`")
    'a`b'
"""

from __future__ import annotations

from quanta.analysis.sqltext.strict import LexRefusal

__all__ = ["quote_ident", "unquote_ident"]

_NUL = "\x00"


def quote_ident(name: str, *, lenient: bool = False) -> str:
    """The name in backticks, inner backticks doubled.

    Args:
        name: The name, unquoted (any characters).
        lenient: For text that is only shown or compared (a fingerprint), never sent:
            any character is kept.

    Raises:
        LexRefusal: (strict, the default) the name holds a NUL character, which no server
            name can hold and which the guard refuses in any statement.

    Example:
        >>> quote_ident("order items")
        '`order items`'
    """
    if not lenient and _NUL in name:
        raise LexRefusal("a name has a NUL character: no server name can, so it is not sent")
    return "`" + name.replace("`", "``") + "`"


def unquote_ident(text: str) -> str:
    """The name a backticked identifier stands for; other text is returned as it is.

    Lenient: an unclosed one (a truncated statement) runs to the end of the text.

    Example:
        >>> unquote_ident("`t``1`"), unquote_ident("orders"), unquote_ident("`cut")
        ('t`1', 'orders', 'cut')
    """
    if not text.startswith("`"):
        return text
    body = text[1:]
    # Inner backticks are doubled, so an odd run of them at the end holds the closing one.
    if (len(body) - len(body.rstrip("`"))) % 2:
        body = body[:-1]
    return body.replace("``", "`")
