"""SQL text: the one owner of how MySQL/MariaDB statement text is split into tokens.

* :mod:`~quanta.analysis.sqltext.spec`: the lexical rules (quotes and escapes under each
  ``sql_mode``, comments, executable comments and hints, whitespace, names), one function
  per rule and the same rules as regular-expression fragments for the fast paths;
* :mod:`~quanta.analysis.sqltext.strict`: the guard's lexer, which refuses what it cannot
  read exactly as the server does;
* :mod:`~quanta.analysis.sqltext.idents`: :func:`quote_ident` and :func:`unquote_ident`.

The lenient readers (fingerprint, redaction, tags) build their scanners from the spec.

Example:
    >>> from quanta.analysis.sqltext import lex, quote_ident
    >>> [t.text for t in lex("SELECT `a``b` FROM t")], quote_ident("a`b")
    (['SELECT', '`a``b`', 'FROM', 't'], '`a``b`')
"""

from quanta.analysis.sqltext.idents import quote_ident, unquote_ident
from quanta.analysis.sqltext.spec import WHITESPACE, CommentKind, SqlMode
from quanta.analysis.sqltext.strict import SESSION_SQL_MODE, LexRefusal, Token, TokenKind, lex

__all__ = [
    "SESSION_SQL_MODE",
    "WHITESPACE",
    "CommentKind",
    "LexRefusal",
    "SqlMode",
    "Token",
    "TokenKind",
    "lex",
    "quote_ident",
    "unquote_ident",
]
