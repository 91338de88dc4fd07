"""A cheap look at a batch's JSON before it is validated: its rows counted, its size bounded.

pydantic builds the whole document in memory before it checks how long a list is: a 162 KB
gzip body of 1,000,000 tiny events took the API from 527 to 1,721 MB only to be told it was
too large. :func:`check_shape` walks the top of the document (the batch's members, and the
members of an object such as ``buckets``) and measures each list with regular expressions
that run in C: a list is matched item by item up to its limit and no further, and nothing is
built per value. A body past a limit is refused after reading at most the limit's worth of
items, so a request costs memory in proportion to what could be accepted.

What it enforces, before pydantic sees the body:
- the document is a JSON object whose lists hold at most their limit of items (``events``
  its own, every other list the default), at any place in the object's top two levels;
- values nest at most three levels below such a list (a digest's histogram buckets are the
  deepest a batch goes);
- objects at the top two levels have at most ``max_members`` members, no key twice at the top;
- the whole document holds at most ``max_values`` values (array items and object members).
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache

__all__ = ["Malformed", "ShapeError", "ShapeLimits", "TooMany", "check_shape"]


class ShapeError(ValueError):
    """The body is refused before validation; the message says why."""


class TooMany(ShapeError):
    """A list, an object or the whole document is past its limit."""


class Malformed(ShapeError):
    """Not JSON, or nested deeper than any batch."""


@dataclass(frozen=True, slots=True)
class ShapeLimits:
    """How big each part of a batch may be."""

    default_items: int
    items: Mapping[str, int] = field(default_factory=dict)  # a top-level list's own limit
    max_values: int = 3_000_000

    def items_for(self, key: str) -> int:
        """The limit of the list under ``key``."""
        return self.items.get(key, self.default_items)


MAX_MEMBERS = 64
"""Members of an object of a batch: the widest row (a performance_schema digest) has 45."""
MAX_NESTED_ITEMS = 1000
"""Items of a list inside a row: a digest's latency histogram has 450 buckets."""

_WS = rb"[ \t\n\r]*+"
_STRING = rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
# Numbers, true, false, null (and whatever else pydantic will refuse: it says why).
_SCALAR = rb'[^"\[\]{},: \t\n\r]++'


def _container(inner: bytes) -> bytes:
    """A JSON value whose objects and lists hold values matching ``inner``, within the
    member and item limits (possessive throughout: no backtracking, linear time)."""
    member = _STRING + _WS + b":" + _WS + inner + _WS
    more_members = b"{0,%d}+" % (MAX_MEMBERS - 1)
    more_items = b"{0,%d}+" % (MAX_NESTED_ITEMS - 1)
    obj = rb"\{" + _WS + b"(?:" + member + b"(?:," + _WS + member + b")" + more_members + rb")?+\}"
    arr = rb"\[" + _WS + b"(?:" + inner + _WS + b"(?:," + _WS + inner + _WS + b")"
    arr += more_items + rb")?+\]"
    return b"(?:" + _STRING + b"|" + _SCALAR + b"|" + obj + b"|" + arr + b")"


_SCALAR_ROW = b"(?:" + _STRING + b"|" + _SCALAR + b")"  # a column's values
_MEMBER = _STRING + _WS + b":" + _WS + _SCALAR_ROW + _WS
_FLAT_ROW = (  # an event, a query class, a table's statistics
    rb"\{" + _WS + b"(?:" + _MEMBER + b"(?:," + _WS + _MEMBER + b")"
    + b"{0,%d}+" % (MAX_MEMBERS - 1) + rb")?+\}"
)  # fmt: skip
# The deepest a row goes: a digest, whose histogram's buckets are objects in a list in it.
_ROW = _container(_container(_container(_SCALAR_ROW)))
# Tried in turn on a list; the simpler patterns are several times faster.
_ROW_PATTERNS = (_SCALAR_ROW, _FLAT_ROW, _ROW)

_STRINGS = re.compile(_STRING, re.DOTALL)
_KEY = re.compile(_WS + b"(" + _STRING + b")" + _WS + b":" + _WS, re.DOTALL)
_VALUE = re.compile(_ROW, re.DOTALL)
_SPACE = re.compile(_WS)


@cache
def _rows_up_to(row: bytes, limit: int) -> re.Pattern[bytes]:
    """A list's opening and at most ``limit`` rows, without its closing bracket."""
    more = b"{0,%d}+" % max(limit - 1, 0)
    body = row + _WS + b"(?:," + _WS + row + _WS + b")" + more
    return re.compile(rb"\[" + _WS + b"(?:" + body + b")?+", re.DOTALL)


@cache
def _row(row: bytes) -> re.Pattern[bytes]:
    return re.compile(row, re.DOTALL)


