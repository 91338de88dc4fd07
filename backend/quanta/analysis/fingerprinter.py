"""Fingerprint a stream of statements fast by remembering the shapes already seen.

A log holds the same few hundred statement shapes over and over with different literals.
:class:`Fingerprinter` masks the literals with one regular expression (much cheaper than
:func:`~quanta.analysis.fingerprint.fingerprint`'s full pass) and looks the masked text up;
only a shape it has not seen yet is fingerprinted in full.

This is only correct if two statements with the same masked text always have the same
fingerprint. The masking therefore replaces a span only where the fingerprint's tokenizer
reads exactly that span as one literal whatever its value: a quoted string (one marker per
quote character, since ``x'..'`` and ``x".."`` tokenize differently), or a number standing
alone after a separator, matched with the tokenizer's own possessive rules; and a ``/* */``
comment, which leaves no trace whatever it says (the comments frameworks append, such as
``/*controller:cart,action:show*/``, would otherwise defeat the cache). Everything else,
executable comments and quoted names included, stays verbatim in the key, which can only
make the cache miss more often, never answer wrongly. A percona-toolkit checksum query,
recognised by a comment, is never cached. Tests check the property on every fingerprint case
and on random statements.

Example:
    >>> fingerprinter = Fingerprinter()
    >>> fingerprinter("SELECT * FROM t WHERE id = 7")
    ('select * from t where id=?', 'B8E7A3EAFD5D7B47')
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from quanta.analysis import native
from quanta.analysis.fingerprint import PT_CHECKSUM_RE, fingerprint, query_id
from quanta.analysis.grouping import GroupingRule, apply_rules
from quanta.analysis.sqltext.spec import quoted_pattern

__all__ = [
    "DEFAULT_CACHE_SIZE",
    "Fingerprinter",
    "cache_key",
    "literal_mask",
    "literal_spans",
]

# Distinct masked shapes remembered; past this the cache starts over (bounded memory).
DEFAULT_CACHE_SIZE = 20_000

# A number standing alone after a separator, read with the tokenizer's own possessive rules.
_NUMBER = r"""
    (?<=[\s(,=<>!+\-*/%|&^~:;])
    (?:0x[0-9a-f]++|0b[01]++|\d++(?:\.\d*+)?+(?:[eE][+-]?\d++)?+|\.\d++(?:[eE][+-]?\d++)?+)
    (?![\w$.])
"""
# Closed strings only (an unclosed one stays verbatim), by quanta.analysis.sqltext.spec's rules;
# the C masker (_literal_mask.c) scans the same rules by hand and tests compare the two.
_SINGLE = quoted_pattern("'", escapes=True)
_DOUBLE = quoted_pattern('"', escapes=True)
_STRING = f"{_SINGLE}|{_DOUBLE}"
# One row of a VALUES list with no parentheses, quoted names or comments in it.
_ROW = rf"""\((?:[^()'"`/\#\-]++|-(?!-)|{_STRING})*+\)"""
# The leading lookahead lets most positions fail at once: twice as fast as without it.
_MASK_RE = re.compile(
    rf"""(?=[`/\#\-'"0-9.vV])(?:
      (?P<values>(?P<first_row>\b[vV][aA][lL][uU][eE][sS]?\s*+{_ROW})(?:\s*+,\s*+{_ROW})++)
    | (?P<comment>/\*(?!!|[mM]!).*?\*/)    # leaves no trace, unless executable (/*! /*M!)
    | (?P<keep>`[^`]*+`|/\*.*?\*/|\#[^\n]*+|--[^\n]*+)             # verbatim in the key
    | (?P<single>{_SINGLE})
    | (?P<double>{_DOUBLE})
    | (?P<numbers>{_NUMBER}(?:\s*+,\s*+{_NUMBER})++)    # 2 or more: '?, ...' however many
    | (?P<number>{_NUMBER})
    )""",
    re.VERBOSE | re.DOTALL,
)
_MARKERS = {
    "single": "\x00",
    "double": "\x01",
    "number": "\x02",
    "comment": "\x03",
    "numbers": "\x04",
}


_CMasker = Callable[[str], str | None]
# The C masker (quanta.analysis.native): the regular expression below, as a scan of an
# ASCII statement, several times faster; it answers None for any other text. The
# expression stays the reference and the fallback; tests compare the two.
_literal_mask_c: _CMasker | None = (
    native.literal_mask.literal_mask if native.literal_mask is not None else None
)


def _mask(match: re.Match[str]) -> str:
    group = match.lastgroup
    if group == "values":
        # A fingerprint drops every row of a VALUES list after the first, whatever it holds:
        # one marker for them, and a long multi-row INSERT costs no more than one row.
        return _MASK_RE.sub(_mask, match["first_row"]) + "\x05"
    return match.group() if group == "keep" or group is None else _MARKERS[group]


def literal_mask(sql: str) -> str:
    """Return the statement with its literals replaced by markers: the cache key.

    Example:
        >>> literal_mask("SELECT 'a' FROM t1 WHERE id = 42")
        'SELECT \\x00 FROM t1 WHERE id = \\x02'
    """
    key = _literal_mask_c(sql) if _literal_mask_c is not None else None
    return key if key is not None else _literal_mask_python(sql)


def _literal_mask_python(sql: str) -> str:
    """:func:`literal_mask` by the regular expression: the reference, and any text."""
    return _MASK_RE.sub(_mask, sql)


def literal_spans(text: str) -> Iterator[tuple[int, int]]:
    """The (start, end) of each literal :func:`literal_mask` replaces: quoted strings and
    numbers (a comma-separated run of numbers is one span), for masking other text the same
    way (plans, see :mod:`quanta.analysis.plan_mask`). Comments and quoted names are no
    literals; a multi-row VALUES list is one span.

    Example:
        >>> [(s, e) for s, e in literal_spans("a = 'x' AND b = 42")]
        [(4, 7), (16, 18)]
    """
    for match in _MASK_RE.finditer(text):
        if match.lastgroup not in (None, "keep", "comment"):
            yield match.span()


def cache_key(sql: str) -> str | None:
    """The key a statement's class is remembered by: its :func:`literal_mask`, or None for a
    percona-toolkit checksum query, told by a comment the mask drops (never remembered)."""
    if "/*" in sql and PT_CHECKSUM_RE.search(sql):
        return None
    return literal_mask(sql)


class Fingerprinter:
    """Callable giving ``(fingerprint, query_id)`` of a statement, with grouping rules applied.

    Args:
        rules: Grouping rules applied to every fingerprint (see :mod:`quanta.analysis.grouping`).
        cache_size: How many distinct shapes to remember.
    """

    __slots__ = ("_cache", "_cache_size", "_rules")

    def __init__(
        self, rules: Sequence[GroupingRule] = (), cache_size: int = DEFAULT_CACHE_SIZE
    ) -> None:
        self._rules = tuple(rules)
        self._cache_size = cache_size
        self._cache: dict[str, tuple[str, str]] = {}

    def __call__(self, sql: str) -> tuple[str, str]:
        """Return the fingerprint of ``sql`` and its query_id."""
        key = cache_key(sql)
        if key is None:
            text = apply_rules(fingerprint(sql), self._rules)
            return text, query_id(text)
        known = self._cache.get(key)
        if known is not None:
            return known
        text = apply_rules(fingerprint(sql), self._rules)
        if len(self._cache) >= self._cache_size:
            self._cache.clear()
        known = self._cache[key] = (text, query_id(text))
        return known
