"""Query tags: the ``key=value`` pairs applications put in a statement's comments.

Two forms are read, in a comment before the statement's first token or after its last
(:func:`~quanta.analysis.fingerprint.edge_comments`, the fingerprint's own tokenizer):

* sqlcommenter (https://google.github.io/sqlcommenter/spec/): ``key='value'`` pairs
  separated by commas, keys and values URL-encoded, values in single quotes (a ``\\'``
  inside stands for a quote): ``/*action='checkout',route='%2Fcart',framework='django'*/``;
* plain lists: ``key=value`` or ``key:value`` items separated by commas or spaces, as
  Rails' marginalia (``/*controller:cart,action:show*/``) and hand-written comments
  (``/* service=billing, team=payments */``, ``-- job=nightly``) write them.

Keys are lower-cased and must look like names (letters, digits, ``_ . -``); a comment that
holds anything else (a sentence, a percona-toolkit checksum marker) gives no tags. Keys are
cut at :data:`MAX_KEY_CHARS`, values at :data:`MAX_VALUE_CHARS`. Tags never change a
fingerprint: comments leave no trace in it.

A statement's tags travel and are stored as one canonical string (:func:`canonical`):
``key=value`` pairs sorted by key, joined by ``,``, with ``%``, ``,`` and ``=`` in values
percent-encoded; '' when there are none. :func:`bounded` keeps the configured keys and caps
the distinct values per key (past the cap a value is :data:`OTHER`).

Example:
    >>> parse_tags("SELECT 1 /*action='checkout',route='%2Fcart'*/")
    {'action': 'checkout', 'route': '/cart'}
    >>> canonical({"team": "payments", "service": "billing"})
    'service=billing,team=payments'
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from functools import lru_cache
from urllib.parse import unquote

from quanta.analysis.fingerprint import edge_comments
from quanta.analysis.fingerprinter import literal_mask
from quanta.analysis.sqltext.spec import WHITESPACE, CommentKind, block_comment_kind

__all__ = [
    "DEFAULT_TAG_KEYS",
    "MAX_KEY_CHARS",
    "MAX_TAGS_CHARS",
    "MAX_VALUE_CHARS",
    "OTHER",
    "TagCap",
    "bounded",
    "canonical",
    "comment_tags",
    "from_canonical",
    "parse_tags",
    "tag_pair",
    "tags_of",
]

MAX_KEY_CHARS = 32
MAX_VALUE_CHARS = 100
# The longest canonical string stored (the bucket column's width); pairs past it are left
# out, whole, from the last key on.
MAX_TAGS_CHARS = 500
# What a value past the per-key cap is stored as.
OTHER = "other"
# Kept unless the install says otherwise (QUANTA_TAG_KEYS): sqlcommenter's keys that name
# code (not its per-request traceparent/tracestate), and the usual hand-written ones.
DEFAULT_TAG_KEYS = (
    "action", "application", "controller", "db_driver", "endpoint", "framework", "job",
    "route", "service", "team",
)  # fmt: skip

_KEY = r"[A-Za-z_][A-Za-z0-9_.\-]*"
# sqlcommenter: key='value' (the key URL-encoded, so %xx may appear in it too); a whole
# comment is such pairs separated by commas.
_COMMENTER_ITEM = r"\s*([A-Za-z0-9_.%\-]+)\s*=\s*'((?:[^'\\]|\\.)*+)'\s*"
_COMMENTER_PAIR = re.compile(_COMMENTER_ITEM)
_COMMENTER = re.compile(rf"{_COMMENTER_ITEM}(?:,{_COMMENTER_ITEM})*+")
_ESCAPED = re.compile(r"\\(.)")
# key=value (the value may hold ":", as a URL or host:port does) or key:value.
_PLAIN_PAIR = re.compile(rf"({_KEY})(?:=([^\s,=]+)|:([^\s,=:]+))")
_PLAIN_SEPARATOR = re.compile(r"[\s,]+")
_KEY_RE = re.compile(_KEY)
_ENCODED = str.maketrans({"%": "%25", ",": "%2C", "=": "%3D"})


def parse_tags(sql: str) -> dict[str, str]:
    """The tags of a statement, from its leading and trailing comments (a later comment's
    value wins for a key both give).

    Example:
        >>> parse_tags("/* service=billing, team:payments */ SELECT 1")
        {'service': 'billing', 'team': 'payments'}
        >>> parse_tags("SELECT '/* team=x */'")
        {}
    """
    # Most statements carry no comment: answered without tokenizing.
    if "/*" not in sql and "#" not in sql and "--" not in sql:
        return {}
    tags: dict[str, str] = {}
    comments = edge_comments(sql) if "#" in sql or "--" in sql else _block_comments(sql)
    for comment in comments:
        tags.update(_cached_comment_tags(_body(comment)))
    return tags


def _block_comments(sql: str) -> list[str]:
    """:func:`~quanta.analysis.fingerprint.edge_comments` of a statement with ``/* */``
    comments only, without tokenizing it (this runs per statement in the agent):

    * the leading ones need no lexer: a comment ends at the first ``*/`` (they do not nest);
    * a trailing one is taken from the statement's literal mask (the fingerprint cache's
      key, C code), in which strings are markers and a comment that leaves no trace is
      ``\x03``: when the mask ends with one, the statement ends with a comment, which starts
      at its last ``/*`` unless another ``/*`` follows the previous ``*/`` (then the
      tokenizer decides).
    """
    found: list[str] = []
    position = _skip_space(sql, 0)
    while sql.startswith("/*", position) and _plain_opener(sql, position):
        end = sql.find("*/", position + 2)
        if end < 0:
            return found  # unclosed: no comment, and nothing after it
        found.append(sql[position : end + 2])
        position = _skip_space(sql, end + 2)
    tail = sql.rstrip(_TRAILING)
    if not tail.endswith("*/") or len(tail) <= position:
        return found
    mask = literal_mask(sql).rstrip(_TRAILING)
    trailing: list[str] = []
    # Each "\x03" ending the mask is a comment ending the statement (a "*/" in a string or
    # closing a hint is not one).
    while mask.endswith("\x03") and tail.endswith("*/") and len(tail) > position:
        start = tail.rfind("/*", position, len(tail) - 2)
        if start < 0 or not _plain_opener(tail, start):
            break
        previous = tail.rfind("*/", position, len(tail) - 2)
        # (From the character before it: "/*/" opens a comment.)
        if tail.find("/*", max(position, previous - 1), start) >= 0:
            # Another "/*" since the previous "*/": in a string before the comment, or in
            # the comment itself; only the tokenizer can tell.
            return edge_comments(sql)
        trailing.append(tail[start:])
        tail = tail[:start].rstrip(_SPACE)
        mask = mask[:-1].rstrip(_SPACE)
    return found + trailing[::-1]


def _lone_trailing_comment(sql: str) -> str | None:
    """The comment ending a statement with no other ``/*`` in it (marginalia's and
    sqlcommenter's shape), or None for any other shape.

    A faster :func:`_block_comments` for the common case, by searches in C: its backward
    searches and slices cost a tagged statement 7 us, a fifth of the agent's CPU on a log
    where a third of the statements are tagged. The only ``/*`` opens the comment the
    literal mask says ends the statement (one that is in a string cannot be it).
    """
    start = sql.find("/*")
    if start < 0 or sql.find("/*", start + 2) >= 0:
        return None
    comment = sql[start : len(sql.rstrip(_TRAILING))]
    if (
        not _closed_plain_comment(comment)
        or start == _skip_space(sql, 0)  # a leading comment too: _block_comments decides
        or not literal_mask(sql).rstrip(_TRAILING).endswith("\x03")
    ):
        return None
    return comment


def _closed_plain_comment(text: str) -> bool:
    """``text`` is one closed ``/* */`` comment that leaves no trace."""
    return len(text) >= 4 and text.endswith("*/") and _plain_opening(text[:4])


@lru_cache(maxsize=64)
def _plain_opening(opening: str) -> bool:
    # By its first four characters, remembered: block_comment_kind was a third of the
    # time of a tagged statement's tags_of.
    return _plain_opener(opening, 0)


# Comment bodies whose canonical tags are remembered (the agent's per-statement path): a
# call site's comment comes back with every call, but a per-request one (sqlcommenter's
# traceparent) is seen once and only takes room; 4,096 of them held 1.4 MB of the agent's
# import (tracemalloc, bench/agent_memory.py's log), which must stay under 100 MB.
_CANONICAL_CACHE_SIZE = 1024

# The server's whitespace; and ";" ending a statement.
_SPACE = "".join(sorted(WHITESPACE))
_TRAILING = _SPACE + ";"


def _skip_space(sql: str, position: int) -> int:
    while position < len(sql) and sql[position] in _SPACE:
        position += 1
    return position


def _plain_opener(sql: str, position: int) -> bool:
    """The ``/*`` at ``position`` opens a comment that leaves no trace (not ``/*!``,
    ``/*M!`` or a ``/*+`` hint)."""
    return block_comment_kind(sql, position) is CommentKind.PLAIN


def tags_of(sql: str, keys: frozenset[str] | None = None) -> str:
    """The canonical string of a statement's tags ('' for none): a bucket's dimension.

    With ``keys``, only those keys' tags: what an agent folds by, since a key whose value
    changes per request (sqlcommenter's ``traceparent``) would make each statement a bucket.

    Example:
        >>> tags_of("SELECT 1 /* team=payments, service=billing */")
        'service=billing,team=payments'
        >>> tags_of("SELECT 1 /*traceparent='00-4bf9-01',route='%2Fcart'*/", frozenset({"route"}))
        'route=/cart'
    """
    if "/*" not in sql and "#" not in sql and "--" not in sql:
        return ""
    if "#" in sql or "--" in sql:
        comments = edge_comments(sql)
    else:
        lone = _lone_trailing_comment(sql)
        if lone is not None:  # the usual shape of tagged statements
            return _cached_canonical(lone[2:-2], keys)
        comments = _block_comments(sql)
    if len(comments) == 1:  # the usual case: one comment, its canonical string remembered
        return _cached_canonical(_body(comments[0]), keys)
    return canonical(_kept(parse_tags(sql), keys))


@lru_cache(maxsize=_CANONICAL_CACHE_SIZE)
def _cached_canonical(body: str, keys: frozenset[str] | None) -> str:
    # Not through _cached_comment_tags: a body would be remembered twice.
    return canonical(_kept(comment_tags(body), keys))


def _kept(tags: dict[str, str], keys: frozenset[str] | None) -> dict[str, str]:
    return tags if keys is None else {key: value for key, value in tags.items() if key in keys}


@lru_cache(maxsize=4096)
def _cached_comment_tags(body: str) -> tuple[tuple[str, str], ...]:
    # Most comments come back again and again (one per route or job): parsed once.
    return tuple(comment_tags(body).items())


def comment_tags(body: str) -> dict[str, str]:
    """The tags of one comment's text (its ``/* */``, ``#`` or ``--`` removed): the
    sqlcommenter form if the whole text is in it, else a plain list if the whole text is one.

    Example:
        >>> comment_tags("controller:cart,action:show")
        {'controller': 'cart', 'action': 'show'}
        >>> comment_tags("just a note")
        {}
    """
    text = body.strip()
    if not text:
        return {}
    pairs = _commenter_pairs(text)
    if pairs is None:
        pairs = _plain_pairs(text)
    tags: dict[str, str] = {}
    for key, value in pairs or ():
        key = key.lower()[:MAX_KEY_CHARS]
        value = value.strip()[:MAX_VALUE_CHARS]
        if _KEY_RE.fullmatch(key) and value:
            tags[key] = value
    return tags


def _body(comment: str) -> str:
    if comment.startswith("/*"):
        return comment[2:-2]
    return comment[1:] if comment.startswith("#") else comment[2:]


def _commenter_pairs(text: str) -> list[tuple[str, str]] | None:
    """sqlcommenter's pairs, or None when the text is not wholly in its form."""
    if "'" not in text or _COMMENTER.fullmatch(text) is None:
        return None
    return [(_decoded(key), _decoded(value)) for key, value in _COMMENTER_PAIR.findall(text)]