@dataclass(slots=True)
class _Walk:
    raw: bytes
    limits: ShapeLimits

    def space(self, pos: int) -> int:
        match = _SPACE.match(self.raw, pos)
        assert match is not None  # the pattern matches the empty string
        return match.end()

    def object(self, pos: int, path: str, depth: int) -> int:
        """Walk the object at ``pos`` (its ``{``); return the position after it."""
        pos = self.space(pos + 1)
        members = 0
        seen: set[bytes] = set()
        if self.raw[pos : pos + 1] == b"}":
            return pos + 1
        while True:
            key_match = _KEY.match(self.raw, pos)
            if key_match is None:
                raise Malformed(f"Invalid batch: expected a member of {path} (byte {pos}).")
            quoted = key_match[1]
            if depth == 0 and quoted in seen:
                raise Malformed(f"Invalid batch: {quoted.decode(errors='replace')} appears twice.")
            seen.add(quoted)
            members += 1
            if members > MAX_MEMBERS:
                raise TooMany(f"{path} has more than {MAX_MEMBERS} members.")
            key = quoted[1:-1].decode(errors="replace")
            name = f"{path}.{key}" if path != "body" else key
            pos = self.value(key_match.end(), key, name, depth + 1)
            pos = self.space(pos)
            delimiter = self.raw[pos : pos + 1]
            if delimiter == b"}":
                return pos + 1
            if delimiter != b",":
                raise Malformed(f"Invalid batch: {name} is not followed by , or }} (byte {pos}).")
            pos += 1

    def value(self, pos: int, key: str, path: str, depth: int) -> int:
        """Walk the value at ``pos``: lists measured, the top two levels' objects walked."""
        first = self.raw[pos : pos + 1]
        if first == b"[":
            return self.array(pos, self.limits.items_for(key), path)
        if first == b"{" and depth < 2:
            return self.object(pos, path, depth)
        match = _VALUE.match(self.raw, pos)
        if match is None or match.end() == pos:
            raise Malformed(f"Invalid batch: {path} is not JSON or nests too deep (byte {pos}).")
        return match.end()

    def array(self, pos: int, limit: int, path: str) -> int:
        """Measure the list at ``pos`` up to its limit; return the position after it."""
        for row in _ROW_PATTERNS:
            match = _rows_up_to(row, limit).match(self.raw, pos)
            assert match is not None  # it starts at a [
            end = match.end()
            after = self.raw[end : end + 1]
            if after == b"]":
                return end + 1
            if after == b"," and _count_rows(row, self.raw[pos + 1 : end]) >= limit:
                raise TooMany(f"{path} has more than {limit} items; the limit is {limit}.")
        index = _count_rows(_ROW, self.raw[pos + 1 : end])
        raise Malformed(
            f"Invalid batch: {path}.{index} is not JSON, or nests deeper or is wider than any "
            f"row of a batch (byte {end})."
        )


def _count_rows(row: bytes, span: bytes) -> int:
    """Rows in ``span``, the well-formed rows of a list and the commas between them."""
    return _row(row).subn(b"", span)[1]


def _more_values_than(raw: bytes, limit: int) -> bool:
    """Whether the document holds more than ``limit`` values (items, members, containers).
    The bound counts the commas and brackets of strings too: it is exact only when past
    ``limit``, so the strings are taken out (a slower pass) only then."""

    def count(text: bytes) -> int:
        return text.count(b",") + text.count(b"[") + text.count(b"{") + 1

    return count(raw) > limit and count(_STRINGS.sub(b"0", raw)) > limit


def check_shape(raw: bytes, limits: ShapeLimits) -> None:
    """Refuse a batch whose lists, objects or values are past ``limits``, before anything is
    built from it; raise TooMany or Malformed with a message that says where.

    Example:
        >>> limits = ShapeLimits(default_items=10, items={"events": 2})
        >>> check_shape(b'{"batch_id": "b", "events": [{}, {}]}', limits)
        >>> try:
        ...     check_shape(b'{"events": [{}, {}, {}]}', limits)
        ... except TooMany as exc:
        ...     print(exc)
        events has more than 2 items; the limit is 2.
    """
    walk = _Walk(raw, limits)
    pos = walk.space(0)
    if raw[pos : pos + 1] != b"{":
        raise Malformed("Invalid batch: a batch is a JSON object.")
    pos = walk.space(walk.object(pos, "body", 0))
    if pos != len(raw):
        raise Malformed(f"Invalid batch: data after the batch's closing brace (byte {pos}).")
    if _more_values_than(raw, limits.max_values):
        raise TooMany(
            f"Batch holds more than {limits.max_values} values; send fewer rows per batch."
        )
