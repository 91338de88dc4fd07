"""Existing indexes worth dropping: duplicates, redundant prefixes, unused ones.

The rules are pt-duplicate-key-checker's:

* duplicate: two indexes hold the same columns in the same order (directions and prefix
  lengths included). On InnoDB the comparison is of what the index really holds, with the
  primary key as implicit suffix: ``(a)`` and ``(a, id)`` are one index when ``id`` is the
  primary key. The longer definition (else the later one) goes; a unique one never goes for
  a non-unique one.
* redundant: an index whose columns are a left-most prefix of another B-tree index (the
  primary key included): every lookup it serves, the longer one serves.
* primary-key suffix: an InnoDB secondary index that ends with the primary key's columns
  spells out what InnoDB appends anyway; redefine it without them.

A unique index is never reported redundant or unused: it enforces a constraint. FULLTEXT
and SPATIAL indexes are left alone. Unused: given usage counts for a table, an index with a
count of 0, or missing from the counts (MariaDB's INDEX_STATISTICS lists only used indexes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from quanta.analysis.advisor.engine import BTREE, effective_parts, quote_name
from quanta.analysis.advisor.schema import Index, IndexPart, Table

__all__ = ["FindingKind", "IndexFinding", "review_table"]


class FindingKind(StrEnum):
    """Why an existing index can go."""

    DUPLICATE = "duplicate"
    REDUNDANT = "redundant"
    PRIMARY_KEY_SUFFIX = "primary_key_suffix"
    UNUSED = "unused"


@dataclass(frozen=True)
class IndexFinding:
    """One existing index to drop (or redefine), the index that covers for it, and the DDL."""

    table: str
    index: str
    kind: FindingKind
    covered_by: str
    ddl: str
    reason: str


def review_table(table: Table, usage: Mapping[str, int] | None = None) -> list[IndexFinding]:
    """Find the duplicate, redundant and unused indexes of one table.

    Args:
        table: The table's snapshot.
        usage: Reads per index name since statistics began, if known; an index missing
            from a given mapping counts as unused.

    Returns:
        At most one finding per index, in the order of the table's indexes.

    Example:
        >>> from quanta.analysis.advisor.schema import parse_schema
        >>> table = parse_schema({"server": {"flavor": "mysql", "version": "8.0.36"},
        ...     "tables": {"db.t": {"columns": {"id": {"type": "int"}, "a": {"type": "int"}},
        ...         "primary_key": ["id"], "indexes": [
        ...             {"name": "a1", "columns": ["a"]}, {"name": "a2", "columns": ["a", "id"]}]}}}
        ...     ).tables["db.t"]
        >>> [(f.index, f.kind.value, f.covered_by) for f in review_table(table)]
        [('a2', 'duplicate', 'a1')]
    """
    candidates = [i for i in table.indexes if i.kind == BTREE]
    # Duplicates first, then prefixes among what is left: so of two indexes that are one
    # (a) and (a, id) on InnoDB, exactly one goes.
    findings: dict[str, IndexFinding] = {}
    for check in (_duplicate, _redundant):
        for index in candidates:
            if index.name not in findings:
                kept = [i for i in candidates if i.name not in findings and i is not index]
                finding = check(index, table, kept)
                if finding is not None:
                    findings[index.name] = finding
    for index in candidates:
        if index.name not in findings:
            finding = _primary_key_suffix(index, table)
            if finding is None and usage is not None:
                finding = _unused(index, table, usage)
            if finding is not None:
                findings[index.name] = finding
    return [findings[i.name] for i in candidates if i.name in findings]


def _duplicate(index: Index, table: Table, others: list[Index]) -> IndexFinding | None:
    mine = effective_parts(index, table)
    primary = table.primary
    for other in [*others, *([primary] if primary else [])]:
        if effective_parts(other, table) == mine and _goes_before(index, other, table.indexes):
            reason = (
                f"{index.name} holds the same columns as {other.name}{_implicit(index, table)}."
            )
            return _finding(table, index, FindingKind.DUPLICATE, other.name, reason)
    return None


def _redundant(index: Index, table: Table, others: list[Index]) -> IndexFinding | None:
    if index.unique:
        return None
    primary = table.primary
    for other in [*others, *([primary] if primary else [])]:
        if len(index.parts) < len(other.parts) and other.parts[: len(index.parts)] == index.parts:
            reason = (
                f"{index.name} ({_columns(index)}) is a left-most prefix of {other.name} "
                f"({_columns(other)}), which serves every lookup it serves."
            )
            return _finding(table, index, FindingKind.REDUNDANT, other.name, reason)
    return None


def _goes_before(index: Index, other: Index, order: Sequence[Index]) -> bool:
    """Of two duplicates, which to drop: never a unique one for a non-unique one."""
    if index.unique != other.unique:
        return other.unique
    if len(index.parts) != len(other.parts):
        return len(index.parts) > len(other.parts)
    if other.name == "primary":
        return True
    return order.index(index) > order.index(other)


def _implicit(index: Index, table: Table) -> str:
    if table.clustered and index.name != "primary":
        return f" (InnoDB appends the primary key {', '.join(table.primary_key)} to both)"
    return ""


def _primary_key_suffix(index: Index, table: Table) -> IndexFinding | None:
    key = table.primary_key
    if not table.clustered or index.unique or len(index.parts) <= len(key):
        return None
    tail = index.parts[-len(key) :]
    if tuple(p.name for p in tail) != key or any(p.desc or p.sub_part for p in tail):
        return None
    kept = ", ".join(_part(p) for p in index.parts[: -len(key)])
    name = quote_name(index.name)
    ddl = f"ALTER TABLE {_table(table)} DROP INDEX {name}, ADD INDEX {name} ({kept})"
    reason = (
        f"{index.name} ends with the primary key ({', '.join(key)}), which InnoDB appends to "
        "every secondary index anyway; define it without those columns."
    )
    return IndexFinding(
        table.name, index.name, FindingKind.PRIMARY_KEY_SUFFIX, "primary", ddl, reason
    )


def _unused(index: Index, table: Table, usage: Mapping[str, int]) -> IndexFinding | None:
    if index.unique or usage.get(index.name, 0) > 0:
        return None
    reason = (
        f"{index.name} has not been read since the statistics began; check replicas and "
        "monthly jobs before dropping it."
    )
    return _finding(table, index, FindingKind.UNUSED, "", reason)


def _finding(
    table: Table, index: Index, kind: FindingKind, covered_by: str, reason: str
) -> IndexFinding:
    ddl = f"ALTER TABLE {_table(table)} DROP INDEX {quote_name(index.name)}"
    return IndexFinding(table.name, index.name, kind, covered_by, ddl, reason)


def _table(table: Table) -> str:
    return ".".join(quote_name(part) for part in table.name.split(".", 1))


def _part(part: IndexPart) -> str:
    sub_part = f"({part.sub_part})" if part.sub_part else ""
    return quote_name(part.name) + sub_part + (" DESC" if part.desc else "")


def _columns(index: Index) -> str:
    return ", ".join(_part(p) for p in index.parts)