def _decoded(text: str) -> str:
    """A sqlcommenter key or value: meta-escaped quotes, then URL encoding, undone."""
    if "\\" in text:
        text = _ESCAPED.sub(r"\1", text)
    return unquote(text) if "%" in text else text


def _plain_pairs(text: str) -> list[tuple[str, str]] | None:
    """``key=value`` / ``key:value`` items, or None when any item is something else."""
    pairs = []
    # "key = value" and "key: value" are one item: close the gaps around the separator.
    for item in _PLAIN_SEPARATOR.split(re.sub(r"\s*([=:])\s*", r"\1", text)):
        if not item:
            continue
        match = _PLAIN_PAIR.fullmatch(item)
        if match is None:
            return None
        pairs.append((match[1], match[2] or match[3]))
    return pairs


def canonical(tags: Mapping[str, str]) -> str:
    """The stored form of tags: sorted ``key=value`` pairs joined by ``,``, values encoded,
    at most MAX_TAGS_CHARS long ('' for none).

    Example:
        >>> canonical({"route": "/a,b"})
        'route=/a%2Cb'
    """
    parts: list[str] = []
    size = 0
    for key in sorted(tags):
        part = f"{key}={tags[key].translate(_ENCODED)}"
        size += len(part) + (1 if parts else 0)
        if size > MAX_TAGS_CHARS:
            break
        parts.append(part)
    return ",".join(parts)


