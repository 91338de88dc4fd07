"""Mask literal values in stored plans, so a plan shows no data the example did not hold.

A plan is more than the statement: while optimising, the server reads const tables (a
primary-key or unique lookup by a constant) and writes the row's values into the other
tables' conditions. ``SELECT o.* FROM orders o JOIN secrets s ON s.id = 1 WHERE o.note =
s.value`` shows ``o.note = 'the secret'`` in ``attached_condition``: anyone who can put a
statement into a log reads any value the monitoring account can. So every literal in a plan
is masked to ``?`` unless the instance keeps full examples *and* the same literal appears in
the example that was explained (the viewer sees that text anyway). Under the ``masked`` and
``off`` example policies every literal is masked.

The literals are found by the fingerprint's own literal masking
(:func:`quanta.analysis.fingerprinter.literal_spans`), on text where comment starters are
neutralised first: a plan is not SQL, and its ``select#2`` must not hide the rest of a
condition as a ``#`` comment would.

Example:
    >>> doc = {"attached_condition": "o.note = 'TOPSECRET' and o.id = 7"}
    >>> mask_plan(doc, example="SELECT * FROM orders o WHERE o.id = 7")
    {'attached_condition': 'o.note = ? and o.id = 7'}
    >>> mask_plan(doc, example=None)
    {'attached_condition': 'o.note = ? and o.id = ?'}
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, TypeVar

from quanta.analysis.fingerprinter import literal_spans

__all__ = ["MASK", "mask_plan", "mask_text"]

MASK = "?"
_T = TypeVar("_T")
# Fields whose strings are the server's own figures, never values from a table or the query.
_FIGURES = frozenset(
    (
        "id",
        "select_id",
        "key_len",
        "key_length",
        "filtered",
        "rows",
        "read_cost",
        "eval_cost",
        "prefix_cost",
        "query_cost",
        "sort_cost",
        "data_read_per_join",
        "cost",
    )
)
# Comment starters become same-length text the literal scan ignores, so spans still align.
_COMMENT_STARTS = re.compile(r"#|--|/\*")
_NUMBER_RUN = re.compile(r"\s*,\s*")


def mask_plan(plan: _T, *, example: str | None) -> _T:
    """The plan (tabular rows, a FORMAT=JSON or ANALYZE document) with its literals masked.

    Args:
        plan: Any JSON-like value: dicts, lists, strings, numbers.
        example: The statement that was explained when the instance keeps full examples
            (its literals may stay), or None to mask every literal.

    Returns:
        A new value of the same shape; numbers and the server's own figures are kept.
    """
    allowed = _literals(example) if example is not None else frozenset()
    return _walk(plan, allowed, key="")  # type: ignore[no-any-return]


def mask_text(text: str, *, example: str | None) -> str:
    """One condition or plan string with its literals masked (see :func:`mask_plan`).

    Example:
        >>> mask_text("(`s`.`id` = 1) and (`o`.`note` = 'k')", example=None)
        '(`s`.`id` = ?) and (`o`.`note` = ?)'
    """
    allowed = _literals(example) if example is not None else frozenset()
    return _masked(text, allowed)


def _walk(value: Any, allowed: frozenset[str], key: str) -> Any:
    if isinstance(value, dict):
        return {k: _walk(v, allowed, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(item, allowed, key) for item in value]
    if isinstance(value, str) and key not in _FIGURES:
        return _masked(value, allowed)
    return value


def _masked(text: str, allowed: frozenset[str]) -> str:
    # A leading space lets a number that starts the text count as standing alone.
    padded = " " + text
    scanned = _COMMENT_STARTS.sub(lambda m: "\x06" * len(m.group()), padded)
    out: list[str] = []
    last = 0
    for start, end in literal_spans(scanned):
        out.append(padded[last:start])
        literal = padded[start:end]
        out.append(literal if _known(literal, allowed) else MASK)
        last = end
    out.append(padded[last:])
    return "".join(out)[1:]


def _known(literal: str, allowed: frozenset[str]) -> bool:
    values = _NUMBER_RUN.split(literal) if literal[:1] not in "'\"" else [literal]
    return bool(allowed) and all(_value(v) in allowed for v in values)


def _literals(example: str) -> frozenset[str]:
    return frozenset(_values(example[start:end] for start, end in literal_spans(example)))


def _values(literals: Iterable[str]) -> Iterable[str]:
    for literal in literals:
        if literal[:1] in "'\"":
            yield _value(literal)
        else:
            yield from (_value(v) for v in _NUMBER_RUN.split(literal))


def _value(literal: str) -> str:
    """A literal's value as text: quotes removed and escapes undone; numbers as written."""
    quote = literal[:1]
    if quote in "'\"" and len(literal) >= 2:
        body = literal[1:-1].replace(quote * 2, quote)
        return "s:" + re.sub(r"\\(.)", r"\1", body, flags=re.DOTALL)
    return "n:" + literal.lower()
