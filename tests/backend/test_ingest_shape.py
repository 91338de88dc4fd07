"""The walk that measures a batch before pydantic builds it (quanta.ingest.shape): exact at
every limit whatever the strings hold, and a refusal that says where."""

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quanta.ingest.shape import (
    MAX_MEMBERS,
    MAX_NESTED_ITEMS,
    Malformed,
    ShapeLimits,
    TooMany,
    check_shape,
)

LIMITS = ShapeLimits(default_items=5, items={"events": 3}, max_values=4000)
EVENT = {"ts": "2026-01-01T00:00:00Z", "query": "SELECT 1", "query_time": 0.1}
# Strings that would fool a count of raw bytes: brackets, commas, quotes and escapes.
TRICKY = 'a,b],[{"x":1},{ \\" \\\\" ] } , [ \\u005d'


def body(**members: Any) -> bytes:
    return json.dumps({"batch_id": "b", "instance": "i", **members}).encode()


ACCEPTED = {
    "no rows": body(),
    "events at the limit": body(events=[EVENT] * 3),
    "tricky strings": body(events=[{**EVENT, "query": TRICKY}] * 3),
    "tricky keys": body(events=[{TRICKY: TRICKY}] * 3),
    "other lists at the default": body(queries=[{"q": 1}] * 5, picks=[{"s": {"a": 1}}] * 5),
    "columns at the default": body(buckets={"count": [1] * 5, "db": [TRICKY] * 5}),
    "a digest's histogram": body(
        digests=[{"histogram": [{"low": 0, "high": 1, "count": 2}] * 450}] * 2
    ),
    "whitespace everywhere": b' { "events" : [ { "a" : 1 } , { } ,\n{ } ] , "x" : null }\r\n',
    "empty containers": body(events=[], buckets={}, digests=[{"histogram": []}]),
}

REFUSED: dict[str, tuple[bytes, type[Exception], str]] = {
    "one event too many": (body(events=[EVENT] * 4), TooMany, "events has more than 3 items"),
    "tricky strings, one too many": (
        body(events=[{**EVENT, "query": TRICKY}] * 4),
        TooMany,
        "events has more than 3 items",
    ),
    "a list past the default": (body(queries=[{}] * 6), TooMany, "queries has more than 5"),
    "a column past the default": (
        body(buckets={"db": ["a"] * 6}),
        TooMany,
        "buckets.db has more than 5 items",
    ),
    "scalars then too many rows": (body(events=[1, 2, {}, {}]), TooMany, "events has more"),
    "too many members at the top": (
        body(**{f"k{n}": n for n in range(MAX_MEMBERS)}),
        TooMany,
        "body has more than 64 members",
    ),
    "a row wider than any": (
        body(events=[{f"k{n}": n for n in range(MAX_MEMBERS + 1)}]),
        Malformed,
        "events.0 is not JSON, or nests deeper or is wider",
    ),
    "a nested list longer than a histogram": (
        body(digests=[{"histogram": [0] * (MAX_NESTED_ITEMS + 1)}]),
        Malformed,
        "digests.0 is not JSON",
    ),
    "rows nested too deep": (
        body(events=[EVENT, [[[[1]]]]]),
        Malformed,
        "events.1 is not JSON, or nests deeper",
    ),
    "the same key twice": (
        b'{"events": [], "events": []}',
        Malformed,
        '"events" appears twice',
    ),
    "not an object": (b"[1, 2]", Malformed, "a batch is a JSON object"),
    "nothing": (b"", Malformed, "a batch is a JSON object"),
    "data after the batch": (b'{"a": 1} {"b": 2}', Malformed, "data after"),
    "truncated": (body(events=[EVENT])[:-3], Malformed, "Invalid batch"),
    "unterminated string": (b'{"events": ["abc]}', Malformed, "Invalid batch"),
    "a missing colon": (b'{"events" []}', Malformed, "expected a member of body"),
    "too many values": (body(x=[[0] * 900] * 5), TooMany, "more than 4000 values"),
}


@pytest.mark.parametrize("raw", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_accepted_shapes(raw: bytes) -> None:
    check_shape(raw, LIMITS)


@pytest.mark.parametrize(("raw", "error", "says"), REFUSED.values(), ids=REFUSED.keys())
def test_refused_shapes_say_where(raw: bytes, error: type[Exception], says: str) -> None:
    with pytest.raises(error) as raised:
        check_shape(raw, LIMITS)
    assert says in str(raised.value)


def test_the_values_bound_counts_no_string_content() -> None:
    """Commas and brackets inside strings do not count towards max_values."""
    crowded = body(events=[{"query": "," * 3000 + "[{" * 1500}])
    check_shape(crowded, LIMITS)


json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
    st.text(alphabet=st.sampled_from(list(',[]{}":\\ \n\tab\u00e9\u2028')), max_size=12),
)  # fmt: skip
rows = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
).filter(lambda row: _depth(row) <= 3)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


@settings(max_examples=300, database=None)
@given(
    events=st.lists(rows, max_size=6),
    indent=st.sampled_from([None, 1]),
    ascii_only=st.booleans(),
)
def test_the_walk_counts_rows_exactly(
    events: list[Any], indent: int | None, ascii_only: bool
) -> None:
    """Any rows up to three levels deep, with any strings: refused iff there are too many."""
    text = json.dumps({"batch_id": "b", "events": events}, indent=indent, ensure_ascii=ascii_only)
    raw = text.encode("utf-8", "surrogatepass")
    limits = ShapeLimits(default_items=10, items={"events": 3})
    if len(events) > 3:
        with pytest.raises(TooMany):
            check_shape(raw, limits)
    else:
        check_shape(raw, limits)