def from_canonical(text: str) -> dict[str, str]:
    """The tags of a canonical string (:func:`canonical`'s inverse).

    Example:
        >>> from_canonical("route=/a%2Cb,team=x")
        {'route': '/a,b', 'team': 'x'}
    """
    if not text:
        return {}
    tags = {}
    for part in text.split(","):
        key, _, value = part.partition("=")
        tags[key] = unquote(value)
    return tags


def tag_pair(key: str, value: str) -> str:
    """One pair as it appears in a canonical string (what a filter looks for).

    Example:
        >>> tag_pair("route", "/a,b")
        'route=/a%2Cb'
    """
    return f"{key}={value.translate(_ENCODED)}"


class TagCap:
    """The values each key has had on one instance, and the cap on how many it may have.

    Args:
        known: Per key, the values already stored for the instance.
        limit: At most this many distinct values per key; later ones are :data:`OTHER`.
    """

    __slots__ = ("added", "known", "limit")

    def __init__(self, known: Mapping[str, Collection[str]], limit: int) -> None:
        self.known = {key: set(values) for key, values in known.items()}
        self.limit = limit
        self.added: list[tuple[str, str]] = []  # new (key, value) admitted, to record

    def admit(self, key: str, value: str) -> str:
        """The value to store for ``key``: itself while the key has room, else OTHER."""
        values = self.known.setdefault(key, set())
        if value in values or value == OTHER:
            return value
        if len(values) >= self.limit:
            return OTHER
        values.add(value)
        self.added.append((key, value))
        return value


def bounded(text: str, keys: Collection[str], cap: TagCap) -> str:
    """A canonical tag string with only ``keys`` kept and each value under ``cap``.

    Example:
        >>> cap = TagCap({}, limit=1)
        >>> bounded("request=9,team=a", {"team"}, cap), bounded("team=b", {"team"}, cap)
        ('team=a', 'team=other')
    """
    if not text:
        return ""
    tags = from_canonical(text)
    return canonical({k: cap.admit(k, v) for k, v in tags.items() if k in keys})
